// Exercise 4.3 — a solution (the task: exercises/04/3.hpp).
//
// Yes: the untrained LSTM forgets x_1 geometrically too — log ‖J_1‖ falls on a straight line in T_x, by a factor ρ of
// about 0.63 per token, the GRU's rate (chapter 4: a tenth per 5 tokens). The memory cell does not help at
// initialisation: its path alone multiplies the gradient by f at each step, and an untrained forget gate sits near
// σ(0) = ½ (f̄ ≈ 0.5), since its weights and biases are small. ρ comes out above f̄ because the memory cell is not the
// only path: x_1 also reaches h_Tx through h and the gates at every step, and those paths add to it. A gated cell can
// carry x_1 unchanged (f = 1, i = 0), but only once training has set its gates so; before, the gradient that is to
// teach it so is itself geometric in T_x. That is why LSTMs are often started with a forget-gate bias of 1 (Jozefowicz
// et al. 2015): σ(1) ≈ 0.73 per step instead of ½.
#include "exercises/04/3.hpp"

#include <cmath>

namespace yours {

using namespace attend;

// Chapter 4's J_i = ∂h_Tx/∂x_i for every source b of a batch of sources of equal length and every position i:
// (B, T_x, H, E), one backward pass per component k of h_Tx.
Tensor<double> jacobians(nn::Encoder<double>& encoder, const Ids& ids) {
  Tape<double> tape;
  const Variable<double> x = tape.leaf(encoder.embedding(tape, ids).value());
  const Variable<double> h_Tx = encoder.rnn.forward(x).h_final[0];
  const std::size_t B = ids.shape()[0], T_x = ids.shape()[1], H = h_Tx.shape()[1], E = x.shape()[2];
  Tensor<double> J(Shape{B, T_x, H, E});
  for (std::size_t k = 0; k < H; ++k) {
    Tensor<double> seed(Shape{B, H});
    for (std::size_t b = 0; b < B; ++b) seed.at({b, k}) = 1;
    tape.backward(h_Tx, seed);
    const Tensor<double> dx = x.grad();
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t i = 0; i < T_x; ++i) {
        for (std::size_t e = 0; e < E; ++e) J.at({b, i, k, e}) = dx.at({b, i, e});
      }
    }
  }
  encoder.zero_grad();
  return J;
}

double influence_of_x1(nn::Encoder<double>& encoder, const Ids& sources) {
  const Tensor<double> J = jacobians(encoder, sources);
  const std::size_t B = J.shape()[0], T_x = J.shape()[1], HE = J.shape()[2] * J.shape()[3];
  double mean = 0;
  for (std::size_t b = 0; b < B; ++b) {
    const double* J_1 = J.data() + b * T_x * HE;  // position i = 1 of source b
    double squares = 0;
    for (std::size_t k = 0; k < HE; ++k) squares += J_1[k] * J_1[k];
    mean += std::sqrt(squares) / static_cast<double>(B);  // (4.4)
  }
  return mean;
}

double decay_per_token(const std::vector<double>& lengths, const std::vector<double>& influence) {
  // least squares: slope = Σ (T − T̄)(y − ȳ) / Σ (T − T̄)², y = log influence
  const double n = static_cast<double>(lengths.size());
  double T_mean = 0, y_mean = 0;
  for (std::size_t k = 0; k < lengths.size(); ++k) {
    T_mean += lengths[k] / n;
    y_mean += std::log(influence[k]) / n;
  }
  double covariance = 0, variance = 0;
  for (std::size_t k = 0; k < lengths.size(); ++k) {
    covariance += (lengths[k] - T_mean) * (std::log(influence[k]) - y_mean);
    variance += (lengths[k] - T_mean) * (lengths[k] - T_mean);
  }
  return std::exp(covariance / variance);
}

double mean_forget_gate(nn::Encoder<double>& encoder, const Ids& sources) {
  nn::LstmCell<double>& cell = std::get<nn::LstmCell<double>>(encoder.rnn.cells[0][0]);
  const std::size_t B = sources.shape()[0], T_x = sources.shape()[1], H = cell.hidden_size();
  Tape<double> tape;
  const Variable<double> x = encoder.embedding(tape, sources);  // (B, T_x, E)
  LstmState<double> state{tape.constant(Tensor<double>(Shape{B, H})), tape.constant(Tensor<double>(Shape{B, H}))};
  double sum = 0;
  for (std::size_t t = 0; t < T_x; ++t) {
    const Variable<double> x_t = select(x, 1, t);
    // all four gates' pre-activations, (B, 4H): W_ih x + b_ih + W_hh h + b_hh
    const Tensor<double> gates =
        (cell.input_gates(x_t) + linear(state.h, tape.param(cell.W_hh), tape.param(cell.b_hh))).value();
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t k = 0; k < H; ++k) sum += 1 / (1 + std::exp(-gates.at({b, H + k})));  // f, rows [H, 2H)
    }
    state = cell(x_t, state);
  }
  return sum / static_cast<double>(B * T_x * H);
}

}  // namespace yours
