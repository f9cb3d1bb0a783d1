// The check of exercise 6.2 (exercises/06/2.hpp): the biased score, from scratch and through the biased keys with the
// library's unchanged AdditiveScore::score, against v_aᵀ tanh(W_a s_{j−1} + U_a h_i + b_a) in plain loops at every
// step of the chapter's set-up and of a batch of other sizes; both gradients by attend::gradcheck.
#include "exercises/06/2.hpp"

#include <cmath>
#define yours reference
#include "exercises/06/2.hpp"
#undef yours
#include "autograd/gradcheck.hpp"
#include "exercises/chapter_encoder.hpp"
#include "exercises/check.hpp"
#include "nn/recurrent.hpp"

using namespace attend;

namespace {

struct Case {
  std::string name;
  Tensor<double> h;               // (B, T_x, K)
  std::vector<Tensor<double>> s;  // s_{j−1} for each step j: (B, Q)
  Tensor<double> b_a;             // (A)
};

// The chapter's set-up: the annotations (encoder seed 5) and the states s_0 = h_4, s_1..s_3 (seed 7).
void chapter_set_up(Case& c) {
  nn::Encoder<double> encoder = exercise::chapter_encoder();
  Tape<double> tape;
  const nn::RecurrentOutput<double> out = encoder(tape, Ids(Shape{1, 4}, {1, 2, 3, 4}), {4});
  c.h = out.outputs.value();
  c.s = {out.h_final[0].value()};
  Rng state_rng(7);
  for (std::size_t j = 1; j < 4; ++j) c.s.push_back(state_rng.normal_tensor<double>(Shape{1, 4}, 0, 0.5));
}

// e_ij = v_aᵀ tanh(W_a s_{j−1} + U_a h_i + b_a) in plain loops, every sentence b and position i: B·T_x numbers.
std::vector<double> by_loops(const models::AdditiveScore<double>& score, const Tensor<double>& b_a,
                             const Tensor<double>& s, const Tensor<double>& h) {
  const Tensor<double>&W = score.W_a.value, &U = score.U_a.value, &v = score.v_a.value;
  const std::size_t A = W.shape()[0], Q = W.shape()[1], K = U.shape()[1], B = h.shape()[0], T_x = h.shape()[1];
  std::vector<double> e(B * T_x, 0.0);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < T_x; ++i)
      for (std::size_t a = 0; a < A; ++a) {
        double sum = b_a.at({a});
        for (std::size_t q = 0; q < Q; ++q) sum += W.at({a, q}) * s.at({b, q});
        for (std::size_t k = 0; k < K; ++k) sum += U.at({a, k}) * h.at({b, i, k});
        e[b * T_x + i] += v.at({0, a}) * std::tanh(sum);
      }
  return e;
}

std::vector<double> values(const Variable<double>& v) { return {v.value().flat().begin(), v.value().flat().end()}; }

// The biased keys once, then the library's unchanged score at every step.
void check_keys(exercise::Check& check, const Case& c, models::AdditiveScore<double>& score) {
  Tape<double> tape;
  const Variable<double> h = tape.constant(c.h), b_a = tape.constant(c.b_a);
  const models::Keys<double> keys = yours::biased_keys(score, b_a, h);  // once per sentence
  check.that(keys.shape() == Shape{c.h.shape()[0], c.h.shape()[1], c.b_a.shape()[0]},
             c.name + ": the biased keys are (B, T_x, A)", to_string(keys.shape()));
  for (std::size_t j = 0; j < c.s.size(); ++j) {
    check.near(c.name + ", j = " + std::to_string(j + 1) +
                   ": AdditiveScore::score(s_{j−1}, your keys) = v_aᵀ tanh(W_a s_{j−1} + U_a h_i + b_a)",
               values(score.score(tape.constant(c.s[j]), keys)), by_loops(score, c.b_a, c.s[j], c.h), 1e-14);
  }
}

// The biased score from scratch at every step.
void check_scratch(exercise::Check& check, const Case& c, models::AdditiveScore<double>& score) {
  Tape<double> tape;
  const Variable<double> h = tape.constant(c.h), b_a = tape.constant(c.b_a);
  for (std::size_t j = 0; j < c.s.size(); ++j) {
    check.near(c.name + ", j = " + std::to_string(j + 1) + ": biased_score = v_aᵀ tanh(W_a s_{j−1} + U_a h_i + b_a)",
               values(yours::biased_score(score, b_a, tape.constant(c.s[j]), h)), by_loops(score, c.b_a, c.s[j], c.h),
               1e-14);
  }
}

void check_gradients(exercise::Check& check, const Case& c, models::AdditiveScore<double>& score) {
  const std::vector<NamedParameter> params{{"W_a", &score.W_a}, {"U_a", &score.U_a}, {"v_a", &score.v_a}};
  const GradcheckResult from_scratch = gradcheck(
      [&](Tape<double>&, const std::vector<Variable<double>>& in) {
        return yours::biased_score(score, in[0], in[2], in[1]);
      },
      {c.b_a, c.h, c.s.back()}, {}, params);
  check.that(from_scratch.passed, c.name + ": gradcheck of biased_score in b_a, h, s_{j−1}, W_a, U_a, v_a",
             from_scratch.passed ? "largest |analytic − numeric| " + exercise::number(from_scratch.worst_abs_error)
                                 : from_scratch.message);
  const GradcheckResult through_keys = gradcheck(
      [&](Tape<double>&, const std::vector<Variable<double>>& in) {
        return score.score(in[2], yours::biased_keys(score, in[0], in[1]));
      },
      {c.b_a, c.h, c.s.back()}, {}, params);
  check.that(through_keys.passed, c.name + ": gradcheck of score(s_{j−1}, your keys) in b_a, h, s_{j−1}, W_a, U_a, v_a",
             through_keys.passed ? "largest |analytic − numeric| " + exercise::number(through_keys.worst_abs_error)
                                 : through_keys.message);
}

}  // namespace

int main() {
  exercise::Check check("6.2", "a bias in the score, at no cost per step");
  Case chapter{"the chapter's set-up (H = 4, A = 3)", {}, {}, {}};
  chapter_set_up(chapter);
  Rng rng(62);
  chapter.b_a = rng.normal_tensor<double>(Shape{3}, 0, 0.5);
  Rng score_rng(6);
  models::AdditiveScore<double> score(4, 4, 3, score_rng);
  Case other{"another case: B = 2, Q = 3, K = 5, A = 6, T_x = 4",
             rng.normal_tensor<double>(Shape{2, 4, 5}, 0, 1),
             {rng.normal_tensor<double>(Shape{2, 3}, 0, 1), rng.normal_tensor<double>(Shape{2, 3}, 0, 1)},
             rng.normal_tensor<double>(Shape{6}, 0, 1)};
  models::AdditiveScore<double> other_score(3, 5, 6, rng);
  for (Case* c : {&chapter, &other}) {
    models::AdditiveScore<double>& its_score = c == &chapter ? score : other_score;
    check.run(c->name + ": through your keys", [&] { check_keys(check, *c, its_score); });
    check.run(c->name + ": from scratch", [&] { check_scratch(check, *c, its_score); });
    check.run(c->name + ": gradients", [&] { check_gradients(check, *c, its_score); });
  }
  return check.verdict();
}
