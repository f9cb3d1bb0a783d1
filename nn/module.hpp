// Parameter and Module basics: the named-parameter contract every layer follows. A layer owns its parameters as public
// members spelled like its equations and lists them, with its child modules, in one function (`visit`). Everything
// else — the (name, pointer) list with nested prefixes like "encoder.cell.W_hh", zero_grad, the parameter count,
// train/eval mode — is derived from that one function, so a layer cannot forget to register something in one place
// and not another, and modules stay copyable (no stored pointers to their own members).
// Chapter: docs/02-encoder.md; API: docs/reference/nn.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/tape.hpp"
#include "autograd/tensor.hpp"

namespace attend::nn {

template <class T>
class Module;

// (stable name, parameter) pairs: what optimizers, checkpoints and gradient checks take.
template <class T>
using NamedParameters = std::vector<std::pair<std::string, Parameter<T>*>>;

// What Module::visit reports to: each own parameter, then each child module, in a fixed order.
template <class T>
class ModuleVisitor {
 public:
  virtual ~ModuleVisitor() = default;
  virtual void parameter(const std::string& name, Parameter<T>& p) = 0;
  virtual void module(const std::string& name, Module<T>& child) = 0;
  // A random generator the module draws from while it runs (dropout), so that a training checkpoint can save and
  // restore it. Only modules that own one report it.
  virtual void generator(const std::string& name, Rng& rng) {
    (void)name;
    (void)rng;
  }
};

// (stable name, generator) pairs, e.g. {"encoder.rnn.dropout", &rng}: the random state a training checkpoint keeps.
using NamedGenerators = std::vector<std::pair<std::string, Rng*>>;

template <class T>
class Module {
 public:
  virtual ~Module() = default;

  // The one function a layer writes: v.parameter("W", W); ...; v.module("cell", cell); ...
  virtual void visit(ModuleVisitor<T>& v) = 0;

  // Every parameter of this module and its children, depth first, with dotted names ("encoder.cell.W_hh").
  NamedParameters<T> parameters();
  std::size_t parameter_count();  // number of scalar values
  // Every random generator of this module and its children, named like parameters.
  NamedGenerators generators();
  void zero_grad();
  // Training mode (dropout active) or evaluation mode, for this module and all its children.
  void train(bool training = true);
  void eval() { train(false); }
  bool training() const { return training_; }

 protected:
  Module() = default;
  Module(const Module&) = default;
  Module& operator=(const Module&) = default;

 private:
  bool training_ = true;
};

// How to initialise weights. PyTorch's defaults are U(-1/√fan, 1/√fan) for Linear (fan = in_features) and for the
// recurrent cells (fan = hidden_size), and N(0, 1) for Embedding; Xavier/Glorot is U(-a, a), a = √(6 / (fan_in +
// fan_out)).
enum class Init { pytorch_default, xavier_uniform };

// U(-bound, bound) of the given shape, drawn from rng.
template <class T>
Tensor<T> uniform_init(const Shape& shape, double bound, Rng& rng) {
  return rng.uniform_tensor<T>(shape, -bound, bound);
}

// The Xavier/Glorot bound √(6 / (fan_in + fan_out)) for a (fan_out, fan_in) weight.
double xavier_bound(std::size_t fan_in, std::size_t fan_out);

// Gradient check of a module over its inputs and all of its parameters (names as in parameters()).
GradcheckResult gradcheck_module(Module<double>& module, const GradcheckFn& f,
                                 const std::vector<Tensor<double>>& inputs, const GradcheckOptions& options = {});

}  // namespace attend::nn
