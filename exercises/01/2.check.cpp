// The check of exercise 1.2 (exercises/01/2.hpp): the sigmoid neuron's dL/dw from the tape and by hand, against each
// other, against central differences of L computed here, and against the reference solution.
#include "exercises/01/2.hpp"

#include <cmath>
#define yours reference
#include "exercises/01/2.hpp"
#undef yours
#include "exercises/check.hpp"

namespace {

double sigmoid_loss(double w, double x, double b, double t) {
  const double y = 1 / (1 + std::exp(-(w * x + b)));
  return (y - t) * (y - t);
}

}  // namespace

int main() {
  attend::exercise::Check check("1.2", "the sigmoid neuron, by tape and by hand");
  struct Case {
    const char* name;
    double w, x, b, t;
  };
  const Case cases[] = {
      {"the chapter's w = 0.8, x = −1.5, b = 0.3, t = 0.5", 0.8, -1.5, 0.3, 0.5},
      {"another case: z = 4.1, σ′(z) small", 1.5, 2.4, 0.5, 0.1},
      {"another case: t above every σ", -0.6, 0.9, -0.2, 1.3},
  };
  for (const Case& c : cases) {
    const std::string at = c.name;
    check.run(at + ": dL/dw from the tape", [&] {
      const double h = 1e-6;
      const double numeric = (sigmoid_loss(c.w + h, c.x, c.b, c.t) - sigmoid_loss(c.w - h, c.x, c.b, c.t)) / (2 * h);
      check.near(at + ": dL/dw from the tape = finite differences of (σ(w·x + b) − t)²",
                 yours::tape_dL_dw(c.w, c.x, c.b, c.t), numeric, 1e-8);
    });
    check.run(at + ": dL/dw by hand", [&] {
      check.near(at + ": dL/dw by hand (σ′ = σ(1 − σ)) = the tape's", yours::hand_dL_dw(c.w, c.x, c.b, c.t),
                 reference::tape_dL_dw(c.w, c.x, c.b, c.t), 1e-12);
    });
  }
  return check.verdict();
}
