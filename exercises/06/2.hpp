// Exercise 6.2 — a bias in the score, at no cost per step (docs/06-alignment-scores.md, "Exercises").
//
// Give the score of (6.1) a bias b_a (A numbers):  e_ij = v_aᵀ tanh(W_a s_{j−1} + U_a h_i + b_a). Write it twice:
//   - biased_score: e_j for every i from scratch at one step, with the tape's ops (linear, reshape, +, tanh) and the
//     score's weights (h.tape().param(score.W_a), …), the bias added inside the tanh;
//   - biased_keys: the keys with the bias folded in, once per sentence, so that the library's AdditiveScore::score,
//     unchanged, computes the biased scores at every step: no extra work per step. (6.4)'s sum tells where b_a may go.
// The check compares both with v_aᵀ tanh(W_a s_{j−1} + U_a h_i + b_a) in plain loops, at every step j, and checks
// their gradients with respect to b_a, h_i, s_{j−1} and the weights by attend::gradcheck.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include "models/attention.hpp"

namespace yours {

// e_ij = v_aᵀ tanh(W_a s_{j−1} + U_a h_i + b_a) for every i: s_prev (B, Q), h (B, T_x, K), b_a (A) → (B, T_x).
attend::Variable<double> biased_score(attend::models::AdditiveScore<double>& score, const attend::Variable<double>& b_a,
                                      const attend::Variable<double>& s_prev, const attend::Variable<double>& h);
// Keys that make score.score(s_prev, keys) equal biased_score(score, b_a, s_prev, h): (B, T_x, A), made by an
// additive score (models::Keys<double>(value, models::ScoreKind::additive)).
attend::models::Keys<double> biased_keys(attend::models::AdditiveScore<double>& score,
                                         const attend::Variable<double>& b_a, const attend::Variable<double>& h);

}  // namespace yours
