// Padded batches of token-id sequences for the encoder–decoder models, and the order in which an epoch visits the
// examples. The decoder's input is the target shifted right behind the start token, its expected output the target
// followed by the end token (teacher forcing, docs/03-encoder-decoder.md):
//   target_in  = <sos> y_1 … y_n   (then <pad>)
//   target_out = y_1 … y_n <eos>   (then <pad>, which the loss ignores)
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/tensor.hpp"

namespace attend::models {

// The token ids every model reserves: padding (ignored by the loss, masked by attention), the start and the end of a
// target, and the unknown token. data::Vocabulary numbers its four specials the same way (apps/ checks that they agree
// where the two meet); a model needs no vocabulary, only these ids and a vocabulary size.
inline constexpr std::int64_t pad_id = 0, sos_id = 1, eos_id = 2, unk_id = 3;

struct Batch {
  Ids source;                                // (B, S) padded with the padding id, S = the longest source
  std::vector<std::int64_t> source_lengths;  // (B,)
  Ids target_in;                             // (B, T): <sos> y_1 … y_n; shape (0,) when there are no targets
  Ids target_out;                            // (B, T): y_1 … y_n <eos>
  std::size_t size() const { return source_lengths.size(); }
};

// The decoder's input and expected output for a batch of targets: target_in = <sos> y_1 … y_n and target_out =
// y_1 … y_n <eos>, both (B, T) with T = the longest n + 1, padded with the padding id.
void make_targets(const std::vector<std::vector<std::int64_t>>& targets, Ids& target_in, Ids& target_out);

// A batch of sources (each non-empty) and, optionally, their targets (empty vector: a batch for inference only).
// Ids for padding, start and end are pad_id, sos_id and eos_id. Throws std::invalid_argument for an empty
// batch, an empty source, or a target count that differs from the source count.
Batch make_batch(const std::vector<std::vector<std::int64_t>>& sources,
                 const std::vector<std::vector<std::int64_t>>& targets = {});

// The examples 0 … count-1 cut into batches of at most batch_size, in a random order drawn from rng (a new order for
// each call), or in order when rng is null.
std::vector<std::vector<std::size_t>> batch_order(std::size_t count, std::size_t batch_size, Rng* rng);

// The same, but batches of similar lengths: the shuffled examples are taken in windows of 32 batches, each window is
// sorted by length (stable) and cut into batches, and the batches are then shuffled. A batch pads to its longest
// source, so sorting removes most of the padding (for the dates task about half the encoder's steps) while the
// order stays random from one epoch to the next. lengths[i] is example i's source length.
std::vector<std::vector<std::size_t>> bucketed_batch_order(const std::vector<std::size_t>& lengths,
                                                           std::size_t batch_size, Rng& rng);

}  // namespace attend::models
