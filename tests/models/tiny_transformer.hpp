// A Transformer small enough for finite differences in double: D 8, 2 heads, feed-forward 12, 2 + 2 layers, no
// dropout, 16 positions, a target vocabulary of 9; the source vocabulary and the seed are the test's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/transformer.hpp"

namespace attend::testing {

inline models::TransformerConfig tiny_transformer(std::size_t source_vocab_size, std::uint64_t seed) {
  models::TransformerConfig c;
  c.source_vocab_size = source_vocab_size;
  c.target_vocab_size = 9;
  c.d_model = 8;
  c.heads = 2;
  c.ff = 12;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.dropout = 0.0;
  c.max_positions = 16;
  c.seed = seed;
  return c;
}

}  // namespace attend::testing
