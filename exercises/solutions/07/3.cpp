// Exercise 7.3 — a solution (the task: exercises/07/3.hpp).
//
// On a row with a real word the filled weights are the masked ones exactly, in double and in float: the softmax
// subtracts the row's maximum m, a real score, and exp(−10⁹ − m) underflows to exactly 0 in both (double reaches 0
// below about −745, float below about −104), so the padding adds exactly 0 to the sum and gets exactly 0 weight, and
// every real word sees the same maximum and the same sum as with the mask. (That needs −10⁹ to be far below every real
// score: a fill of −10 would leave the padding e^(−10 − m) of the weight.) A row that is padding only is where the two
// part ways: every score is −10⁹, the maximum is −10⁹, each exp(0) is 1, and the weights are uniform, 1/T_x on every
// <pad>, in both precisions — a context averaged from the padding's annotations, where the mask gives 0. Setting the
// padding to −∞ instead would turn that row into exp(−∞ + ∞) = NaN; the mask is the only one of the three that
// handles it by definition.
#include "exercises/07/3.hpp"

namespace yours {

using namespace attend;

namespace {

template <class T>
Variable<T> filled(const Variable<T>& e, const Mask& m) {
  Tape<T>& tape = e.tape();
  Tensor<T> keep(e.shape()), fill(e.shape());  // keep m_i; fill −10⁹ where m_i = 0
  for (std::size_t k = 0; k < m.size(); ++k) {
    keep.data()[k] = m.data()[k] ? T(1) : T(0);
    fill.data()[k] = m.data()[k] ? T(0) : T(-1e9);
  }
  // e_ij · m_i + (−10⁹)(1 − m_i): the score where m_i = 1, exactly −10⁹ where m_i = 0, then (7.1) with no mask
  return softmax(e * tape.constant(keep) + tape.constant(fill), 1);
}

}  // namespace

Variable<double> filled_weights(const Variable<double>& e, const Mask& m) { return filled(e, m); }

Variable<float> filled_weights(const Variable<float>& e, const Mask& m) { return filled(e, m); }

double difference_from_masked(bool in_float) {
  (void)in_float;  // exp(−10⁹ − m) is exactly 0 in both
  return 0.0;
}

std::vector<double> padding_only_row(std::size_t T_x, bool in_float) {
  (void)in_float;  // every score −10⁹: uniform in both
  return std::vector<double>(T_x, 1.0 / static_cast<double>(T_x));
}

}  // namespace yours
