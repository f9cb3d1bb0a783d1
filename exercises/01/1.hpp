// Exercise 1.1 — two examples, one backward (docs/01-autograd.md, "Exercises").
//
// Chapter 1's neuron on a first example (x₁, t₁),  L = (tanh(w·x₁ + b) − t₁)²,  and on a second one (x₂, t₂),
// L2 = (tanh(w·x₂ + b) − t₂)². Record both on one tape, with w and b one leaf each, add them, and call
// tape.backward once, on L + L2. The check compares what the tape gives with the sum of the two single-example
// gradients of (1.6), ∂L/∂w + ∂L2/∂w and ∂L/∂b + ∂L2/∂b.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <array>

#include "autograd/autograd.hpp"

namespace yours {

// {∂(L + L2)/∂w, ∂(L + L2)/∂b} at (w, b), read from w's and b's leaves after one backward of L + L2.
std::array<double, 2> both_examples(double w, double b, double x1, double t1, double x2, double t2);

}  // namespace yours
