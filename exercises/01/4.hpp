// Exercise 1.4 — a chain of 10,000 nodes (docs/01-autograd.md, "Exercises").
//
// Start from a leaf x and multiply n times by 1.0001:  y = x;  then n times  y = y * 1.0001.  What is dy/dx? Read it
// from the tape. Then predict, without building the chain, how many nodes the tape holds once it is recorded (x's leaf
// included) as a formula in n: that is how many nested calls a backward written as recursion (each node calling
// backward on its inputs) would make on the way down from y to x, one stack frame each.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstddef>

#include "autograd/autograd.hpp"

namespace yours {

// dy/dx of the chain of n multiplications by 1.0001, at x, from the tape (tape.backward, then x's gradient).
double chain_derivative(std::size_t n, double x);
// The number of nodes on the tape after recording that chain, as a formula in n (do not build the chain here).
std::size_t chain_nodes(std::size_t n);

}  // namespace yours
