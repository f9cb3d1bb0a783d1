// The check of exercise 5.2 (exercises/05/2.hpp): the sampled positions against the reference and against the
// weights (over evenly spread u, each word is drawn a share α_jt of the time), the sampled context against h_t and
// its tape gradient against 0, the predicted slope against central differences, and the REINFORCE estimate against
// the tape's gradient of the expected context — on the chapter's scores and annotations and on others.
#include "exercises/05/2.hpp"

#include <algorithm>
#include <cmath>
#define yours reference
#include "exercises/05/2.hpp"
#undef yours
#include "exercises/chapter_encoder.hpp"
#include "exercises/check.hpp"

using namespace attend;

namespace {

struct Case {
  std::string name;
  std::vector<double> e;
  Variable<double> h;  // (1, T_x, H)
  double u;            // a u away from the jumps, for the central differences
};

std::vector<double> values(const Tensor<double>& t) { return {t.flat().begin(), t.flat().end()}; }
Tensor<double> row(const std::vector<double>& v) { return Tensor<double>(Shape{1, v.size()}, v); }

// u_n = (n + 1/2) / N: N numbers spread evenly over [0, 1).
std::vector<double> evenly(std::size_t N) {
  std::vector<double> u(N);
  for (std::size_t n = 0; n < N; ++n) u[n] = (static_cast<double>(n) + 0.5) / static_cast<double>(N);
  return u;
}

// α_j = softmax(e_j) by the library.
std::vector<double> weights(Tape<double>& tape, const std::vector<double>& e) {
  return values(softmax(tape.constant(row(e)), 1).value());
}

void check_positions(exercise::Check& check, const Case& c) {
  Tape<double>& tape = c.h.tape();
  std::size_t disagree = 0;
  std::string first;
  for (std::size_t k = 0; k <= 20; ++k) {
    const double u = k == 20 ? 0.999 : 0.05 * static_cast<double>(k);
    const std::size_t yours = yours::sample_position(c.e, u), expected = reference::sample_position(c.e, u);
    if (yours != expected && disagree++ == 0) {
      first = "at u = " + exercise::number(u) + ": yours t = " + std::to_string(yours) + ", expected " +
              std::to_string(expected);
    }
  }
  check.that(disagree == 0, c.name + ": the first t whose cumulative weight exceeds u, for u = 0, 0.05, …, 0.95, 0.999",
             disagree == 0 ? "all 21 agree with the reference" : std::to_string(disagree) + " differ, first " + first);
  const std::size_t N = 1000, T_x = c.e.size();
  std::vector<double> share(T_x, 0.0);
  for (const double u : evenly(N)) {
    const std::size_t t = yours::sample_position(c.e, u);
    if (t < T_x) share[t] += 1.0 / static_cast<double>(N);
  }
  check.near(c.name + ": over u_n = (n + ½)/N, N = 1000, word t is drawn a share α_jt of the time (to 1/N)", share,
             weights(tape, c.e), 1.0 / static_cast<double>(N) + 1e-12);
}

void check_context(exercise::Check& check, const Case& c) {
  Tape<double>& tape = c.h.tape();
  const std::size_t T_x = c.e.size(), H = c.h.shape()[2];
  const Variable<double> e = tape.leaf(row(c.e));
  const Variable<double> c_j = yours::sampled_context(e, c.h, c.u);
  const std::size_t t = reference::sample_position(c.e, c.u);
  std::vector<double> h_t(H);
  for (std::size_t d = 0; d < H; ++d) h_t[d] = c.h.value().at({0, t, d});
  check.near(
      c.name + ": c_j = h_t for the t drawn at u = " + exercise::number(c.u) + " (t = " + std::to_string(t + 1) + ")",
      values(c_j.value()), h_t, 0.0);
  Rng rng(52);
  tape.backward(sum(c_j * tape.constant(rng.normal_tensor<double>(Shape{1, H}, 0, 1))));
  check.near(c.name + ": ∂(wᵀc_j)/∂e_jt from the tape: no path from the draw back to e", values(e.grad()),
             std::vector<double>(T_x, 0.0), 0.0);
}

void check_slope(exercise::Check& check, const Case& c) {
  Tape<double>& tape = c.h.tape();
  const double eps = 1e-6;
  double measured = 0;  // the largest |central difference| of the reference's sampled context, over d and t
  for (std::size_t t = 0; t < c.e.size(); ++t) {
    std::vector<double> plus = c.e, minus = c.e;
    plus[t] += eps;
    minus[t] -= eps;
    const std::vector<double> c_plus = values(reference::sampled_context(tape.leaf(row(plus)), c.h, c.u).value());
    const std::vector<double> c_minus = values(reference::sampled_context(tape.leaf(row(minus)), c.h, c.u).value());
    for (std::size_t d = 0; d < c_plus.size(); ++d) {
      const double slope = (c_plus[d] - c_minus[d]) / (2 * eps);
      if (std::abs(slope) > std::abs(measured)) measured = slope;
    }
  }
  check.near(c.name + ": your prediction of (c_jd(e + ε u_t) − c_jd(e − ε u_t)) / 2ε at u = " + exercise::number(c.u) +
                 ", the largest over d and t",
             yours::one_sample_slope(), measured, 1e-12);
}

void check_reinforce(exercise::Check& check, const Case& c) {
  Tape<double>& tape = c.h.tape();
  const std::size_t T_x = c.e.size(), H = c.h.shape()[2], N = 2000;
  Rng rng(53);
  const Tensor<double> w = rng.normal_tensor<double>(Shape{1, H}, 0, 1);
  // the exact gradient: ∂/∂e of wᵀ Σ_t α_jt h_t, the expected context, by the tape
  const Variable<double> e = tape.leaf(row(c.e));
  tape.backward(sum(models::context(softmax(e, 1), c.h) * tape.constant(w)));
  std::vector<std::vector<double>> h(T_x, std::vector<double>(H));
  double bound = 0;  // |estimate − exact| ≤ Σ_t |f(t)| / N when each word is drawn N α_jt ± 1 times
  for (std::size_t t = 0; t < T_x; ++t) {
    double f = 0;
    for (std::size_t d = 0; d < H; ++d) f += w.data()[d] * (h[t][d] = c.h.value().at({0, t, d}));
    bound += std::abs(f) / static_cast<double>(N);
  }
  const std::vector<double> estimate = yours::reinforce_gradient(c.e, h, values(w), evenly(N));
  check.near(c.name +
                 ": REINFORCE over N = 2000 evenly spread u_n = ∂(wᵀ Σ_t α_jt h_t)/∂e_jk from the tape (to Σ_t "
                 "|f(t)|/N)",
             estimate, values(e.grad()), bound + 1e-12);
  // the average of the sampled contexts tends to the soft context Σ_t α_jt h_t (5.4)
  const std::size_t M = 400;
  std::vector<double> average(H, 0.0), soft = values(models::context(softmax(tape.constant(row(c.e)), 1), c.h).value());
  for (const double u : evenly(M)) {
    const std::vector<double> sampled = values(yours::sampled_context(tape.leaf(row(c.e)), c.h, u).value());
    for (std::size_t d = 0; d < H; ++d) average[d] += sampled[d] / static_cast<double>(M);
  }
  double tolerance = 0;
  for (std::size_t t = 0; t < T_x; ++t)
    for (std::size_t d = 0; d < H; ++d) tolerance = std::max(tolerance, std::abs(h[t][d]));
  check.near(c.name + ": the average of the sampled c_j over N = 400 evenly spread u = Σ_t α_jt h_t (5.4)", average,
             soft, tolerance * static_cast<double>(T_x) / static_cast<double>(M) + 1e-12);
}

}  // namespace

int main() {
  exercise::Check check("5.2", "hard attention by sampling, and REINFORCE");
  Tape<double> tape;
  Rng rng(5200);
  std::vector<double> e_6(6);
  for (double& e : e_6) e = rng.uniform(-2.0, 2.0);
  const auto chapter = [&] { return tape.constant(exercise::chapter_annotations()); };  // (1, 4, 4)
  const std::vector<Case> cases{
      {"the chapter's e_j = (−0.5, 1.5, 0.2, 0.9)", {-0.5, 1.5, 0.2, 0.9}, chapter(), 0.3},
      {"another case: T_x = 6, H = 3", e_6, tape.leaf(rng.normal_tensor<double>(Shape{1, 6, 3}, 0, 1)), 0.65},
      {"another case: e_j = (0, 800, 0, −800), exp(800) overflows", {0, 800, 0, -800}, chapter(), 0.5},
  };
  for (const Case& c : cases) {
    check.run(c.name + ": the sampled positions", [&] { check_positions(check, c); });
    check.run(c.name + ": the sampled context", [&] { check_context(check, c); });
    check.run(c.name + ": your prediction of one sample's slope", [&] { check_slope(check, c); });
    check.run(c.name + ": REINFORCE", [&] { check_reinforce(check, c); });
  }
  return check.verdict();
}
