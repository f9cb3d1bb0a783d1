// Exercise 3.3 — a beam, and who is to blame: the search or the model (docs/03-encoder-decoder.md, "Exercises").
//
// Greedy decoding (3.6) keeps one candidate; beam search (models::decode with beam_width k > 1) keeps k. When greedy
// decoding writes something other than the target y, two things can be at fault. If log p(y | x) is larger than log p
// of the greedy output, the model preferred the target and the search missed it; if it is smaller, the model itself
// prefers the wrong output, and no search will fix that. Three functions:
//   log_p     (3.1) log p(y | x) = Σ_j log p(y_j | y_<j, c) of any target y, its end token included (N = T_y + 1
//             terms), step by step as the chapter does: model.encode, then decoder->step with the true y_{j−1} and
//             decoder->logits, and the log of the softmax at y_j.
//   beam      the tokens of models::decode(model, source, lengths, options) with options.beam_width = k and
//             options.length_penalty = 0, so that the beam ranks its outputs by log p(y | x) itself.
//   to_blame  "none" when greedy decoding (models::greedy_decode) writes the target; otherwise "search" when
//             log p(target) > log p(greedy output), else "model".
// The check compares log_p with the training loss, beam with the library, and to_blame with log-probabilities the
// library computes, on small trained models; then, over three trainings, it counts the greedy errors of each kind and
// how many of each a beam of width 5 recovers.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstdint>
#include <string>
#include <vector>

#include "models/search.hpp"

namespace yours {

// log p(y | x) by the product rule (3.1), the end token's factor included.
double log_p(attend::models::Seq2seq<double>& model, const std::vector<std::int64_t>& source,
             const std::vector<std::int64_t>& target);
// The output of beam search of width k with length penalty 0 (without the end token).
std::vector<std::int64_t> beam(attend::models::Seq2seq<double>& model, const std::vector<std::int64_t>& source,
                               std::size_t k);
// "none", "search" or "model", as above.
std::string to_blame(attend::models::Seq2seq<double>& model, const std::vector<std::int64_t>& source,
                     const std::vector<std::int64_t>& target);

}  // namespace yours
