// Exercise 8.2 — your answer (the task: exercises/08/2.hpp). Check it with `scripts/exercise 8.2`.
// lstm_step holds chapter 8's GRU step (2.3)–(2.6), reading the LSTM's tensors: change the lines that must change.
#include "exercises/08/2.hpp"

#include <cmath>
#include <variant>

#include "exercises/check.hpp"

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
  const Tensor<double>& W_ih = cell.W_ih.value;
  const Tensor<double>& W_hh = cell.W_hh.value;
  const Tensor<double>& b_ih = cell.b_ih.value;
  const Tensor<double>& b_hh = cell.b_hh.value;
  const std::size_t H = s.size();
  std::vector<double> s_next(H);
  for (std::size_t k = 0; k < H; ++k) {
    // chapter 8's GRU step: reset gate r, update gate z, candidate n, new state
    const double r = sigmoid(row_times(W_ih, k, x) + b_ih.at({k}) + row_times(W_hh, k, s) + b_hh.at({k}));
    const double z =
        sigmoid(row_times(W_ih, H + k, x) + b_ih.at({H + k}) + row_times(W_hh, H + k, s) + b_hh.at({H + k}));
    const double n = std::tanh(row_times(W_ih, 2 * H + k, x) + b_ih.at({2 * H + k}) +
                               r * (row_times(W_hh, 2 * H + k, s) + b_hh.at({2 * H + k})));
    s_next[k] = (1 - z) * n + z * s[k];
  }
  return {s_next, m};  // TODO: the LSTM's four gates i, f, g, o and its memory cell
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
  (void)encoder;
  (void)source;
  throw attend::exercise::Todo("s_0 and m_0: the encoder's LSTM run by hand over the source");
}

}  // namespace yours
