// The gradient checker: compares the tape's gradients with central finite differences, in double precision.
// Public so that users can check their own ops and layers the same way the project checks its own.
// Chapter: docs/01-autograd.md ("The gradient checker"); how to use it for a new op: docs/reference/adding-an-op.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/tape.hpp"

namespace attend {

struct GradcheckOptions {
  double eps = 1e-6;   // central-difference step
  double atol = 1e-6;  // pass when |analytic - numeric| <= atol + rtol · |numeric|
  double rtol = 1e-5;
  std::uint64_t seed = 20261121;  // for the weights w of the scalar loss
};

struct GradcheckResult {
  bool passed = true;
  double worst_abs_error = 0;  // max |analytic - numeric| over all checked elements
  std::size_t checked = 0;     // number of elements compared
  std::string message;         // on failure: the element worst against its tolerance (which input, which element, both
                               // values), then the largest |analytic - numeric| and where it is
  explicit operator bool() const { return passed; }
};

// f builds a graph from its input leaves (and any of `params`, used through tape.param) and returns any output y.
using GradcheckFn = std::function<Variable<double>(Tape<double>&, const std::vector<Variable<double>>&)>;
using NamedParameter = std::pair<std::string, Parameter<double>*>;

// Checks ∂L/∂input and ∂L/∂param for L = Σ w ⊙ f(inputs) with fixed random weights w in [-1, 1] (a plain sum would
// hide mistakes that are symmetric across elements). Each gradient's shape must equal its input's. Parameter values
// and gradients are restored afterwards.
GradcheckResult gradcheck(const GradcheckFn& f, const std::vector<Tensor<double>>& inputs,
                          const GradcheckOptions& options = {}, const std::vector<NamedParameter>& params = {});

}  // namespace attend
