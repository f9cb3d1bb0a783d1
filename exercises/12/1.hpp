// Exercise 12.1 — Luong-general with an output layer as wide as Bahdanau's; three decoders at equal parameter counts
// (docs/12-translation.md, "Exercises").
//
// At H = 128, Luong-general's output layer reads h̃_j, H numbers, where the vanilla and Bahdanau decoders' read
// [s_j; c_j; E y_{j−1}], 320: W_o has 8,207 × 128 weights instead of 8,207 × 320, and the model comes last. Is that
// why? Write:
//   output_features        F, the number of features the output layer W_o (V_y, F) reads, from the configuration:
//                          [s_j; c_j; E y_{j−1}] (vanilla, Bahdanau; c_j is as wide as an annotation h_i) or h̃_j
//                          (Luong);
//   widened_luong          the Luong-general configuration whose h̃_j is as wide as the given Bahdanau model's
//                          output features (H = 320 against 128 at the chapter's sizes), the rest of it unchanged;
//   equal_parameter_hidden the H at which a model of this configuration has the parameter count closest to
//                          `parameters` (Seq2seq::parameter_count; of two equally close, the smaller H).
// The check compares each with the library's models, then trains three models scaled down (Spanish → English pairs
// of at most 4 words, E = H = 16, 200 steps) from three seeds: Bahdanau, Luong-general at the same H, and your widened
// Luong-general, and compares their mean cross-entropy on 200 test sentences.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstddef>

#include "models/seq2seq.hpp"

namespace yours {

std::size_t output_features(const attend::models::Seq2seqConfig& config);
attend::models::Seq2seqConfig widened_luong(const attend::models::Seq2seqConfig& bahdanau);
std::size_t equal_parameter_hidden(const attend::models::Seq2seqConfig& config, std::size_t parameters);

}  // namespace yours
