// Exercise 2.1 — a solution (the task: exercises/02/1.hpp).
//
// Only the cell changes. (2.1) is the same embedding; (2.2) is the same loop, with a pair (h_i, m_i) carried instead of
// h_i; the GRU's (2.3)–(2.6) give way to the LSTM's four gates and two updates. (2.7) does not change: the context is
// still the last hidden state h_Tx — the memory cell m_Tx stays inside the encoder (nn::Encoder returns it apart, as
// c_final, PyTorch's c_n), which is why the letter m is used for it here. With h_0 = m_0 = 0 the first step's U h terms
// vanish as the GRU's did, and so does f ⊙ m_0: m_1 = i ⊙ g, whatever the forget gate says; from the second step on f
// decides how much of m_{i−1} survives, and only a step from a non-zero state tests it.
#include "exercises/02/1.hpp"

#include <cmath>

namespace yours {

using namespace attend;

std::vector<LstmState<double>> lstm_loop(Tape<double>& tape, nn::Embedding<double>& embed, nn::LstmCell<double>& lstm,
                                         const std::vector<std::int64_t>& ids) {
  const std::size_t T_x = ids.size(), H = lstm.hidden_size();
  // (2.1)  x_i = E[w_i]: the embeddings of all tokens, (1, T_x, E)
  Ids tokens(Shape{1, T_x});
  for (std::size_t i = 0; i < T_x; ++i) tokens.data()[i] = ids[i];
  const Variable<double> x = embed(tape, tokens);
  // (2.2)  (h_i, m_i) = f(x_i, (h_{i-1}, m_{i-1})), starting from h_0 = m_0 = 0
  LstmState<double> state{tape.constant(Tensor<double>(Shape{1, H})), tape.constant(Tensor<double>(Shape{1, H}))};
  std::vector<LstmState<double>> states;
  for (std::size_t i = 0; i < T_x; ++i) {
    state = lstm(select(x, 1, i), state);
    states.push_back(state);
  }
  return states;
}

std::vector<double> context(const std::vector<LstmState<double>>& states) {
  // (2.7)  c = h_Tx: the last hidden state, not the memory cell
  const Tensor<double>& h_Tx = states.back().h.value();
  return std::vector<double>(h_Tx.data(), h_Tx.data() + h_Tx.size());
}

std::array<std::vector<double>, 2> lstm_step_by_hand(const nn::LstmCell<double>& lstm, const std::vector<double>& x,
                                                     const std::vector<double>& h, const std::vector<double>& m) {
  const std::size_t H = lstm.hidden_size(), E = lstm.input_size();
  // (W_gate x + b_i,gate + U_gate h + b_h,gate)_k: rows gate·H + k of the stacked weights
  auto pre_activation = [&](std::size_t gate, std::size_t k) {
    const std::size_t row = gate * H + k;
    double s = lstm.b_ih.value.data()[row] + lstm.b_hh.value.data()[row];
    for (std::size_t e = 0; e < E; ++e) s += lstm.W_ih.value.at({row, e}) * x[e];
    for (std::size_t l = 0; l < H; ++l) s += lstm.W_hh.value.at({row, l}) * h[l];
    return s;
  };
  auto sigmoid = [](double z) { return 1 / (1 + std::exp(-z)); };
  std::vector<double> h_next(H), m_next(H);
  for (std::size_t k = 0; k < H; ++k) {
    const double i = sigmoid(pre_activation(0, k));    // input gate
    const double f = sigmoid(pre_activation(1, k));    // forget gate
    const double g = std::tanh(pre_activation(2, k));  // candidate memory
    const double o = sigmoid(pre_activation(3, k));    // output gate
    m_next[k] = f * m[k] + i * g;                      // m′ = f ⊙ m + i ⊙ g
    h_next[k] = o * std::tanh(m_next[k]);              // h′ = o ⊙ tanh(m′)
  }
  return {h_next, m_next};
}

}  // namespace yours
