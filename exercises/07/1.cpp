// Exercise 7.1 — your answer (the task: exercises/07/1.hpp). Check it with `scripts/exercise 7.1`.
// Both functions are the chapter's, for β = 1: make them hold for any β.
#include "exercises/07/1.hpp"

namespace yours {

std::vector<std::vector<double>> scaled_jacobian(const std::vector<double>& alpha, double beta) {
  (void)beta;
  const std::size_t T_x = alpha.size();
  std::vector<std::vector<double>> J(T_x, std::vector<double>(T_x));
  for (std::size_t i = 0; i < T_x; ++i) {
    for (std::size_t k = 0; k < T_x; ++k) {
      // (7.7)  ∂α_ij/∂e_kj = α_ij (δ_ik − α_kj)
      J[i][k] = alpha[i] * ((i == k ? 1.0 : 0.0) - alpha[k]);
    }
  }
  return J;
}

std::vector<double> scaled_dL_de(const std::vector<double>& alpha, const std::vector<double>& dL_dalpha, double beta) {
  (void)beta;
  const std::size_t T_x = alpha.size();
  double weighted = 0;  // Σ_i α_ij ∂L/∂α_ij
  for (std::size_t i = 0; i < T_x; ++i) weighted += alpha[i] * dL_dalpha[i];
  std::vector<double> dL_de(T_x);
  // (7.8)  ∂L/∂e_kj = α_kj (∂L/∂α_kj − Σ_i α_ij ∂L/∂α_ij)
  for (std::size_t k = 0; k < T_x; ++k) dL_de[k] = alpha[k] * (dL_dalpha[k] - weighted);
  return dL_de;
}

}  // namespace yours
