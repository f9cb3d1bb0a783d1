// Exercise 14.1 — your answer (the task: exercises/14/1.hpp). Check it with `scripts/exercise 14.1`.
#include "exercises/14/1.hpp"

#include "exercises/check.hpp"

namespace yours {

using namespace attend;

std::vector<std::vector<double>> mean_over_heads(const Tensor<float>& weights, std::size_t b, std::size_t rows,
                                                 std::size_t columns) {
  // weights.shape() is {B, H, T, S}
  (void)weights;
  (void)b;
  (void)rows;
  (void)columns;
  throw exercise::Todo("the mean over the heads, (1/H) Σ_h A^h_tq");
}

double peak_weight(const std::vector<std::vector<double>>& rows) {
  (void)rows;
  throw exercise::Todo("the mean of each row's largest weight");
}

std::string sharper() { throw exercise::Todo("your prediction: \"one head\" or \"the mean of four heads\""); }

}  // namespace yours
