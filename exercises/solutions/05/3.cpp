// Exercise 5.3 — a solution (the task: exercises/05/3.hpp).
//
// With the scores scaled, ∂c_j/∂e_jk = β α_jk (h_k − c_j): a factor β that grows, times weights that sharpen. At small
// β every α_jk is near 1/T_x and c_j near the mean, so the β in front wins and the slope grows; as β grows, every word
// but the winner t* loses its weight like e^(−β (e_jt* − e_jk)), and the winner's own h_t* − c_j shrinks the same way,
// since c_j closes in on h_t*. What is left is the runner-up: max_slope ≈ C β e^(−β (e_jt* − e_runner-up)), so r is the
// gap between the two largest scores: the larger the gap, the earlier the peak and the faster the fall (for β e^(−rβ)
// alone the peak would be at β = 1/r; the other words move it). Two scores tied at the top give r = 0: the weights
// settle on the pair, and the slope grows with β and never dies. For training
// this says that scores which grow large — by large weights, or by a dot product over many dimensions, which is why
// the Transformer divides by √d (chapter 14) — saturate the softmax, and the gradient that should teach them fades
// exponentially with the gap.
#include "exercises/05/3.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace yours {

using namespace attend;

double max_slope(const std::vector<double>& e, const Tensor<double>& h, double beta) {
  Tape<double> tape;
  const Variable<double> e_leaf = tape.leaf(Tensor<double>(Shape{1, e.size()}, e));
  const Variable<double> annotations = tape.constant(h);
  // (5.6)  α_jt(β) = softmax(β e_j), then (5.1)
  const Variable<double> c = models::context(softmax(e_leaf * beta, 1), annotations);
  double slope = 0;
  for (std::size_t d = 0; d < c.shape()[1]; ++d) {
    Tensor<double> seed(c.shape());
    seed.data()[d] = 1.0;
    tape.backward(c, seed);
    const Tensor<double> dc_d_de = e_leaf.grad();  // ∂c_d/∂e_jt for every t
    for (const double g : dc_d_de.flat()) slope = std::max(slope, std::abs(g));
  }
  return slope;
}

double best_beta(const std::vector<double>& e, const Tensor<double>& h) {
  double best = 1.0, largest = max_slope(e, h, 1.0);
  for (int k = 1; k <= 16; ++k) {
    const double beta = 1.0 + 0.25 * k;
    const double slope = max_slope(e, h, beta);
    if (slope > largest) largest = slope, best = beta;
  }
  return best;
}

double decay_rate(const std::vector<double>& e) {
  std::vector<double> sorted = e;
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  return sorted[0] - sorted[1];  // the gap between the winner and the runner-up
}

}  // namespace yours
