// Exercise 11.3 — T_y grows: the counts of (11.1); then self-attention with a causal mask
// (docs/11-attention-costs.md, "Exercises"; chapter 7 masks padding the same way).
//
// Part 1. Fix T_x = 32 and let the targets grow, T_y = 4, 8, 16, 32. The chapter counts the scores e_ij of a training
// step with CountingScore, a score function that hands every call to the decoder's own and adds up the entries of
// the e it returns. Write count_scores: put such a counter in the model's score slot (BahdanauDecoder::score or
// LuongDecoder::score: a std::unique_ptr<Score<float>>; the vanilla decoder has none), run the forward pass of one
// training step on the batch (Seq2seq::loss), and return how many e_ij were computed. The check holds your count to
// (11.1), N_scores = B·T_x·T_y, for every T_y. The chapter's program times the same steps
// (`scripts/run 11` with T_y varied in main's Settings).
// Part 2. A decoder must not look at the words it has yet to write: its self-attention gets a causal mask,
// A_pr = 0 for r > p. Write causal_self_attention: (11.4)–(11.6) for the rows X (n, d_model) with W_Q, W_K
// (d_model, d_k) and W_V (d_model, d_v), the scores Q Kᵀ/√d_k masked with softmax(x, -1, mask) as chapter 7 masks
// padding (a Mask is a Tensor<std::uint8_t>, 1 where a position takes part). Row p of A then sums to 1 over r ≤ p.
// Return {A, Z}: A (n, n) and Z = A V (n, d_v).
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <utility>

#include "models/batch.hpp"
#include "models/seq2seq.hpp"

namespace yours {

// The scores e_ij of one training step's forward pass over `batch`, counted in the model's score function.
std::size_t count_scores(attend::models::Seq2seq<float>& model, const attend::models::Batch& batch);
// {A, Z} of causal self-attention, on X's tape.
std::pair<attend::Variable<double>, attend::Variable<double>> causal_self_attention(
    const attend::Variable<double>& X, const attend::Variable<double>& W_Q, const attend::Variable<double>& W_K,
    const attend::Variable<double>& W_V);

}  // namespace yours
