// Exercise 14.1 — one head or four (docs/14-transformer.md, "Exercises").
//
// A model with H heads splits D into H blocks of d_k = D / H columns (14.3): each head scores with its own d_k
// columns of Q and K and has its own weights A^h over the source; the chapter's pictures show each head's, and the mean
// of the heads, (1/H) Σ_h A^h. How does one head of d_k = D compare with the mean of four of d_k = D / 4?
//
// 1. mean_over_heads: from the cross-attention weights of one decoder layer, (B, H, T, S) as nn::AttentionWeights
//    holds them (weights.data()[((b·H + h)·T + t)·S + q] = A^h_tq of sequence b), the mean over the heads of sequence
//    b: its first `rows` output positions t, each over its first `columns` source positions q (its real lengths).
// 2. peak_weight: the mean over the rows of the largest weight in each row — 1 when each output position looks at
//    one source position only, 1/S when it spreads its weight evenly.
// 3. sharper: your prediction, "one head" or "the mean of four heads": which gives the larger peak weight?
// The check trains the dates model with 1 head and with 4 (D = 32, 1 + 1 layers, 160 steps of 32 dates, no
// dropout), three seeds each, and measures both on 200 test dates; it prints their exact match too.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <string>
#include <vector>

#include "autograd/autograd.hpp"

namespace yours {

// rows × columns: (1/H) Σ_h A^h_tq of sequence b, t < rows, q < columns.
std::vector<std::vector<double>> mean_over_heads(const attend::Tensor<float>& weights, std::size_t b, std::size_t rows,
                                                 std::size_t columns);

// (1/rows) Σ_t max_q A_tq.
double peak_weight(const std::vector<std::vector<double>>& rows);

// "one head" or "the mean of four heads".
std::string sharper();

}  // namespace yours
