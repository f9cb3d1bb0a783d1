// Exercise 9.1 — your answer (the task: exercises/09/1.hpp). Check it with `scripts/exercise 9.1`.
// state_by_hand is chapter 9's step_by_hand (tutorials/09-luong.cpp), reading its inputs from the DecoderState.
#include "exercises/09/1.hpp"

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

}  // namespace

std::vector<double> state_by_hand(const attend::models::LuongDecoder<double>& decoder, std::int64_t y_prev,
                                  const attend::models::DecoderState<double>& state) {
  const auto& cell = std::get<attend::nn::GruCell<double>>(decoder.cells[0]);
  const Tensor<double>& W_ih = cell.W_ih.value;  // (3H, E + H): [W_r; W_z; W_n] on [E y_{j-1}; h̃_{j-1}]
  const Tensor<double>& W_hh = cell.W_hh.value;  // (3H, H): [U_r; U_z; U_n] on s_{j-1}
  const Tensor<double>& b_ih = cell.b_ih.value;
  const Tensor<double>& b_hh = cell.b_hh.value;
  const Tensor<double>& E_y = decoder.embedding.W.value;                    // (V_y, E)
  const std::vector<double> s_prev = state.h[0].value().to_vector();        // s_{j-1}
  const std::vector<double> h_tilde_prev = state.feed.value().to_vector();  // h̃_{j-1}
  const std::size_t H = s_prev.size(), E = E_y.shape()[1];
  // The GRU's input [E y_{j-1}; h̃_{j-1}]: (E + H,)
  std::vector<double> input;
  for (std::size_t k = 0; k < E; ++k) input.push_back(E_y.at({static_cast<std::size_t>(y_prev), k}));
  input.insert(input.end(), h_tilde_prev.begin(), h_tilde_prev.end());
  std::vector<double> s_j(H);
  for (std::size_t k = 0; k < H; ++k) {
    // (9.1)  s_j = f(s_{j-1}, [E y_{j-1}; h̃_{j-1}]): the GRU step (2.3)-(2.6)
    const double r = sigmoid(row_times(W_ih, k, input) + b_ih.at({k}) + row_times(W_hh, k, s_prev) + b_hh.at({k}));
    const double z =
        sigmoid(row_times(W_ih, H + k, input) + b_ih.at({H + k}) + row_times(W_hh, H + k, s_prev) + b_hh.at({H + k}));
    const double n = std::tanh(row_times(W_ih, 2 * H + k, input) + b_ih.at({2 * H + k}) +
                               r * (row_times(W_hh, 2 * H + k, s_prev) + b_hh.at({2 * H + k})));
    s_j[k] = (1 - z) * n + z * s_prev[k];
  }
  return s_j;
}

std::size_t feeding_parameters(std::size_t E, std::size_t H, attend::nn::CellKind cell) {
  (void)E;
  (void)H;
  (void)cell;
  throw attend::exercise::Todo("the parameters input feeding adds, as a formula in E, H and the cell");
}

std::size_t first_step_reading_attention(bool input_feeding) {
  (void)input_feeding;
  throw attend::exercise::Todo("your prediction: the first j whose s_j depends on W_c (0: none)");
}

}  // namespace yours
