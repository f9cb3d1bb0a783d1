// Exercise 1.3 — a new op, softsign, and the gradient checker (docs/01-autograd.md, "Exercises";
// docs/reference/adding-an-op.md shows how an op is written).
//
// softsign(x) = x / (1 + |x|), elementwise. Write it as one op: compute y, then one tape.record("softsign", …) whose
// backward function adds dy / (1 + |x|)² into dx. The starter's derivative is wrong on purpose: run the check, read
// what attend::gradcheck says (which input, which element, both values, the largest difference), then fix it.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include "autograd/autograd.hpp"

namespace yours {

// softsign of every element of x, recorded on x's tape as one node named "softsign".
attend::Variable<double> softsign(const attend::Variable<double>& x);

}  // namespace yours
