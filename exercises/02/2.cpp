// Exercise 2.2 — your answer (the task: exercises/02/2.hpp). Check it with `scripts/exercise 2.2`.
// This is the chapter's first step by hand: right from h_0 = 0, where every U h term is zero. Make it right for any h.
#include "exercises/02/2.hpp"

#include <cmath>

namespace yours {

std::vector<double> gru_step_by_hand(const attend::nn::GruCell<double>& gru, const std::vector<double>& x,
                                     const std::vector<double>& h) {
  const std::size_t H = gru.hidden_size(), E = gru.input_size();
  (void)h;
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  auto gate_input = [&](std::size_t gate, std::size_t k) {  // (W_gate x + b_i,gate)_k
    double s = gru.b_ih.value.data()[gate * H + k];
    for (std::size_t e = 0; e < E; ++e) s += gru.W_ih.value.at({gate * H + k, e}) * x[e];
    return s;
  };
  std::vector<double> h_next(H);
  for (std::size_t k = 0; k < H; ++k) {
    // (2.3)  r = σ(W_r x + b_ir + U_r h + b_hr), with h = 0
    const double r = sigmoid(gate_input(0, k) + gru.b_hh.value.data()[0 * H + k]);
    // (2.4)  z = σ(W_z x + b_iz + U_z h + b_hz), with h = 0
    const double z = sigmoid(gate_input(1, k) + gru.b_hh.value.data()[1 * H + k]);
    // (2.5)  n = tanh(W_n x + b_in + r ⊙ (U_n h + b_hn)), with h = 0
    const double n = std::tanh(gate_input(2, k) + r * gru.b_hh.value.data()[2 * H + k]);
    // (2.6)  h′ = (1 - z) ⊙ n + z ⊙ h, with h = 0
    h_next[k] = (1 - z) * n + z * 0.0;
  }
  return h_next;
}

}  // namespace yours
