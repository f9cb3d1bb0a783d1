// Exercise 8.1 — a solution (the task: exercises/08/1.hpp).
//
// Why it works: nothing in (8.1)–(8.4) cares how long h_i is. The score's U_a, the sum c_j = Σ_i α_ij h_i and the GRU's
// input all take their sizes from h, so the chapter's loops carry over with 2H where they had H; only s_0 changes.
// h→_Tx, the forward direction's last state, is the first half of the *last* annotation; h←_1, the backward
// direction's last state (it reads right to left, so it ends at x_1), is the second half of the *first* annotation:
// the bridge reads the two ends of the source, each summarised by the direction that read all of it.
// The dependence answers the heatmap's question: h→_i has read x_1..x_i and h←_i has read x_i..x_Tx, so every
// annotation depends on every character, through one half or the other. The unidirectional decoder had to wait for the
// "n" of "Jun": h_14 was the first annotation that had seen it. With both directions, h_12 at the "J" has seen "une"
// through h←_12, and nothing forces the weight onto the "n" any more. In two trainings of the chapter's settings with
// bidirectional = true (initial weights 8 and 9, 3 passes over 20,000 pairs, 99.9 % of the test dates right), the
// month of "Tuesday 22 June  2083" was written looking at the "J" and the "u" (positions 12 and 13), no longer at the
// "n", and the day's two digits each at its own character (9 and 10) instead of both at the second "2". Once every
// annotation has seen the whole date, the weight can sit on the characters where the field is written.
#include "exercises/08/1.hpp"

#include <cmath>
#include <variant>

namespace yours {

using attend::Tensor;
using attend::models::AdditiveScore;
using attend::models::BahdanauDecoder;

namespace {

// Σ_k W[row, first + k] v_k: one row of a matrix (from column `first`) times a vector.
double row_times(const Tensor<double>& W, std::size_t row, const std::vector<double>& v, std::size_t first = 0) {
  double sum = 0;
  for (std::size_t k = 0; k < v.size(); ++k) sum += W.at({row, first + k}) * v[k];
  return sum;
}

double sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

// h_i as a vector (i from 0 here): the whole row of the annotations, 2H numbers.
std::vector<double> annotation(const Tensor<double>& h, std::size_t i) {
  std::vector<double> h_i(h.shape()[2]);
  for (std::size_t m = 0; m < h_i.size(); ++m) h_i[m] = h.at({0, i, m});
  return h_i;
}

}  // namespace

std::vector<double> initial_state(const BahdanauDecoder<double>& decoder, const Tensor<double>& h) {
  const std::size_t T_x = h.shape()[1], H = decoder.config().hidden_size;
  // [h→_Tx; h←_1]: the forward half of the last annotation, then the backward half of the first
  std::vector<double> ends;
  for (std::size_t k = 0; k < H; ++k) ends.push_back(h.at({0, T_x - 1, k}));
  for (std::size_t k = 0; k < H; ++k) ends.push_back(h.at({0, 0, H + k}));
  const Tensor<double>& W_b = decoder.bridge[0].W.value;  // (H, 2H)
  const Tensor<double>& b_b = decoder.bridge[0].b.value;  // (H,)
  std::vector<double> s_0(H);
  for (std::size_t k = 0; k < H; ++k) s_0[k] = std::tanh(row_times(W_b, k, ends) + b_b.at({k}));
  return s_0;
}

std::vector<double> context(const BahdanauDecoder<double>& decoder, const Tensor<double>& h,
                            const std::vector<double>& s_prev) {
  const auto& score = dynamic_cast<const AdditiveScore<double>&>(*decoder.score);
  const Tensor<double>& W_a = score.W_a.value;  // (A, H)
  const Tensor<double>& U_a = score.U_a.value;  // (A, 2H)
  const Tensor<double>& v_a = score.v_a.value;  // (1, A)
  const std::size_t T_x = h.shape()[1], A = v_a.shape()[1];
  std::vector<double> e_ij(T_x, 0.0);
  for (std::size_t i = 0; i < T_x; ++i) {
    const std::vector<double> h_i = annotation(h, i);
    // (8.1)  e_ij = v_aᵀ tanh(W_a s_{j-1} + U_a h_i)
    for (std::size_t a = 0; a < A; ++a)
      e_ij[i] += v_a.at({0, a}) * std::tanh(row_times(W_a, a, s_prev) + row_times(U_a, a, h_i));
  }
  double e_max = e_ij[0], Z = 0;
  for (const double e : e_ij) e_max = std::max(e_max, e);
  for (const double e : e_ij) Z += std::exp(e - e_max);
  std::vector<double> c_j(h.shape()[2], 0.0);
  for (std::size_t i = 0; i < T_x; ++i) {
    const double alpha_ij = std::exp(e_ij[i] - e_max) / Z;  // (8.2)
    const std::vector<double> h_i = annotation(h, i);
    for (std::size_t m = 0; m < c_j.size(); ++m) c_j[m] += alpha_ij * h_i[m];  // (8.3)
  }
  return c_j;
}

std::vector<double> next_state(const BahdanauDecoder<double>& decoder, std::int64_t y_prev,
                               const std::vector<double>& s_prev, const std::vector<double>& c_j) {
  const auto& cell = std::get<attend::nn::GruCell<double>>(decoder.cells[0]);
  const Tensor<double>& W_ih = cell.W_ih.value;  // (3H, E + 2H) on [E y_{j-1}; c_j]
  const Tensor<double>& W_hh = cell.W_hh.value;  // (3H, H) on s_{j-1}
  const Tensor<double>& b_ih = cell.b_ih.value;
  const Tensor<double>& b_hh = cell.b_hh.value;
  const Tensor<double>& E_y = decoder.embedding.W.value;  // (V_y, E)
  const std::size_t H = s_prev.size(), E = E_y.shape()[1];
  std::vector<double> input;  // [E y_{j-1}; c_j]: E + 2H numbers
  for (std::size_t k = 0; k < E; ++k) input.push_back(E_y.at({static_cast<std::size_t>(y_prev), k}));
  input.insert(input.end(), c_j.begin(), c_j.end());
  std::vector<double> s_j(H);
  for (std::size_t k = 0; k < H; ++k) {
    // (8.4) with (2.3)–(2.6): reset gate r, update gate z, candidate n, then the new state
    const double r = sigmoid(row_times(W_ih, k, input) + b_ih.at({k}) + row_times(W_hh, k, s_prev) + b_hh.at({k}));
    const double z =
        sigmoid(row_times(W_ih, H + k, input) + b_ih.at({H + k}) + row_times(W_hh, H + k, s_prev) + b_hh.at({H + k}));
    const double n = std::tanh(row_times(W_ih, 2 * H + k, input) + b_ih.at({2 * H + k}) +
                               r * (row_times(W_hh, 2 * H + k, s_prev) + b_hh.at({2 * H + k})));
    s_j[k] = (1 - z) * n + z * s_prev[k];
  }
  return s_j;
}

std::array<bool, 2> sees(std::size_t i, std::size_t k) { return {k <= i, k >= i}; }

}  // namespace yours
