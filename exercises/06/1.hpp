// Exercise 6.1 — one score by hand (docs/06-alignment-scores.md, "Exercises").
//
// (6.1)  e_ij = v_aᵀ tanh(W_a s_{j−1} + U_a h_i), in the steps (6.2)–(6.6): W_a s_{j−1}, U_a h_i, their sum, its tanh,
// the dot product with v_a. W_a is (A, Q), U_a is (A, K), v_a is (1, A). Write
//   - score_by_hand: e_ij with plain loops over doubles (no tape), from the weights and the two vectors;
//   - e_42_on_paper: e_ij for i = 4 ("Area") and j = 2 (so s_{j−1} = s_1), worked out with pencil and paper (or a
//     calculator) from the matrices and vectors the chapter prints to three decimals; then find it in the chapter's
//     table of all scores.
// The check compares score_by_hand with models::AdditiveScore for every i and j of the chapter's set-up and for
// weights of other sizes, and your e_42 with the library's, to what three printed decimals allow.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <vector>

#include "autograd/tensor.hpp"

namespace yours {

// e_ij = v_aᵀ tanh(W_a s_{j−1} + U_a h_i): W_a (A, Q), U_a (A, K), v_a (1, A), s_prev Q numbers, h_i K numbers.
double score_by_hand(const attend::Tensor<double>& W_a, const attend::Tensor<double>& U_a,
                     const attend::Tensor<double>& v_a, const std::vector<double>& s_prev,
                     const std::vector<double>& h_i);
// Your e_42, from the chapter's printed numbers (i = 4, "Area"; j = 2, s_1).
double e_42_on_paper();

}  // namespace yours
