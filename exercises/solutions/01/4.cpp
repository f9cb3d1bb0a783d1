// Exercise 1.4 — a solution (the task: exercises/01/4.hpp).
//
// dy/dx = 1.0001ⁿ: each node multiplies the gradient passing through it by 1.0001 (the chain rule, n times); for
// n = 10,000 that is 2.718145926825…, close to e because (1 + 1/m)^m → e. A multiplication by a plain double records
// one node ("mul_scalar": the 1.0001 is kept in its backward function, not made a constant node), so the tape holds
// n + 1 nodes, x's leaf included. attend's backward is a loop over the nodes from the last to the first, so its depth
// is 1 whatever n is; a recursive backward would nest n + 1 calls. At a few hundred bytes of stack a frame, the 8 MiB
// default stack of a Linux thread ends somewhere in the tens of thousands of frames for a chain like this one — an RNN
// over a long sequence, unrolled, is such a chain.
#include "exercises/01/4.hpp"

namespace yours {

using attend::Tape;
using attend::Tensor;
using attend::Variable;

double chain_derivative(std::size_t n, double x) {
  Tape<double> tape;
  const Variable<double> leaf = tape.leaf(Tensor<double>::scalar(x));
  Variable<double> y = leaf;
  for (std::size_t i = 0; i < n; ++i) y = y * 1.0001;
  tape.backward(y);
  return leaf.grad().item();
}

std::size_t chain_nodes(std::size_t n) { return n + 1; }

}  // namespace yours
