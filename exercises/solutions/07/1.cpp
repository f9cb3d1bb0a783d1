// Exercise 7.1 — a solution (the task: exercises/07/1.hpp).
//
// The softmax is now of x_kj = β e_kj, so the chain rule adds one factor, ∂x_kj/∂e_kj = β: (7.7) becomes
// ∂α_ij/∂e_kj = β α_ij (δ_ik − α_kj), and (7.8) becomes ∂L/∂e_kj = β α_kj (∂L/∂α_kj − Σ_i α_ij ∂L/∂α_ij). β enters
// twice: once in front, explicitly, and once hidden in the weights α, which are the softmax of β e. At β = 0.1 the
// weights are nearly uniform and the factor small: a small gradient, spread evenly. As β grows the factor grows, but
// the weights sharpen towards one-hot, where α_ij (δ_ik − α_kj) is near 0 for every i and k: chapter 5's saturation.
// The chapter's scores lie close together, so at β = 10 the factor still wins: the Jacobian's entries are larger than
// at β = 1; scores further apart would saturate sooner. A negative β reverses the order of the weights
// and the sign of the gradient, and the padding still gets zero rows and columns, since α is 0 there whatever β is.
#include "exercises/07/1.hpp"

namespace yours {

std::vector<std::vector<double>> scaled_jacobian(const std::vector<double>& alpha, double beta) {
  const std::size_t T_x = alpha.size();
  std::vector<std::vector<double>> J(T_x, std::vector<double>(T_x));
  for (std::size_t i = 0; i < T_x; ++i) {
    for (std::size_t k = 0; k < T_x; ++k) {
      // (7.7) with β: ∂α_ij/∂e_kj = β α_ij (δ_ik − α_kj)
      J[i][k] = beta * alpha[i] * ((i == k ? 1.0 : 0.0) - alpha[k]);
    }
  }
  return J;
}

std::vector<double> scaled_dL_de(const std::vector<double>& alpha, const std::vector<double>& dL_dalpha, double beta) {
  const std::size_t T_x = alpha.size();
  double weighted = 0;  // Σ_i α_ij ∂L/∂α_ij
  for (std::size_t i = 0; i < T_x; ++i) weighted += alpha[i] * dL_dalpha[i];
  std::vector<double> dL_de(T_x);
  // (7.8) with β: ∂L/∂e_kj = β α_kj (∂L/∂α_kj − Σ_i α_ij ∂L/∂α_ij)
  for (std::size_t k = 0; k < T_x; ++k) dL_de[k] = beta * alpha[k] * (dL_dalpha[k] - weighted);
  return dL_de;
}

}  // namespace yours
