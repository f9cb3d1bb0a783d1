// Exercise 1.1 — your answer (the task: exercises/01/1.hpp). Check it with `scripts/exercise 1.1`.
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
  const Variable<double> L = pow(tanh(W * X1 + B) - t1, 2.0);
  // TODO: the second example's loss L2 (from x2 and t2), and one backward of L + L2 instead of L
  (void)x2;
  (void)t2;
  tape.backward(L);
  return {W.grad().item(), B.grad().item()};
}

}  // namespace yours
