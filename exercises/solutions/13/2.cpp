// Exercise 13.2 — a solution (the task: exercises/13/2.hpp).
//
// Why it works: without P_i the annotation a_i is a function of x_i alone, the score (13.3) a function of a_i and
// s_{t−1}, and the softmax (13.4) gives equal scores equal weights; so two grid positions whose patches hold the same
// pixels get the same weight at every step, whatever the weights of the model, and two whose pixels differ in any
// way do not (unless by accident). Each blank patch is such a twin of every other blank one, and a digit drawn twice
// on the grid gives twins all along its two copies: the decoder cannot tell "the 7 I have just written" from "the next
// 7", and nothing in the annotations says which of two places lies further right. Trained that way the attention no
// longer goes from left to right (the check's small trainings: on well under 70% of the test images against nearly all
// with P), and the captions fall apart. With P, the same digit in two places gives two different annotations.
#include "exercises/13/2.hpp"

#include <algorithm>

namespace yours {

using namespace attend;

namespace {

template <class T>
void zero_positions(models::Captioner<T>& model) {
  Parameter<T>* P = nullptr;
  if (auto* patches = dynamic_cast<models::PatchEncoder<T>*>(model.encoder.get())) P = &patches->P;
  if (auto* conv = dynamic_cast<models::ConvEncoder<T>*>(model.encoder.get())) P = &conv->P;
  if (P == nullptr) throw std::invalid_argument("remove_positions: an image encoder of an unknown kind");
  std::fill(P->value.data(), P->value.data() + P->value.size(), T(0));
}

}  // namespace

void remove_positions(models::Captioner<float>& model) { zero_positions(model); }
void remove_positions(models::Captioner<double>& model) { zero_positions(model); }

bool same_weights(const Tensor<double>& patches, std::size_t i, std::size_t j) {
  // a_i = W_p h(x_i) + b_p without P_i: equal pixels, equal annotations, equal scores, equal weights
  const std::size_t P = patches.shape()[2];
  return std::equal(patches.data() + i * P, patches.data() + (i + 1) * P, patches.data() + j * P);
}

}  // namespace yours
