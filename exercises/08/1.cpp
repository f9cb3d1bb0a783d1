// Exercise 8.1 — your answer (the task: exercises/08/1.hpp). Check it with `scripts/exercise 8.1`.
// Chapter 8's hand computation (tutorials/08-attention-decoder.cpp: attention_by_hand, step_by_hand) is the model:
// its loops read the parameter tensors the same way here.
#include "exercises/08/1.hpp"

#include <cmath>
#include <variant>

#include "exercises/check.hpp"

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

}  // namespace

std::vector<double> initial_state(const BahdanauDecoder<double>& decoder, const Tensor<double>& h) {
  (void)decoder;
  (void)h;
  (void)row_times;
  throw attend::exercise::Todo("s_0 = tanh(W_b [h→_Tx; h←_1] + b_b) from decoder.bridge[0] and the annotations");
}

std::vector<double> context(const BahdanauDecoder<double>& decoder, const Tensor<double>& h,
                            const std::vector<double>& s_prev) {
  (void)decoder;
  (void)h;
  (void)s_prev;
  throw attend::exercise::Todo("c_j by (8.1)–(8.3), with h_i of 2H numbers");
}

std::vector<double> next_state(const BahdanauDecoder<double>& decoder, std::int64_t y_prev,
                               const std::vector<double>& s_prev, const std::vector<double>& c_j) {
  (void)decoder;
  (void)y_prev;
  (void)s_prev;
  (void)c_j;
  throw attend::exercise::Todo("s_j by (8.4): the GRU on [E y_{j−1}; c_j]");
}

std::array<bool, 2> sees(std::size_t i, std::size_t k) {
  (void)i;
  (void)k;
  throw attend::exercise::Todo("whether h→_i and h←_i depend on x_k");
}

}  // namespace yours
