// Exercise 5.2 — hard attention by sampling, and REINFORCE (docs/05-oracle.md, "Exercises").
//
// Replace the argmax of (5.5) by a draw: with a fixed random number u in [0, 1), take the first source word t whose
// cumulative weight α_j1 + … + α_jt of (5.4), α_jt = exp(e_jt) / Σ_k exp(e_jk), exceeds u; the context is then h_t,
// as in (5.3). Write
//   - sample_position: that t (counted from 0) for scores e_j and a number u;
//   - sampled_context: c_j = h_t for that t, on the tape: the one-hot weights of t, then models::context;
//   - one_sample_slope: your prediction of ∂c_jd/∂e_jt by central differences of one sample (u fixed, away from the
//     jumps), the same for every d and t, as a number;
//   - reinforce_gradient: the estimator that models which sample (Xu et al.'s hard attention, 2015) train with. For
//     f(t) = wᵀh_t, the expected value over the draw, E_t[f(t)] = Σ_t α_jt f(t), has the gradient
//     ∂E_t[f(t)]/∂e_jk = E_t[f(t) ∂ln α_jt/∂e_jk] = E_t[f(t) ([t = k] − α_jk)], which REINFORCE estimates by the
//     average of f(t_n) ([t_n = k] − α_jk) over draws t_n, one per number u_n.
// The check compares the estimate, over many evenly spread u_n, with the tape's gradient of wᵀ Σ_t α_jt h_t.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstddef>
#include <vector>

#include "models/attention.hpp"

namespace yours {

// The first t (from 0) whose cumulative softmax weight α_j1 + … + α_j(t+1) exceeds u (the last t if none does).
std::size_t sample_position(const std::vector<double>& e, double u);
// c_j = h_t for t = sample_position(e's values, u), recorded on e's tape. e: (1, T_x), h: (1, T_x, H) → (1, H).
attend::Variable<double> sampled_context(const attend::Variable<double>& e, const attend::Variable<double>& h,
                                         double u);
// Your prediction: the central difference (c_jd(e + ε u_t) − c_jd(e − ε u_t)) / 2ε of one sample, ε = 10⁻⁶.
double one_sample_slope();
// REINFORCE: (1/N) Σ_n f(t_n) ([t_n = k] − α_jk) for every k, with t_n = sample_position(e, u[n]) and f(t) = wᵀh_t.
// h: T_x vectors of H numbers; w: H numbers; the result: T_x numbers, the estimate of ∂E_t[wᵀh_t]/∂e_jk.
std::vector<double> reinforce_gradient(const std::vector<double>& e, const std::vector<std::vector<double>>& h,
                                       const std::vector<double>& w, const std::vector<double>& u);

}  // namespace yours
