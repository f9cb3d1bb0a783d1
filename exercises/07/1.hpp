// Exercise 7.1 — scaled scores in the softmax's gradients (docs/07-attention-weights.md, "Exercises").
//
// Scale the scores by β before the softmax, as chapter 5's (5.6) does: α_ij = m_i exp(β e_ij) / Σ_k m_k exp(β e_kj),
// the masked weights (7.4) of β e. Redo the derivation of (7.7) with β, and write
//   - scaled_jacobian: the softmax Jacobian ∂α_ij/∂e_kj (row i, column k) of one sentence at one step, from its
//     weights α_j alone (0 at the padding);
//   - scaled_dL_de: (7.8) with β, ∂L/∂e_kj from the weights α_j and ∂L/∂α_ij.
// Where does β enter (7.7) and (7.8)? The check compares both with the tape's, through models::attention_weights of
// β e, for β = 0.1 and β = 10 on the chapter's padded batch, and for other β and sentences.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <vector>

namespace yours {

// J[i][k] = ∂α_ij/∂e_kj for α_j = softmax(β e_j) (masked), from the T_x weights α_ij of one sentence at one step.
std::vector<std::vector<double>> scaled_jacobian(const std::vector<double>& alpha, double beta);
// ∂L/∂e_kj for every k, from the weights α_ij and the gradients ∂L/∂α_ij (T_x numbers each).
std::vector<double> scaled_dL_de(const std::vector<double>& alpha, const std::vector<double>& dL_dalpha, double beta);

}  // namespace yours
