// Parameter and Module basics: the named-parameter contract every layer follows. A layer owns its parameters as public
// members spelled like its equations and lists them, with its child modules, in one function (`visit`). Everything
// else — the (name, pointer) list with nested prefixes like "encoder.cell.W_hh", zero_grad, the parameter count,
// train/eval mode — is derived from that one function, so a layer cannot forget to register something in one place
// and not another, and modules stay copyable (no stored pointers to their own members).
// Chapter: docs/02-encoder.md; API: docs/reference/nn.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
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

// (name, tensor) pairs to read: a module's parameter values (Module::named_tensors, PyTorch's state_dict), tensors a
// checkpoint saves beside the parameters ({"optimizer.encoder.W.m", &m}), tensors to load by name (Module::load).
template <class T>
using NamedTensors = std::vector<std::pair<std::string, const Tensor<T>*>>;

// What Module::load left aside (PyTorch's missing_keys and unexpected_keys): parameters no tensor was given for, and
// tensors no parameter has the name of. Both empty after every strict load.
struct LoadReport {
  std::vector<std::string> missing;
  std::vector<std::string> unexpected;
};

// Names matched by name: for each wanted name the index of the available name equal to it, and what is left over on
// either side. Module::load and load_checkpoint share it (each words its own errors).
struct NameMatch {
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::vector<std::size_t> source;      // source[k]: index in `available` of wanted[k] (the first, if twice), or none
  std::vector<std::string> missing;     // wanted but not available, in wanted's order
  std::vector<std::string> unexpected;  // available but not wanted, in available's order
  std::string asked_twice;              // the first name that `wanted` holds twice, or empty
  std::string given_twice;              // the first name that `available` holds twice, or empty
};
NameMatch match_names(const std::vector<std::string>& wanted, const std::vector<std::string>& available);

// The same tensors with some renamed, e.g. from PyTorch's state_dict names to attend's before Module::load:
//   cell.load(nn::renamed(nn::read_tensors<float>(path), {{"weight_ih", "W_ih"}, {"weight_hh", "W_hh"}}));
// Names not in `from_to` are kept. Throws std::invalid_argument when a name to rename is absent (listing those left)
// or when two tensors would end up with one name.
template <class T>
std::map<std::string, Tensor<T>> renamed(std::map<std::string, Tensor<T>> tensors,
                                         const std::vector<std::pair<std::string, std::string>>& from_to);

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
  // The value of every parameter by the same names (PyTorch's state_dict): what save_checkpoint writes and what
  // another module of the same architecture can load().
  NamedTensors<T> named_tensors();
  // Sets parameters by name from `tensors` (PyTorch's load_state_dict). Each tensor must have its parameter's shape;
  // a mismatch throws std::invalid_argument naming the parameter and both shapes. Strict (the default): every
  // parameter needs a tensor and every tensor a parameter, else std::invalid_argument lists the missing and unexpected
  // names. Not strict: those are skipped and reported. All is checked before the first value is written: on any error
  // nothing has changed. Each loaded parameter's gradient is zeroed.
  LoadReport load(const NamedTensors<T>& tensors, bool strict = true);
  LoadReport load(const std::map<std::string, Tensor<T>>& tensors, bool strict = true);
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
