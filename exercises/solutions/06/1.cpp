// Exercise 6.1 — a solution (the task: exercises/06/1.hpp).
//
// Row a of the hidden layer needs row a of W_a times s_{j−1} (Q products) and row a of U_a times h_i (K products);
// the two meet in the sum, then tanh, then weight v_a[a]. With the chapter's printed values, for i = 4 and j = 2:
// W_a s_1 = (0.735, −0.831, 0.093) and U_a h_4 = (−0.270, −0.332, −0.423), their sum (0.465, −1.164, −0.331), its
// tanh (0.434, −0.822, −0.319), and e_42 = 0.574·0.434 + 0.085·(−0.822) + 0.380·(−0.319) ≈ 0.058: the table's 0.057
// up to the rounding of the printed numbers. Note which loop reads which size: Q and K swapped go unnoticed while
// Q = K, as in the chapter, which is why the check also uses weights of other sizes.
#include "exercises/06/1.hpp"

#include <cmath>

namespace yours {

using attend::Tensor;

double score_by_hand(const Tensor<double>& W_a, const Tensor<double>& U_a, const Tensor<double>& v_a,
                     const std::vector<double>& s_prev, const std::vector<double>& h_i) {
  const std::size_t A = W_a.shape()[0], Q = W_a.shape()[1], K = U_a.shape()[1];
  double e_ij = 0;
  for (std::size_t a = 0; a < A; ++a) {
    double W_a_s_prev = 0, U_a_h_i = 0;
    for (std::size_t q = 0; q < Q; ++q) W_a_s_prev += W_a.at({a, q}) * s_prev[q];  // (6.2) row a of W_a s_{j−1}
    for (std::size_t k = 0; k < K; ++k) U_a_h_i += U_a.at({a, k}) * h_i[k];        // (6.3) row a of U_a h_i
    const double sum = W_a_s_prev + U_a_h_i;                                       // (6.4)
    e_ij += v_a.at({0, a}) * std::tanh(sum);                                       // (6.5), (6.6)
  }
  return e_ij;
}

double e_42_on_paper() { return 0.058; }

}  // namespace yours
