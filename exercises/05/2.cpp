// Exercise 5.2 — your answer (the task: exercises/05/2.hpp). Check it with `scripts/exercise 5.2`.
#include "exercises/05/2.hpp"

#include "exercises/check.hpp"

namespace yours {

using namespace attend;

std::size_t sample_position(const std::vector<double>& e, double u) {
  (void)e;
  (void)u;
  throw attend::exercise::Todo("the sampled position: the first t whose cumulative softmax weight exceeds u");
}

Variable<double> sampled_context(const Variable<double>& e, const Variable<double>& h, double u) {
  (void)e;
  (void)h;
  (void)u;
  throw attend::exercise::Todo("the sampled context h_t, on the tape");
}

double one_sample_slope() { throw attend::exercise::Todo("your prediction: the slope of one sample"); }

std::vector<double> reinforce_gradient(const std::vector<double>& e, const std::vector<std::vector<double>>& h,
                                       const std::vector<double>& w, const std::vector<double>& u) {
  (void)e;
  (void)h;
  (void)w;
  (void)u;
  throw attend::exercise::Todo("the REINFORCE estimate of ∂E_t[wᵀh_t]/∂e");
}

}  // namespace yours
