// Exercise 11.1 — a solution (the task: exercises/11/1.hpp).
//
// Why it works: what grows with T_x is what is done once per source word. In the encoder that is one recurrent step,
// G·H·(input + H) multiply-adds per layer and direction: the cell decides G (the LSTM's 4 gated parts against the
// GRU's 3), so the vanilla slope grows by 4/3 with an LSTM (plus the cheaper elementwise work of one more gate). The
// attention's extra work per source word is the key, computed once per h_i, and the T_y scores, weights and context
// terms of the steps; none of them looks inside the encoder's cell, only at h_i, which is H numbers (D·H both ways)
// for any cell. So the LSTM changes the vanilla slope and leaves the extra slope of attention as it was: in the
// chapter's plot the three lines steepen together by the same amount per word.
#include "exercises/11/1.hpp"

namespace yours {

using namespace attend;
using namespace attend::models;

namespace {

// G: the gated parts of a cell, each an H × (input + H) product per step.
std::size_t gates(nn::CellKind cell) {
  switch (cell) {
    case nn::CellKind::gru:
      return 3;
    case nn::CellKind::lstm:
      return 4;
    default:
      return 1;  // rnn_tanh, rnn_relu
  }
}

}  // namespace

std::size_t encoder_multiply_adds(const Seq2seqConfig& config) {
  const std::size_t D = config.bidirectional ? 2 : 1, H = config.hidden_size, G = gates(config.cell);
  std::size_t total = 0;
  for (std::size_t layer = 0; layer < config.num_layers; ++layer) {
    const std::size_t input = layer == 0 ? config.embedding_dim : D * H;
    total += D * G * H * (input + H);
  }
  return total;
}

std::size_t attention_multiply_adds(const Seq2seqConfig& config) {
  const std::size_t K = (config.bidirectional ? 2 : 1) * config.hidden_size;  // the size of h_i
  const std::size_t A = config.attention_size ? config.attention_size : config.hidden_size;
  if (config.decoder == DecoderKind::vanilla || config.score == ScoreKind::dot) return 0;
  return (config.score == ScoreKind::general ? config.hidden_size : A) * K;  // one key per h_i
}

std::size_t scores_per_word(const Seq2seqConfig& config, std::size_t T_y) {
  return config.decoder == DecoderKind::vanilla ? 0 : T_y;  // e_ij for every step j of every word i
}

std::string slope_the_cell_changes() { return "vanilla"; }

}  // namespace yours
