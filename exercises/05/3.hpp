// Exercise 5.3 — where the gradient of the soft choice peaks, and how fast it dies (docs/05-oracle.md, "Exercises").
//
// Scale the scores by β as in (5.6), α_jt(β) = exp(β e_jt) / Σ_k exp(β e_jk), and take the context c_j = Σ_t α_jt h_t
// of (5.1). Write
//   - max_slope: max over d and t of |∂c_jd/∂e_jt|, read from the tape (one backward pass per component d of c_j,
//     seeded with the unit vector of d, as the chapter's jacobian_from_tape does);
//   - best_beta: the β in 1, 1.25, 1.5, …, 5 at which max_slope is largest;
//   - decay_rate: your prediction, as a formula in the scores, of how fast the gradient dies as β grows: the number r
//     for which max_slope(β) ≈ C β e^(−r β) at large β (so that ln(max_slope / β) falls by r per unit of β). Chapter
//     7's ∂c_j/∂e_jk = α_jk (h_k − c_j), times β here, and the closed form of the weights in (5.6) tell you which
//     weights are left.
// The check measures r from the tape at two large β and compares it with your formula, on the chapter's scores and on
// others.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <vector>

#include "models/attention.hpp"

namespace yours {

// max_{d,t} |∂c_jd/∂e_jt| for c_j = Σ_t softmax(β e_j)_t h_t, from the tape; e: T_x scores, h: (1, T_x, H).
double max_slope(const std::vector<double>& e, const attend::Tensor<double>& h, double beta);
// The β among 1, 1.25, …, 5 with the largest max_slope(e, h, β).
double best_beta(const std::vector<double>& e, const attend::Tensor<double>& h);
// Your prediction: r in max_slope(β) ≈ C β e^(−r β) as β → ∞, as a formula in the scores e_jt.
double decay_rate(const std::vector<double>& e);

}  // namespace yours
