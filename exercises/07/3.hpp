// Exercise 7.3 — −10⁹ instead of a mask (docs/07-attention-weights.md, "Exercises").
//
// A common alternative to the masked softmax (7.4): set the scores of the padding to −10⁹ and take the plain softmax
// (7.1) over the source positions, with no mask. Write
//   - filled_weights: that softmax, in double and in float, on e's tape: e_ij where m_i = 1, −10⁹ where m_i = 0 (the
//     fill a constant, so that no gradient reaches the padding's scores);
//   - difference_from_masked: your prediction of the largest |α_ij(filled) − α_ij(masked)| over rows that hold at
//     least one real word (scores of ordinary size), in double (in_float false) and in float (in_float true);
//   - padding_only_row: your prediction of the filled weights of a row that is padding only, T_x positions, in double
//     and in float (the masked softmax leaves such a row at 0).
// The check compares your predictions with what the library computes, on the chapter's padded batch and on others.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstddef>
#include <vector>

#include "models/attention.hpp"

namespace yours {

// softmax along axis 1 of e (B, T_x) with the scores where m = 0 set to −10⁹; no mask.
attend::Variable<double> filled_weights(const attend::Variable<double>& e, const attend::Mask& m);
attend::Variable<float> filled_weights(const attend::Variable<float>& e, const attend::Mask& m);
// Your prediction: max |α(filled) − α(masked)| over the rows with a real word.
double difference_from_masked(bool in_float);
// Your prediction: the filled weights of a row of T_x positions, all padding.
std::vector<double> padding_only_row(std::size_t T_x, bool in_float);

}  // namespace yours
