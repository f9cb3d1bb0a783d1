// Exercise 8.1 — a bidirectional encoder under the attention decoder (docs/08-attention-decoder.md, "Exercises").
//
// With config.bidirectional = true the annotations become h_i = [h→_i; h←_i], 2H numbers: h→_i has read x_1..x_i
// from the left, h←_i has read x_i..x_Tx from the right. U_a becomes (A, 2H), the context c_j of (8.3) has 2H numbers,
// the GRU of (8.4) reads [E y_{j−1}; c_j] of E + 2H numbers, and s_0 is no longer h_Tx but bridged:
//   s_0 = tanh(W_b [h→_Tx; h←_1] + b_b)          W_b, b_b: decoder.bridge[0].W (H, 2H) and .b (H,)
// Redo the chapter's hand computation for this decoder, with plain loops over the parameter tensors, from the
// annotations h (1, T_x, 2H) of one source (the model is in double, so the check compares to 1e-10):
//   initial_state: s_0 by the bridge. h→_Tx and h←_1 are both inside h: where?
//   context:       c_j by (8.1)–(8.3) from s_{j−1}: e_ij = v_aᵀ tanh(W_a s_{j−1} + U_a h_i), α_ij, c_j = Σ_i α_ij h_i
//   next_state:    s_j by (8.4), chapter 2's GRU (2.3)–(2.6) on the input [E y_{j−1}; c_j] and the state s_{j−1}
// Then the question the heatmap asks — has every annotation now seen the whole date? For annotation h_i and source
// character x_k (both counted from 1), say whether h→_i depends on x_k and whether h←_i does. The check changes the
// character x_k and looks which halves of h_i move.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <array>
#include <cstdint>
#include <vector>

#include "models/seq2seq.hpp"

namespace yours {

// s_0 = tanh(W_b [h→_Tx; h←_1] + b_b): H numbers, from the annotations h (1, T_x, 2H) and decoder.bridge[0].
std::vector<double> initial_state(const attend::models::BahdanauDecoder<double>& decoder,
                                  const attend::Tensor<double>& h);
// c_j = Σ_i α_ij h_i (2H numbers), with α_ij the softmax over i of e_ij = v_aᵀ tanh(W_a s_{j−1} + U_a h_i).
std::vector<double> context(const attend::models::BahdanauDecoder<double>& decoder, const attend::Tensor<double>& h,
                            const std::vector<double>& s_prev);
// s_j = f(s_{j−1}, [E y_{j−1}; c_j]): the decoder's GRU cell, decoder.cells[0], by (2.3)–(2.6).
std::vector<double> next_state(const attend::models::BahdanauDecoder<double>& decoder, std::int64_t y_prev,
                               const std::vector<double>& s_prev, const std::vector<double>& c_j);
// {whether h→_i depends on x_k, whether h←_i depends on x_k}, for positions 1 ≤ i, k ≤ T_x.
std::array<bool, 2> sees(std::size_t i, std::size_t k);

}  // namespace yours
