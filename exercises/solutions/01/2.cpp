// Exercise 1.2 — a solution (the task: exercises/01/2.hpp).
//
// Only (1.5) changes: dy/dz is σ′(z) = σ(z)(1 − σ(z)) = y(1 − y), a function of the output y, as tanh's 1 − y² is —
// which is why both ops' backward functions read the saved output rather than recomputing it from z. (1.4) and (1.6)
// do not know which squashing function sits between them. The program still agrees with itself: the tape, the chain
// rule by hand and the finite differences give the same number (by hand and tape to rounding, ~1e-17; finite
// differences to their truncation error, ~1e-10).
#include "exercises/01/2.hpp"

#include <cmath>

namespace yours {

using attend::Tape;
using attend::Tensor;
using attend::Variable;

double tape_dL_dw(double w, double x, double b, double t) {
  Tape<double> tape;
  const Variable<double> W = tape.leaf(Tensor<double>::scalar(w));
  const Variable<double> X = tape.constant(Tensor<double>::scalar(x));
  const Variable<double> B = tape.constant(Tensor<double>::scalar(b));
  const Variable<double> L = pow(sigmoid(W * X + B) - t, 2.0);
  tape.backward(L);
  return W.grad().item();
}

double hand_dL_dw(double w, double x, double b, double t) {
  const double y = 1 / (1 + std::exp(-(w * x + b)));
  const double dL_dy = 2 * (y - t);          // (1.4)
  const double dL_dz = dL_dy * y * (1 - y);  // (1.5) with σ′(z) = σ(z)(1 − σ(z))
  return dL_dz * x;                          // (1.6)
}

}  // namespace yours
