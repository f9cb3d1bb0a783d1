// The check of exercise 5.3 (exercises/05/3.hpp): max_slope against central differences of (5.6) and (5.1) computed
// here, best_beta against the grid measured with the reference's max_slope, and the predicted decay rate against the
// rate measured at two large β — on the chapter's scores and annotations, on others, and on two scores tied at the top.
#include "exercises/05/3.hpp"

#include <algorithm>
#include <cmath>
#define yours reference
#include "exercises/05/3.hpp"
#undef yours
#include "exercises/chapter_encoder.hpp"
#include "exercises/check.hpp"

using namespace attend;

namespace {

// c_j = Σ_t softmax(β e)_t h_t on plain doubles (the maximum subtracted first).
std::vector<double> context_of(const std::vector<double>& e, const Tensor<double>& h, double beta) {
  const std::size_t T_x = e.size(), H = h.shape()[2];
  const double m = beta * *std::max_element(e.begin(), e.end());
  std::vector<double> alpha(T_x), c(H, 0.0);
  double total = 0;
  for (std::size_t t = 0; t < T_x; ++t) total += alpha[t] = std::exp(beta * e[t] - m);
  for (std::size_t t = 0; t < T_x; ++t)
    for (std::size_t d = 0; d < H; ++d) c[d] += alpha[t] / total * h.at({0, t, d});
  return c;
}

// max_{d,t} |∂c_jd/∂e_jt| by central differences.
double slope_by_differences(const std::vector<double>& e, const Tensor<double>& h, double beta) {
  const double eps = 1e-6;
  double slope = 0;
  for (std::size_t t = 0; t < e.size(); ++t) {
    std::vector<double> plus = e, minus = e;
    plus[t] += eps;
    minus[t] -= eps;
    const std::vector<double> c_plus = context_of(plus, h, beta), c_minus = context_of(minus, h, beta);
    for (std::size_t d = 0; d < c_plus.size(); ++d)
      slope = std::max(slope, std::abs(c_plus[d] - c_minus[d]) / (2 * eps));
  }
  return slope;
}

struct Case {
  std::string name;
  std::vector<double> e;
  Tensor<double> h;
  double beta_1, beta_2;  // two large β for measuring the decay rate
};

void check_slopes(exercise::Check& check, const Case& c) {
  for (const double beta : {1.0, 2.5, 10.0}) {
    check.near(c.name + ": max|∂c_j/∂e_j| at β = " + exercise::number(beta) + " from the tape = central differences",
               yours::max_slope(c.e, c.h, beta), slope_by_differences(c.e, c.h, beta), 1e-8);
  }
}

void check_best(exercise::Check& check, const Case& c) {
  const double yours = yours::best_beta(c.e, c.h);
  double best = 1.0, largest = 0, at_yours = -1;
  for (int k = 0; k <= 16; ++k) {
    const double beta = 1.0 + 0.25 * k;
    const double slope = reference::max_slope(c.e, c.h, beta);
    if (slope > largest) largest = slope, best = beta;
    if (beta == yours) at_yours = slope;
  }
  check.that(at_yours >= largest * (1 - 1e-12), c.name + ": your β has the largest max|∂c_j/∂e_j| of β = 1, 1.25, …, 5",
             "yours β = " + exercise::number(yours) +
                 (at_yours < 0 ? " (not on the grid)" : ", its slope " + exercise::number(at_yours)) +
                 "; measured: β = " + exercise::number(best) + ", slope " + exercise::number(largest));
}

void check_decay(exercise::Check& check, const Case& c) {
  const double s_1 = reference::max_slope(c.e, c.h, c.beta_1), s_2 = reference::max_slope(c.e, c.h, c.beta_2);
  // max_slope ≈ C β e^(−r β)  ⇒  r = −(ln(s_2 / β_2) − ln(s_1 / β_1)) / (β_2 − β_1)
  const double measured = -(std::log(s_2 / c.beta_2) - std::log(s_1 / c.beta_1)) / (c.beta_2 - c.beta_1);
  check.near(c.name + ": your r = −Δ ln(max|∂c_j/∂e_j| / β) / Δβ measured between β = " + exercise::number(c.beta_1) +
                 " and " + exercise::number(c.beta_2),
             yours::decay_rate(c.e), measured, 2e-3);
}

}  // namespace

int main() {
  exercise::Check check("5.3", "where the gradient of the soft choice peaks, and how fast it dies");
  Rng rng(5300);
  const Tensor<double> chapter = exercise::chapter_annotations();  // (1, 4, 4)
  const std::vector<Case> cases{
      {"the chapter's e_j = (−0.5, 1.5, 0.2, 0.9)", {-0.5, 1.5, 0.2, 0.9}, chapter, 15, 25},
      {"another case: e_j = (0.3, −1.2, 0.8, 0.1, −0.4, 1.3), H = 3",
       {0.3, -1.2, 0.8, 0.1, -0.4, 1.3},
       rng.normal_tensor<double>(Shape{1, 6, 3}, 0, 1),
       20,
       30},
      {"another case: e_j = (1, 3, 3, 0), two scores tied at the top", {1, 3, 3, 0}, chapter, 5, 10},
  };
  for (const Case& c : cases) {
    check.run(c.name + ": max_slope", [&] { check_slopes(check, c); });
    check.run(c.name + ": best_beta", [&] { check_best(check, c); });
    check.run(c.name + ": your decay rate", [&] { check_decay(check, c); });
  }
  return check.verdict();
}
