// The check of exercise 6.3 (exercises/06/3.hpp): the encoder built from your configuration (seed 5) against the
// reference's and against its own final states, the score's shapes and its scores on those annotations, and the
// predicted saving against multiplications counted in loops that compute the scores of (6.1) both ways.
#include "exercises/06/3.hpp"

#include <cmath>
#include <cstdint>
#define yours reference
#include "exercises/06/3.hpp"
#undef yours
#include "exercises/check.hpp"

using namespace attend;

namespace {

std::vector<double> values(const Tensor<double>& t) { return {t.flat().begin(), t.flat().end()}; }

// Elements [first, first + n) of row r of a (…, n_last) tensor.
std::vector<double> part(const Tensor<double>& t, std::size_t r, std::size_t first, std::size_t n) {
  const std::size_t width = t.shape()[t.rank() - 1];
  return {t.data() + r * width + first, t.data() + r * width + first + n};
}

void check_encoder(exercise::Check& check) {
  const std::size_t T_x = 4, E = 4, H = 4;
  Rng rng(5), reference_rng(5);
  nn::Encoder<double> encoder(yours::bidirectional_config(T_x, E, H), rng);
  nn::Encoder<double> expected(reference::bidirectional_config(T_x, E, H), reference_rng);
  Tape<double> tape;
  const Ids ids(Shape{1, T_x}, {1, 2, 3, 4});
  const nn::RecurrentOutput<double> out = encoder(tape, ids, {4});
  const Tensor<double>& h = out.outputs.value();
  check.that(h.shape() == Shape{1, T_x, 2 * H}, "the annotations h_i = [h→_i ; h←_i] are (1, T_x, 2H) = (1, 4, 8)",
             to_string(h.shape()));
  if (h.shape() != Shape{1, T_x, 2 * H}) return;
  check.near("the annotations = the reference encoder's (the same seed, 5)", values(h),
             values(expected(tape, ids, {4}).outputs.value()), 0.0);
  check.near("h→_4, the forward half of h_4, = the forward direction's final state", part(h, T_x - 1, 0, H),
             values(out.h_final[0].value()), 0.0);
  check.near("h←_1, the backward half of h_1, = the backward direction's final state", part(h, 0, H, H),
             values(out.h_final[1].value()), 0.0);
}

// The scores of one sentence computed both ways, every multiplication counted: U_a h_i at every step, or once.
double counted(std::size_t T_x, std::size_t T_y, std::size_t Q, std::size_t K, std::size_t A, bool once) {
  Rng rng(63);
  const Tensor<double> W = rng.normal_tensor<double>(Shape{A, Q}, 0, 1),
                       U = rng.normal_tensor<double>(Shape{A, K}, 0, 1), v = rng.normal_tensor<double>(Shape{A}, 0, 1),
                       h = rng.normal_tensor<double>(Shape{T_x, K}, 0, 1),
                       s = rng.normal_tensor<double>(Shape{T_y, Q}, 0, 1);
  std::uint64_t multiplications = 0;
  std::vector<double> keys(T_x * A);
  auto compute_keys = [&] {  // (6.3) U_a h_i for every i
    for (std::size_t i = 0; i < T_x; ++i)
      for (std::size_t a = 0; a < A; ++a) {
        keys[i * A + a] = 0;
        for (std::size_t k = 0; k < K; ++k, ++multiplications) keys[i * A + a] += U.at({a, k}) * h.at({i, k});
      }
  };
  if (once) compute_keys();
  double total = 0;  // kept, so that the loops compute something
  for (std::size_t j = 0; j < T_y; ++j) {
    if (!once) compute_keys();
    std::vector<double> W_a_s(A, 0.0);  // (6.2)
    for (std::size_t a = 0; a < A; ++a)
      for (std::size_t q = 0; q < Q; ++q, ++multiplications) W_a_s[a] += W.at({a, q}) * s.at({j, q});
    for (std::size_t i = 0; i < T_x; ++i)
      for (std::size_t a = 0; a < A; ++a, ++multiplications) total += v.at({a}) * std::tanh(W_a_s[a] + keys[i * A + a]);
  }
  return std::isfinite(total) ? static_cast<double>(multiplications) : -1.0;
}

}  // namespace

int main() {
  exercise::Check check("6.3", "a bidirectional encoder under the score");
  check.run("the bidirectional encoder", [&] { check_encoder(check); });
  check.run("the score for K = 2H", [&] {
    const std::size_t H = 4, A = 3;
    Rng rng(6), reference_rng(6);
    models::AdditiveScore<double> score = yours::bidirectional_score(H, A, rng);
    models::AdditiveScore<double> expected = reference::bidirectional_score(H, A, reference_rng);
    check.that(score.W_a.value.shape() == Shape{A, H}, "W_a multiplies s_{j−1}, of size Q = H: (A, H) = (3, 4)",
               to_string(score.W_a.value.shape()));
    check.that(score.U_a.value.shape() == Shape{A, 2 * H}, "U_a multiplies h_i, of size K = 2H: (A, 2H) = (3, 8)",
               to_string(score.U_a.value.shape()));
    check.that(score.v_a.value.shape() == Shape{1, A}, "v_a: (1, A) = (1, 3)", to_string(score.v_a.value.shape()));
    // the chapter's scores at step j = 1 from s_0 = h←_1, through the bidirectional annotations
    Rng encoder_rng(5);
    nn::Encoder<double> encoder(reference::bidirectional_config(4, 4, H), encoder_rng);
    Tape<double> tape;
    const nn::RecurrentOutput<double> out = encoder(tape, Ids(Shape{1, 4}, {1, 2, 3, 4}), {4});
    const Variable<double> h = tape.constant(out.outputs.value()), s_0 = tape.constant(out.h_final[1].value());
    check.near("e_i1 = v_aᵀ tanh(W_a s_0 + U_a h_i) over h_i = [h→_i ; h←_i], s_0 = h←_1: = the reference's",
               values(score.score(s_0, score.keys(h)).value()), values(expected.score(s_0, expected.keys(h)).value()),
               0.0);
  });
  struct Sizes {
    const char* name;
    std::size_t T_x, T_y, Q, K, A;
  };
  const Sizes sizes[] = {
      {"the chapter's T_x = T_y = 4, Q = K = 4, A = 3", 4, 4, 4, 4, 3},
      {"bidirectional: T_x = T_y = 4, Q = 4, K = 2H = 8, A = 3", 4, 4, 4, 8, 3},
      {"another case: T_x = 7, T_y = 5, Q = 6, K = 10, A = 9", 7, 5, 6, 10, 9},
      {"another case: T_y = 1, T_x = 5, Q = 3, K = 4, A = 2", 5, 1, 3, 4, 2},
  };
  for (const Sizes& z : sizes) {
    check.run(std::string(z.name) + ": the saving", [&] {
      const double measured = counted(z.T_x, z.T_y, z.Q, z.K, z.A, false) - counted(z.T_x, z.T_y, z.Q, z.K, z.A, true);
      check.near(
          std::string(z.name) + ": your saving = multiplications counted at every step − once",
          yours::saved_multiplications(static_cast<double>(z.T_x), static_cast<double>(z.T_y), static_cast<double>(z.Q),
                                       static_cast<double>(z.K), static_cast<double>(z.A)),
          measured, 0.0);
    });
  }
  return check.verdict();
}
