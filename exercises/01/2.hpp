// Exercise 1.2 — sigmoid in place of tanh, by tape and by hand (docs/01-autograd.md, "Exercises").
//
// Replace tanh by the sigmoid σ(z) = 1 / (1 + e^−z) in chapter 1's neuron:  z = w·x + b,  y = σ(z),  L = (y − t)².
// Compute dL/dw twice: from the tape (attend's `sigmoid` op, then tape.backward), and by hand with plain doubles,
// redoing (1.4)–(1.6) with σ′(z) = σ(z)(1 − σ(z)) in place of (1.5)'s 1 − tanh²(z). The check compares the two with
// each other and with finite differences of L. (No include guard: the check includes this file twice, once for your
// functions, once for the reference solution's.)
#include "autograd/autograd.hpp"

namespace yours {

// dL/dw of L = (σ(w·x + b) − t)², read from the tape after backward.
double tape_dL_dw(double w, double x, double b, double t);
// The same derivative by the chain rule on plain doubles (no tape).
double hand_dL_dw(double w, double x, double b, double t);

}  // namespace yours
