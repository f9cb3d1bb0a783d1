// An untrained one-layer encoder as the checks of chapters 2 and 4 build theirs: chapter 2's nn::Encoder of a given
// cell, V tokens (0 is padding), embeddings of size E and states of size H.
#pragma once

#include <cstdint>

#include "nn/recurrent.hpp"

namespace attend::exercise {

inline nn::EncoderConfig encoder_config(std::size_t V, std::size_t E, std::size_t H, nn::CellKind cell) {
  nn::EncoderConfig config;
  config.vocab_size = V;
  config.embedding_dim = E;
  config.padding_id = 0;
  config.rnn.cell = cell;
  config.rnn.hidden_size = H;
  return config;
}

// That encoder in double, its weights drawn from `seed`.
inline nn::Encoder<double> untrained_encoder(std::size_t V, std::size_t E, std::size_t H, nn::CellKind cell,
                                             std::uint64_t seed) {
  Rng rng(seed);
  return nn::Encoder<double>(encoder_config(V, E, H, cell), rng);
}

}  // namespace attend::exercise
