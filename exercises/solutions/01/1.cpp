// Exercise 1.1 — a solution (the task: exercises/01/1.hpp).
//
// Why it works: backward adds (+=) into every input's gradient, so a leaf used by two losses receives both
// contributions; L + L2 is one more node whose backward passes dy = 1 to each of L and L2. The gradient of a sum is the
// sum of the gradients — which is also why a batch's loss can be summed (or averaged) before one backward.
#include "exercises/01/1.hpp"

namespace yours {

using attend::Tape;
using attend::Tensor;
using attend::Variable;

std::array<double, 2> both_examples(double w, double b, double x1, double t1, double x2, double t2) {
  Tape<double> tape;
  const Variable<double> W = tape.leaf(Tensor<double>::scalar(w));
  const Variable<double> B = tape.leaf(Tensor<double>::scalar(b));
  const Variable<double> X1 = tape.constant(Tensor<double>::scalar(x1));
  const Variable<double> X2 = tape.constant(Tensor<double>::scalar(x2));
  const Variable<double> L = pow(tanh(W * X1 + B) - t1, 2.0);
  const Variable<double> L2 = pow(tanh(W * X2 + B) - t2, 2.0);
  tape.backward(L + L2);
  return {W.grad().item(), B.grad().item()};
}

}  // namespace yours
