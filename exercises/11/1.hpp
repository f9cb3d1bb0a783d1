// Exercise 11.1 — an LSTM in place of the GRU: which slope changes? (docs/11-attention-costs.md, "Exercises").
//
// The chapter's times grow linearly with T_x: the vanilla model by one encoder step per source word (11.2), the
// attention models by that and an extra slope, the T_y scores, weights and context terms of every source word (11.1).
// Swap the GRU for an LSTM (config.cell = nn::CellKind::lstm) and predict, before measuring, which slope changes.
// Here the cost is counted, not timed: per source word and sentence, in the forward pass of a training step,
//   encoder_multiply_adds    the multiply-adds of the encoder's matrix products: each layer and direction multiplies
//                            its input (E numbers for layer 1, D·H for the layers above, D the directions) and its
//                            state (H numbers) by the weights of its G gated parts (G = 1 for nn::CellKind::rnn_tanh,
//                            3 for the GRU of chapter 2, 4 for the LSTM), H outputs each;
//   attention_multiply_adds  the multiply-adds of the attention's own products per source word: the keys of chapter 6
//                            and 9, computed once per h_i (U_a h_i, W_a h_i, W_a[:, Q:] h_i: attention size × K, or
//                            H × K for general, K = D·H the size of h_i; none for dot, none for vanilla);
//   scores_per_word          the scores e_ij per source word, (11.1) divided by B·T_x;
//   slope_the_cell_changes   "vanilla" (the encoder's slope), "attention" (the extra slope), "both" or "neither".
// The check counts what the library does: the float products of the layers (the cells' input and state products, the
// keys, the output layer) are asked of the tape's Products first (precision/products.hpp), so a Products that adds up
// m·n·k and lets OpenBLAS compute sees them; the slope is the count's growth from T_x = 6 to T_x = 10. The scores are
// counted with the chapter's CountingScore (their own per-step products do not go through Products).
// The times, with their noise, are `scripts/run 11` with config.cell changed in measure_at.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstddef>
#include <string>

#include "models/seq2seq.hpp"

namespace yours {

std::size_t encoder_multiply_adds(const attend::models::Seq2seqConfig& config);
std::size_t attention_multiply_adds(const attend::models::Seq2seqConfig& config);
std::size_t scores_per_word(const attend::models::Seq2seqConfig& config, std::size_t T_y);
std::string slope_the_cell_changes();

}  // namespace yours
