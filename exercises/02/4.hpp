// Exercise 2.4 — padding read as tokens (docs/02-encoder.md, "Exercises").
//
// Chapter 2 runs a padded batch, "the cat sat on the mat" and "on the mat" + 3 × <pad>, with the lengths {6, 3}. Run
// it with the lengths {6, 6} instead: the encoder then takes sentence 2's padding for three more tokens. Predict what
// it returns, and give the lengths that make it right:
//   final_state_reading_padding  sentence 2's final state h_Tx when its `pads` padding tokens are read as tokens:
//                                (2.1) x_i = E[w_i] with the encoder's own embedding (the padding row E[0] is 0), then
//                                (2.2) h_i = f(x_i, h_{i−1}) from h_0 = 0 with the encoder's own cell
//                                (encoder.rnn.cells[0][0]; nn::cell_forward runs any cell, and an LSTM also needs its
//                                memory cell at 0), over the sentence and then `pads` steps of <pad>. x = 0 at those
//                                steps — does the state stay where the sentence left it?
//   true_lengths                 the lengths a padded batch (B, T) must be run with: each row's tokens before its
//                                first padding id 0.
// The check runs the library's encoder with the lengths {6, 6} and with yours, on the chapter's batch and on others.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstdint>
#include <vector>

#include "nn/recurrent.hpp"

namespace yours {

// h_Tx of `sentence` followed by `pads` padding tokens, all read as tokens by the encoder's one layer (H numbers).
std::vector<double> final_state_reading_padding(attend::nn::Encoder<double>& encoder,
                                                const std::vector<std::int64_t>& sentence, std::size_t pads);
// For each row of `batch` (B, T), the number of tokens before its first padding id 0 (T when it has none).
std::vector<std::int64_t> true_lengths(const attend::Ids& batch);

}  // namespace yours
