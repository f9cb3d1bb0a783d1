// Exercise 8.2 — a solution (the task: exercises/08/2.hpp).
//
// Why it works: only the cell changes. The score, the weights and the context read s_{j−1}, which the LSTM still
// gives, so (8.1)–(8.3) are untouched, and the cell's input is still [E y_{j−1}; c_j]. Inside the cell the GRU's three
// blocks of rows (r, z, n) become four (i, f, g, o), and the GRU's one-line update s′ = (1 − z) ⊙ n + z ⊙ s becomes
// two: the memory cell m′ = f ⊙ m + i ⊙ g, then s′ = o ⊙ tanh(m′). So the DecoderState carries the memory cell besides
// s_j (DecoderState::c, one per layer), and it has to start somewhere: from the encoder's final memory cell, which the
// annotations do not contain — h_i is the LSTM's hidden state o ⊙ tanh(m_i), from which m_i cannot be read back.
// That is why decoder->step() takes a whole DecoderState and models::Encoded passes the encoder's c_final along.
#include "exercises/08/2.hpp"

#include <cmath>
#include <variant>

namespace yours {

using attend::Tensor;

namespace {

// Σ_k W[row, k] v_k
double row_times(const Tensor<double>& W, std::size_t row, const std::vector<double>& v) {
  double sum = 0;
  for (std::size_t k = 0; k < v.size(); ++k) sum += W.at({row, k}) * v[k];
  return sum;
}

double sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

// Row `row` of an embedding table.
std::vector<double> embedding_row(const Tensor<double>& table, std::int64_t row) {
  std::vector<double> x(table.shape()[1]);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = table.at({static_cast<std::size_t>(row), k});
  return x;
}

}  // namespace

std::array<std::vector<double>, 2> lstm_step(const attend::nn::LstmCell<double>& cell, const std::vector<double>& x,
                                             const std::vector<double>& s, const std::vector<double>& m) {
  const Tensor<double>& W_ih = cell.W_ih.value;  // (4H, in): [W_i; W_f; W_g; W_o]
  const Tensor<double>& W_hh = cell.W_hh.value;  // (4H, H): [U_i; U_f; U_g; U_o]
  const Tensor<double>& b_ih = cell.b_ih.value;
  const Tensor<double>& b_hh = cell.b_hh.value;
  const std::size_t H = s.size();
  // the pre-activation of gate `gate` (0 i, 1 f, 2 g, 3 o) at unit k
  const auto gate = [&](std::size_t g, std::size_t k) {
    const std::size_t row = g * H + k;
    return row_times(W_ih, row, x) + b_ih.at({row}) + row_times(W_hh, row, s) + b_hh.at({row});
  };
  std::vector<double> s_next(H), m_next(H);
  for (std::size_t k = 0; k < H; ++k) {
    const double i = sigmoid(gate(0, k)), f = sigmoid(gate(1, k)), g = std::tanh(gate(2, k)), o = sigmoid(gate(3, k));
    m_next[k] = f * m[k] + i * g;          // m′ = f ⊙ m + i ⊙ g
    s_next[k] = o * std::tanh(m_next[k]);  // s′ = o ⊙ tanh(m′)
  }
  return {s_next, m_next};
}

std::array<std::vector<double>, 2> decoder_step(const attend::models::BahdanauDecoder<double>& decoder,
                                                std::int64_t y_prev, const std::vector<double>& c_j,
                                                const std::vector<double>& s_prev, const std::vector<double>& m_prev) {
  // (8.4): the cell's input [E y_{j-1}; c_j], as with the GRU
  std::vector<double> input = embedding_row(decoder.embedding.W.value, y_prev);
  input.insert(input.end(), c_j.begin(), c_j.end());
  return lstm_step(std::get<attend::nn::LstmCell<double>>(decoder.cells[0]), input, s_prev, m_prev);
}

std::array<std::vector<double>, 2> initial_state(const attend::nn::Encoder<double>& encoder,
                                                 const std::vector<std::int64_t>& source) {
  const auto& cell = std::get<attend::nn::LstmCell<double>>(encoder.rnn.cells[0][0]);
  const std::size_t H = cell.hidden_size();
  std::array<std::vector<double>, 2> state{std::vector<double>(H, 0.0), std::vector<double>(H, 0.0)};  // h_0 = m_0 = 0
  for (const std::int64_t w_i : source) {
    state = lstm_step(cell, embedding_row(encoder.embedding.W.value, w_i), state[0], state[1]);  // h_i, m_i
  }
  return state;  // (h_Tx, m_Tx): the decoder's s_0 and m_0
}

}  // namespace yours
