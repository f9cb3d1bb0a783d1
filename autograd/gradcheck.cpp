// The finite-difference gradient checker declared in gradcheck.hpp.
#include "autograd/gradcheck.hpp"

#include <cmath>
#include <sstream>
#include <xtensor/xmath.hpp>

namespace attend {

namespace {

// "(1,2)" for flat index 5 of shape (2,3).
std::string index_string(std::size_t flat, const Shape& shape) {
  std::vector<std::size_t> idx(shape.rank());
  for (std::size_t a = shape.rank(); a-- > 0;) {
    idx[a] = flat % shape[a];
    flat /= shape[a];
  }
  std::string s = "(";
  for (std::size_t a = 0; a < idx.size(); ++a) s += (a ? "," : "") + std::to_string(idx[a]);
  return s + ")";
}

// What a failure's message ends with: the largest |analytic - numeric| and where it is, which need not be the element
// worst against its tolerance.
std::string largest_difference(const GradcheckResult& result, const std::string& at) {
  std::ostringstream msg;
  msg.precision(10);
  msg << "; the largest |difference| of the " << result.checked << " elements checked: " << result.worst_abs_error
      << ", at " << at;
  return msg.str();
}

}  // namespace

GradcheckResult gradcheck(const GradcheckFn& f, const std::vector<Tensor<double>>& inputs,
                          const GradcheckOptions& options, const std::vector<NamedParameter>& params) {
  GradcheckResult result;
  Tape<double> tape;
  std::vector<Tensor<double>> values = inputs;  // perturbed in place, one element at a time

  // f on a fresh tape, with the current values as leaves.
  std::vector<Variable<double>> leaves;
  auto evaluate = [&]() -> Variable<double> {
    tape.clear();
    leaves.clear();
    for (const auto& v : values) leaves.push_back(tape.leaf(v));
    return f(tape, leaves);
  };

  // Analytic gradients: backward from y with seed w, i.e. the gradient of Σ w ⊙ y. The parameters' own gradients
  // are set aside and restored afterwards.
  std::vector<Tensor<double>> saved_grads;
  for (const auto& [name, p] : params) {
    saved_grads.push_back(p->grad);
    p->grad = Tensor<double>(p->value.shape());
  }
  const Variable<double> y = evaluate();
  if (y.owner() != &tape) throw std::invalid_argument("gradcheck: f must return a Variable of the tape it is given");
  Rng rng(options.seed);
  const Tensor<double> w = rng.uniform_tensor<double>(y.shape(), -1.0, 1.0);
  const Shape y_shape = y.shape();
  tape.backward(y, w);

  struct Slot {
    std::string name;
    Tensor<double>* value;
    Tensor<double> analytic;
  };
  std::vector<Slot> slots;
  for (std::size_t i = 0; i < values.size(); ++i) {
    slots.push_back({"input " + std::to_string(i), &values[i], leaves[i].grad()});
  }
  for (const auto& [name, p] : params) slots.push_back({"parameter '" + name + "'", &p->value, p->grad});
  for (std::size_t s = 0; s < params.size(); ++s) params[s].second->grad = saved_grads[s];

  auto loss = [&]() {
    const Variable<double> out = evaluate();
    if (out.shape() != y_shape) {
      throw std::logic_error("gradcheck: f returned shape " + to_string(out.shape()) + " after returning " +
                             to_string(y_shape));
    }
    return xt::sum(out.value().flat() * w.flat())();
  };

  double worst_ratio = -1;
  std::string largest_at;  // where |analytic - numeric| is largest
  for (auto& slot : slots) {
    if (slot.analytic.shape() != slot.value->shape()) {
      result.passed = false;
      result.message = "gradcheck: " + slot.name + " has shape " + to_string(slot.value->shape()) +
                       " but its gradient has shape " + to_string(slot.analytic.shape());
      return result;
    }
    for (std::size_t e = 0; e < slot.value->size(); ++e) {
      double& x = slot.value->data()[e];
      const double original = x;
      x = original + options.eps;
      const double plus = loss();
      x = original - options.eps;
      const double minus = loss();
      x = original;
      const double numeric = (plus - minus) / (2 * options.eps);
      const double analytic = slot.analytic.data()[e];
      const double error = std::abs(analytic - numeric);
      const double allowed = options.atol + options.rtol * std::abs(numeric);
      ++result.checked;
      if (error > result.worst_abs_error || (std::isnan(error) && !std::isnan(result.worst_abs_error))) {
        result.worst_abs_error = error;
        largest_at = slot.name + " element " + index_string(e, slot.value->shape());
      }
      const double ratio = error / allowed;
      if (!(ratio <= 1.0) && (ratio > worst_ratio || std::isnan(ratio))) {
        worst_ratio = std::isnan(ratio) ? INFINITY : ratio;
        result.passed = false;
        std::ostringstream msg;
        msg.precision(10);
        msg << "gradcheck: " << slot.name << " of shape " << to_string(slot.value->shape()) << ", element "
            << index_string(e, slot.value->shape()) << ": analytic " << analytic << ", numeric " << numeric
            << " (|difference| " << error << " > atol " << options.atol << " + rtol " << options.rtol
            << " * |numeric|)";
        result.message = msg.str();
      }
    }
  }
  tape.clear();
  if (!result.passed) result.message += largest_difference(result, largest_at);
  return result;
}

}  // namespace attend
