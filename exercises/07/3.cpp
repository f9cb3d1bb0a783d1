// Exercise 7.3 — your answer (the task: exercises/07/3.hpp). Check it with `scripts/exercise 7.3`.
// Both filled_weights are still the chapter's masked softmax: replace the mask by the fill.
#include "exercises/07/3.hpp"

#include "exercises/check.hpp"

namespace yours {

using namespace attend;

Variable<double> filled_weights(const Variable<double>& e, const Mask& m) { return models::attention_weights(e, m); }

Variable<float> filled_weights(const Variable<float>& e, const Mask& m) { return models::attention_weights(e, m); }

double difference_from_masked(bool in_float) {
  (void)in_float;
  throw attend::exercise::Todo("your prediction: how far the filled weights are from the masked ones");
}

std::vector<double> padding_only_row(std::size_t T_x, bool in_float) {
  (void)T_x;
  (void)in_float;
  throw attend::exercise::Todo("your prediction: the filled weights of a row of padding only");
}

}  // namespace yours
