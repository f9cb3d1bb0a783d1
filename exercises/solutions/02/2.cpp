// Exercise 2.2 — a solution (the task: exercises/02/2.hpp).
//
// From h_0 = 0 only the recurrent biases b_h remain of the U h + b_h terms; from h_1 on, every gate also reads the
// previous state through its block of W_hh, U_gate = rows [gate·H, (gate+1)·H). Two places need care. The reset gate
// multiplies the whole U_n h + b_hn, after the product (PyTorch's convention; Cho et al. write U (r ⊙ h), which differs
// as soon as h ≠ 0). And z weighs the old state: h′ = (1 − z) ⊙ n + z ⊙ h, so z near 1 keeps h — Bahdanau et al.'s
// appendix swaps z and 1 − z. Neither mistake shows at h = 0, where U h = 0 and z ⊙ h = 0: a check of the first step
// alone cannot tell the conventions apart, the second step can.
#include "exercises/02/2.hpp"

#include <cmath>

namespace yours {

std::vector<double> gru_step_by_hand(const attend::nn::GruCell<double>& gru, const std::vector<double>& x,
                                     const std::vector<double>& h) {
  const std::size_t H = gru.hidden_size(), E = gru.input_size();
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  auto gate_input = [&](std::size_t gate, std::size_t k) {  // (W_gate x + b_i,gate)_k
    double s = gru.b_ih.value.data()[gate * H + k];
    for (std::size_t e = 0; e < E; ++e) s += gru.W_ih.value.at({gate * H + k, e}) * x[e];
    return s;
  };
  auto gate_state = [&](std::size_t gate, std::size_t k) {  // (U_gate h + b_h,gate)_k
    double s = gru.b_hh.value.data()[gate * H + k];
    for (std::size_t l = 0; l < H; ++l) s += gru.W_hh.value.at({gate * H + k, l}) * h[l];
    return s;
  };
  std::vector<double> h_next(H);
  for (std::size_t k = 0; k < H; ++k) {
    const double r = sigmoid(gate_input(0, k) + gate_state(0, k));        // (2.3)
    const double z = sigmoid(gate_input(1, k) + gate_state(1, k));        // (2.4)
    const double n = std::tanh(gate_input(2, k) + r * gate_state(2, k));  // (2.5): r ⊙ (U_n h + b_hn)
    h_next[k] = (1 - z) * n + z * h[k];                                   // (2.6)
  }
  return h_next;
}

}  // namespace yours
