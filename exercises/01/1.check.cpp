// The check of exercise 1.1 (exercises/01/1.hpp): the tape's gradient of L + L2 against the sum of the single-example
// gradients by (1.4)–(1.6), and against the reference solution, at the chapter's values and at others.
#include "exercises/01/1.hpp"

#include <cmath>
#define yours reference
#include "exercises/01/1.hpp"
#undef yours
#include "exercises/check.hpp"

namespace {

// ∂L/∂w and ∂L/∂b of one example by (1.4)–(1.6).
std::array<double, 2> by_hand(double w, double b, double x, double t) {
  const double y = std::tanh(w * x + b);
  const double dL_dz = 2 * (y - t) * (1 - y * y);
  return {dL_dz * x, dL_dz};
}

}  // namespace

int main() {
  attend::exercise::Check check("1.1", "two examples, one backward");
  struct Case {
    const char* name;
    double w, b, x1, t1, x2, t2;
  };
  const Case cases[] = {
      {"the chapter's w = 0.8, b = 0.3, x₁ = −1.5, t₁ = 0.5; x₂ = 2, t₂ = −0.5", 0.8, 0.3, -1.5, 0.5, 2.0, -0.5},
      {"another case: x₂ = x₁, t₂ = t₁ (twice the one-example gradient)", -1.2, 0.3, 0.7, 0.2, 0.7, 0.2},
      {"another case: a saturated tanh", 3.0, -0.5, 2.5, -1.0, -0.4, 0.9},
  };
  for (const Case& c : cases) {
    check.run(c.name, [&] {
      const std::array<double, 2> yours = yours::both_examples(c.w, c.b, c.x1, c.t1, c.x2, c.t2);
      const std::array<double, 2> one = by_hand(c.w, c.b, c.x1, c.t1), two = by_hand(c.w, c.b, c.x2, c.t2);
      const std::array<double, 2> reference = reference::both_examples(c.w, c.b, c.x1, c.t1, c.x2, c.t2);
      check.near(std::string(c.name) + ": ∂(L + L2)/∂w = ∂L/∂w + ∂L2/∂w", yours[0], one[0] + two[0], 1e-12);
      check.near(std::string(c.name) + ": ∂(L + L2)/∂b = ∂L/∂b + ∂L2/∂b", yours[1], one[1] + two[1], 1e-12);
      check.near(std::string(c.name) + ": ∂(L + L2)/∂w as the reference solution's", yours[0], reference[0], 1e-12);
    });
  }
  return check.verdict();
}
