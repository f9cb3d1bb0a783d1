// Exercise 5.2 — a solution (the task: exercises/05/2.hpp).
//
// A draw with u fixed is a step function of the scores, like the argmax: moving e_jt by ±ε moves the cumulative
// weights a little, but unless one of them crosses u the same t is drawn and c_j = h_t does not move, so the central
// difference is exactly 0 (and the tape agrees: the one-hot weights are a constant, no path leads back to e). One
// sample gives no gradient. What does depend smoothly on e is the *expected* context over the draw,
// E_t[h_t] = Σ_t α_jt h_t — the soft context of (5.4). REINFORCE differentiates that expectation without ever
// differentiating through the draw: ∂α_jt/∂e_jk = α_jt ([t = k] − α_jk) turns Σ_t f(t) ∂α_jt/∂e_jk into an average
// over draws of f(t) ([t = k] − α_jk), which only needs f at the word drawn. Its price is variance: with truly random
// draws the estimate is noisy (the check's evenly spread u_n hide that), which is why Xu et al. subtract a baseline
// and why soft attention, whose gradient is exact, became the default.
#include "exercises/05/2.hpp"

#include <algorithm>
#include <cmath>

namespace yours {

using namespace attend;

namespace {

// (5.4) on plain doubles, the maximum subtracted first so that exp cannot overflow.
std::vector<double> softmax_of(const std::vector<double>& e) {
  const double m = *std::max_element(e.begin(), e.end());
  std::vector<double> alpha(e.size());
  double total = 0;
  for (std::size_t t = 0; t < e.size(); ++t) total += alpha[t] = std::exp(e[t] - m);
  for (double& a : alpha) a /= total;
  return alpha;
}

}  // namespace

std::size_t sample_position(const std::vector<double>& e, double u) {
  const std::vector<double> alpha = softmax_of(e);
  double cumulative = 0;
  for (std::size_t t = 0; t < alpha.size(); ++t) {
    cumulative += alpha[t];
    if (cumulative > u) return t;
  }
  return alpha.size() - 1;  // u above the rounded total: the last word
}

Variable<double> sampled_context(const Variable<double>& e, const Variable<double>& h, double u) {
  const std::vector<double> scores(e.value().flat().begin(), e.value().flat().end());
  Tensor<double> one_hot(Shape{1, scores.size()});
  one_hot.data()[sample_position(scores, u)] = 1.0;
  // the one-hot weights are computed from e's values: a constant, so no path leads from c_j back to e
  return models::context(e.tape().constant(one_hot), h);
}

double one_sample_slope() { return 0.0; }

std::vector<double> reinforce_gradient(const std::vector<double>& e, const std::vector<std::vector<double>>& h,
                                       const std::vector<double>& w, const std::vector<double>& u) {
  const std::vector<double> alpha = softmax_of(e);
  std::vector<double> gradient(e.size(), 0.0);
  for (const double u_n : u) {
    const std::size_t t = sample_position(e, u_n);
    double f = 0;  // f(t) = wᵀh_t
    for (std::size_t d = 0; d < w.size(); ++d) f += w[d] * h[t][d];
    // f(t) ∂ln α_jt/∂e_jk = f(t) ([t = k] − α_jk)
    for (std::size_t k = 0; k < e.size(); ++k) gradient[k] += f * ((t == k ? 1.0 : 0.0) - alpha[k]);
  }
  for (double& g : gradient) g /= static_cast<double>(u.size());
  return gradient;
}

}  // namespace yours
