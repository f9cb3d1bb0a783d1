// Exercise 2.3 — a solution (the task: exercises/02/3.hpp).
//
// Layer 0 reads the embeddings (in = E); every layer above reads the layer below's states at each step, [h→_t; h←_t]
// when bidirectional, so in = D·H — the only place the shapes of a deeper encoder change. Each direction of each layer
// is a cell of its own with W_ih (G·H, in), W_hh (G·H, H) and two biases of G·H, so the count is
//   V·E + D·G·H·(E + H + 2) + (L − 1)·D·G·H·(D·H + H + 2).
// For chapter 2's sizes (V = 6, E = 4, H = 3, GRU, L = 3) that is 24 + 81 + 2·72 = 249. Dropout adds none: it
// multiplies each layer's output by a random mask of its own generator, between layers 0 and 1 and 1 and 2 (not after
// the last), in training mode only, and has no weights. The names carry the layer's index and the direction, as
// PyTorch's weight_ih_l1_reverse does: rnn.layers.1.backward.W_ih.
#include "exercises/02/3.hpp"

namespace yours {

using namespace attend;

// G, the number of gates a cell stacks in W_ih and W_hh.
std::size_t gates(nn::CellKind cell) { return cell == nn::CellKind::gru ? 3 : cell == nn::CellKind::lstm ? 4 : 1; }

std::size_t parameter_count(const nn::EncoderConfig& config) {
  std::size_t count = 0;
  for (const auto& [name, shape] : parameter_table(config)) count += shape.size();
  return count;
}

std::vector<std::pair<std::string, Shape>> parameter_table(const nn::EncoderConfig& config) {
  std::vector<std::pair<std::string, Shape>> table{{"embedding.W", Shape{config.vocab_size, config.embedding_dim}}};
  const std::size_t H = config.rnn.hidden_size, D = config.rnn.bidirectional ? 2 : 1, GH = gates(config.rnn.cell) * H;
  for (std::size_t l = 0; l < config.rnn.num_layers; ++l) {
    const std::size_t in = l == 0 ? config.embedding_dim : D * H;  // what layer l reads
    for (std::size_t d = 0; d < D; ++d) {
      const std::string prefix = "rnn.layers." + std::to_string(l) + (d == 0 ? ".forward." : ".backward.");
      table.push_back({prefix + "W_ih", Shape{GH, in}});
      table.push_back({prefix + "W_hh", Shape{GH, H}});
      table.push_back({prefix + "b_ih", Shape{GH}});
      table.push_back({prefix + "b_hh", Shape{GH}});
    }
  }
  return table;
}

}  // namespace yours
