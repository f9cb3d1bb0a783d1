// The check of exercise 6.1 (exercises/06/1.hpp): e_ij by hand against models::AdditiveScore for every i and j of
// the chapter's set-up (encoder seed 5, score seed 6, stand-in states seed 7) and for weights of other sizes, and the
// e_42 worked out on paper against the library's, to what the chapter's three printed decimals allow.
#include "exercises/06/1.hpp"

#include <cmath>
#define yours reference
#include "exercises/06/1.hpp"
#undef yours
#include "exercises/chapter_encoder.hpp"
#include "exercises/check.hpp"
#include "models/attention.hpp"
#include "nn/recurrent.hpp"

using namespace attend;

namespace {

// The chapter's set-up: the annotations h_1..h_4 (1, 4, 4) and the states s_0 = h_4, s_1..s_3 (seed 7), each (1, 4).
struct SetUp {
  Variable<double> h;
  std::vector<Variable<double>> s;
};

SetUp chapter_set_up(Tape<double>& tape) {
  nn::Encoder<double> encoder = exercise::chapter_encoder();
  const nn::RecurrentOutput<double> out = encoder(tape, Ids(Shape{1, 4}, {1, 2, 3, 4}), {4});
  SetUp set_up{tape.constant(out.outputs.value()), {tape.constant(out.h_final[0].value())}};
  Rng state_rng(7);
  for (std::size_t j = 1; j < 4; ++j)
    set_up.s.push_back(tape.constant(state_rng.normal_tensor<double>(Shape{1, 4}, 0, 0.5)));
  return set_up;
}

std::vector<double> row(const Tensor<double>& t, std::size_t r) {
  const std::size_t n = t.shape()[t.rank() - 1];
  return {t.data() + r * n, t.data() + (r + 1) * n};
}

// x as the chapter prints it: three decimals.
double printed(double x) { return std::round(x * 1000) / 1000; }
Tensor<double> printed(const Tensor<double>& t) {
  Tensor<double> p(t.shape());
  for (std::size_t k = 0; k < t.size(); ++k) p.data()[k] = printed(t.data()[k]);
  return p;
}
std::vector<double> printed(std::vector<double> v) {
  for (double& x : v) x = printed(x);
  return v;
}

void check_all_scores(exercise::Check& check, const std::string& name, models::AdditiveScore<double>& score,
                      const Variable<double>& h, const std::vector<Variable<double>>& s) {
  const models::Keys<double> keys = score.keys(h);
  const std::size_t T_x = h.shape()[1];
  std::vector<double> yours, library;
  for (const Variable<double>& s_prev : s) {
    const Tensor<double> e = score.score(s_prev, keys).value();  // (1, T_x)
    for (std::size_t i = 0; i < T_x; ++i) {
      yours.push_back(yours::score_by_hand(score.W_a.value, score.U_a.value, score.v_a.value, row(s_prev.value(), 0),
                                           row(h.value(), i)));
      library.push_back(e.at({0, i}));
    }
  }
  check.near(name + ": every e_ij by hand = AdditiveScore's v_aᵀ tanh(W_a s_{j−1} + U_a h_i) (6.1)", yours, library,
             1e-14);
}

}  // namespace

int main() {
  exercise::Check check("6.1", "one score by hand");
  Tape<double> tape;
  const SetUp set_up = chapter_set_up(tape);
  Rng score_rng(6);
  models::AdditiveScore<double> score(4, 4, 3, score_rng);
  check.run("the chapter's set-up: H = 4, A = 3",
            [&] { check_all_scores(check, "the chapter's set-up: H = 4, A = 3", score, set_up.h, set_up.s); });
  check.run("another case: Q = 2, K = 6, A = 5", [&] {
    Rng rng(61);
    models::AdditiveScore<double> other(2, 6, 5, rng);
    const Variable<double> h = tape.constant(rng.normal_tensor<double>(Shape{1, 7, 6}, 0, 1));
    std::vector<Variable<double>> s;
    for (int j = 0; j < 3; ++j) s.push_back(tape.constant(rng.normal_tensor<double>(Shape{1, 2}, 0, 1)));
    check_all_scores(check, "another case: Q = 2, K = 6, A = 5, T_x = 7", other, h, s);
  });
  check.run("your e_42 on paper", [&] {
    const double library = score.score(set_up.s[1], score.keys(set_up.h)).value().at({0, 3});
    // the same score from the numbers as the chapter prints them: how far three decimals can move it
    const double from_printed =
        reference::score_by_hand(printed(score.W_a.value), printed(score.U_a.value), printed(score.v_a.value),
                                 printed(row(set_up.s[1].value(), 0)), printed(row(set_up.h.value(), 3)));
    check.near("your e_42 (i = 4 \"Area\", s_{j−1} = s_1) = the library's, to the printed decimals' rounding + 0.002",
               yours::e_42_on_paper(), library, std::abs(from_printed - library) + 0.002);
  });
  return check.verdict();
}
