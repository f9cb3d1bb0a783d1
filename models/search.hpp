// Decoding: from a trained model and a batch of sources to output sequences, argmax_y p(y | x) approximated step by
// step. Greedy decoding keeps the single most probable token at each step; beam search keeps the k most probable
// partial outputs (by summed log-probability), sets a hypothesis aside when it ends with the end token among the k
// best candidates, stops when the best candidate of a step is an end (or at the maximum length), and returns the
// finished output with the best length-normalised score log p(y | x) / |y|^α. With α = 0 the stop loses nothing: every
// unfinished output is already less probable than a finished one. Width 1 is greedy decoding exactly.
// Both run a whole batch at once (beam search as B·k rows) and record each output token's attention weights.
// Neither ever outputs <pad> or <sos> (they are skipped, the other probabilities are not renormalised).
// Chapters: docs/03-encoder-decoder.md (greedy, feeding back predictions), docs/12-translation.md (beam search).
#pragma once

#include <cstdint>
#include <vector>

#include "models/seq2seq.hpp"

namespace attend::models {

struct SearchOptions {
  std::size_t beam_width = 1;   // k; 1 is greedy decoding
  std::size_t max_length = 0;   // most output tokens, the end token included; 0 means the model's max_target_length
  double length_penalty = 1.0;  // α in log p / |y|^α (|y| counts the end token); 0 compares raw log-probabilities
};

// One output sequence.
struct Hypothesis {
  std::vector<std::int64_t> tokens;  // y_1 … y_n, without the end token
  double log_prob = 0;               // log p(y | x), the end token's probability included when finished
  double score = 0;                  // log_prob / |y|^α, what beam search ranks by
  bool finished = false;             // ended with the end token (false: stopped at max_length)
  // attention[j][i] = α_ij: the weight of source position i (real positions only) at output step j, one row per
  // emitted token, the end token included when finished; empty for the vanilla decoder
  std::vector<std::vector<float>> attention;
};

// The best output for each source of the batch (source ids (B, S) with their lengths). The model should be in
// evaluation mode (model.eval()). Records on its own tape without gradients.
template <class T>
std::vector<Hypothesis> decode(Seq2seq<T>& model, const Ids& source, const std::vector<std::int64_t>& lengths,
                               const SearchOptions& options = {});

// Greedy decoding written on its own, step by step with the argmax token and no beam bookkeeping. decode() with
// beam_width 1 runs the beam search with one beam and gives exactly these outputs (a test holds it to that).
template <class T>
std::vector<Hypothesis> greedy_decode(Seq2seq<T>& model, const Ids& source, const std::vector<std::int64_t>& lengths,
                                      std::size_t max_length = 0);

// The two searches from a batch already encoded (by a Seq2seq, or by the image captioner of captioner.hpp), recorded
// without gradients on a tape that outlives the call: lengths[b] is the number of real memory positions of row b
// (the attention rows are cut to it). options.max_length 0 means default_max_length.
template <class T>
std::vector<Hypothesis> decode(Decoder<T>& decoder, const Encoded<T>& encoded, const std::vector<std::int64_t>& lengths,
                               const SearchOptions& options, std::size_t default_max_length);
template <class T>
std::vector<Hypothesis> greedy_decode(Decoder<T>& decoder, const Encoded<T>& encoded,
                                      const std::vector<std::int64_t>& lengths, std::size_t max_length);

}  // namespace attend::models
