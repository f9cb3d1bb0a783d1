// Exercise 4.3 — your answer (the task: exercises/04/3.hpp). Check it with `scripts/exercise 4.3`.
#include "exercises/04/3.hpp"

#include <cmath>

#include "exercises/check.hpp"

namespace yours {

using namespace attend;

// Chapter 4's J_i = ∂h_Tx/∂x_i for every source b of a batch of sources of equal length and every position i:
// (B, T_x, H, E), one backward pass per component k of h_Tx.
Tensor<double> jacobians(nn::Encoder<double>& encoder, const Ids& ids) {
  Tape<double> tape;
  // (2.1)  x_i = E[w_i]: (B, T_x, E), copied into a leaf so that backward fills its gradient
  const Variable<double> x = tape.leaf(encoder.embedding(tape, ids).value());
  // (4.2)  h_Tx = f(x_Tx, f(x_{Tx-1}, … f(x_1, h_0))): the encoder's last state, (B, H)
  const Variable<double> h_Tx = encoder.rnn.forward(x).h_final[0];
  const std::size_t B = ids.shape()[0], T_x = ids.shape()[1], H = h_Tx.shape()[1], E = x.shape()[2];
  Tensor<double> J(Shape{B, T_x, H, E});
  for (std::size_t k = 0; k < H; ++k) {
    // (4.3)  row k of every J_i: one backward pass seeded with 1 at component k of h_Tx, all sources at once
    Tensor<double> seed(Shape{B, H});
    for (std::size_t b = 0; b < B; ++b) seed.at({b, k}) = 1;
    tape.backward(h_Tx, seed);
    const Tensor<double> dx = x.grad();  // ∂h_Tx,k/∂x_i for every source and position: (B, T_x, E)
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t i = 0; i < T_x; ++i) {
        for (std::size_t e = 0; e < E; ++e) J.at({b, i, k, e}) = dx.at({b, i, e});
      }
    }
  }
  encoder.zero_grad();  // backward also added into the weights' gradients; nothing trains here
  return J;
}

double influence_of_x1(nn::Encoder<double>& encoder, const Ids& sources) {
  (void)encoder;
  (void)sources;
  throw exercise::Todo("the mean ‖J_1‖_F (4.4)");
}

double decay_per_token(const std::vector<double>& lengths, const std::vector<double>& influence) {
  (void)lengths;
  (void)influence;
  throw exercise::Todo("ρ, the fitted factor per token");
}

double mean_forget_gate(nn::Encoder<double>& encoder, const Ids& sources) {
  (void)encoder;
  (void)sources;
  throw exercise::Todo("the mean forget gate f̄");
}

}  // namespace yours
