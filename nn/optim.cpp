// Optimizers, gradient clipping and learning-rate schedules (optim.hpp). Each update is written in the order of
// operations of PyTorch 1.13's single-tensor implementation (torch/optim/sgd.py, adam.py, adamw.py), on the flat
// storage of each parameter. SGD's updates of the form `xt::noalias(m) = β m + ...` read and write the same element
// only, so no temporary is needed (it is what `xt::noalias(m) += ...` does); without noalias xtensor would allocate
// one per tensor per step. Adam's is one loop over the elements, which touches each element's numbers once (as four
// xtensor expressions it took 2.1 times as long: a training step's 9 million parameters, docs/performance.md).
#include "nn/optim.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <unordered_set>
#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>

namespace attend::nn {

namespace {

// A hyper-parameter as the error messages print it: 6 significant digits (0.9, -1, 1e-08, nan), or 17 when those
// would not read back as the same number.
std::string show(double value) {
  std::ostringstream out;
  out << value;
  if (std::isfinite(value) && std::strtod(out.str().c_str(), nullptr) != value) {
    out.str("");
    out.precision(17);
    out << value;
  }
  return out.str();
}

// Throws "<who>: invalid <what> <value> (must be <rule>)" unless ok.
void require(bool ok, const std::string& who, const char* what, double value, const char* rule) {
  if (!ok) throw std::invalid_argument(who + ": invalid " + what + " " + show(value) + " (must be " + rule + ")");
}

bool is_nonnegative(double x) { return std::isfinite(x) && x >= 0.0; }

// The scalars of an Adam or AdamW step, in T.
template <class T>
struct AdamStep {
  T step_size, bias_correction2_sqrt, beta1, one_minus_beta1, beta2, one_minus_beta2, eps;
  bool l2;  // Adam with weight decay: g ← g + λ w
  T weight_decay;
  bool decoupled;  // AdamW: w ← (1 − ηλ) w first
  T decay_factor;
  T gradient_factor;  // StepExtras::gradient_factor: g is read as s·g (1: exactly g)
};

// The update of n elements of a parameter (w, its gradient and the moments m and v; v_max, the running maximum of v,
// with amsgrad) in one pass, each element's numbers read once, the operations in the order of PyTorch's (and of the
// equations in optim.hpp). Compiled with -fno-math-errno and -fno-trapping-math (meson.build), GCC turns the loop's
// choices into selects and vectorises it.
template <class T, bool amsgrad>
void adam_elements(std::size_t n, T* w, const T* grad, T* m, T* v, T* v_max, const AdamStep<T> s) {
  for (std::size_t e = 0; e < n; ++e) {
    const T w0 = s.decoupled ? w[e] * s.decay_factor : w[e];
    const T scaled = grad[e] * s.gradient_factor;
    const T g = s.l2 ? scaled + s.weight_decay * w0 : scaled;
    m[e] = s.beta1 * m[e] + s.one_minus_beta1 * g;
    v[e] = s.beta2 * v[e] + s.one_minus_beta2 * g * g;
    T second = v[e];
    if constexpr (amsgrad) second = v_max[e] = v_max[e] > v[e] ? v_max[e] : v[e];
    w[e] = w0 - s.step_size * m[e] / (std::sqrt(second) / s.bias_correction2_sqrt + s.eps);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Optimizer

template <class T>
Optimizer<T>::Optimizer(std::string name, std::string kind, NamedParameters<T> parameters, double learning_rate)
    : lr(learning_rate), parameters_(std::move(parameters)), name_(std::move(name)), kind_(std::move(kind)) {
  require(is_nonnegative(lr), name_, "learning rate", lr, "finite and >= 0");
  if (parameters_.empty()) throw std::invalid_argument(name_ + ": empty parameter list");
  std::unordered_set<const Parameter<T>*> seen_parameters;
  std::unordered_set<std::string> seen_names;
  for (const auto& [param_name, p] : parameters_) {
    if (p == nullptr) throw std::invalid_argument(name_ + ": parameter \"" + param_name + "\" is a null pointer");
    if (!seen_parameters.insert(p).second) {
      throw std::invalid_argument(name_ + ": parameter \"" + param_name + "\" appears twice in the list");
    }
    if (!seen_names.insert(param_name).second) {
      throw std::invalid_argument(name_ + ": two parameters are named \"" + param_name + "\"");
    }
  }
}

template <class T>
std::size_t Optimizer<T>::add_buffer(const std::string& quantity) {
  Buffer buffer{quantity, {}};
  buffer.tensors.reserve(parameters_.size());
  for (const auto& named : parameters_) buffer.tensors.emplace_back(named.second->value.shape());
  buffers_.push_back(std::move(buffer));
  return buffers_.size() - 1;
}

template <class T>
std::int64_t Optimizer<T>::step_count() const {
  // A state restored from a checkpoint must hold a step count: a whole number in [0, 2^53].
  if (step_.shape() != Shape{1}) {
    throw std::runtime_error(name_ + ": state \"optimizer." + kind_ + ".step\" has shape " + to_string(step_.shape()) +
                             ", expected (1,)");
  }
  const double count = static_cast<double>(step_.data()[0]);
  if (!(count >= 0.0 && count <= 9007199254740992.0) || std::floor(count) != count) {
    throw std::runtime_error(name_ + ": state \"optimizer." + kind_ + ".step\" holds " + show(count) +
                             ", not a step count");
  }
  return static_cast<std::int64_t>(count);
}

template <class T>
void Optimizer<T>::step(const Executor& executor, const StepExtras& extras) {
  require(is_nonnegative(lr), name_, "learning rate", lr, "finite and >= 0");
  require(is_nonnegative(extras.gradient_factor), name_, "gradient factor", extras.gradient_factor, "finite and >= 0");
  for (const auto& [param_name, p] : parameters_) {
    if (p->grad.shape() != p->value.shape()) {
      throw std::invalid_argument(name_ + ": parameter \"" + param_name + "\" has shape " +
                                  to_string(p->value.shape()) + " but its gradient has shape " +
                                  to_string(p->grad.shape()));
    }
  }
  const std::int64_t t = step_count() + 1;
  // A state restored from a checkpoint must fit the parameters (a loader could have replaced a tensor).
  for (const Buffer& buffer : buffers_) {
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
      if (buffer.tensors[i].shape() != parameters_[i].second->value.shape()) {
        throw std::runtime_error(name_ + ": state \"optimizer." + kind_ + "." + buffer.quantity + "." +
                                 parameters_[i].first + "\" has shape " + to_string(buffer.tensors[i].shape()) +
                                 " but the parameter has " + to_string(parameters_[i].second->value.shape()));
      }
    }
  }
  update(t, executor, extras);
  step_.data()[0] = static_cast<T>(t);
}

void for_each_part(const std::vector<std::size_t>& sizes, std::size_t from, std::size_t to,
                   const std::function<void(std::size_t, std::size_t, std::size_t)>& f) {
  std::size_t start = 0;  // of array i in the concatenation
  for (std::size_t i = 0; i < sizes.size() && start < to; start += sizes[i], ++i) {
    const std::size_t begin = std::max(from, start), end = std::min(to, start + sizes[i]);
    if (begin < end) f(i, begin - start, end - start);
  }
}

template <class T>
void Optimizer<T>::for_each_part(const Executor& executor,
                                 const std::function<void(std::size_t, std::size_t, std::size_t)>& f) const {
  if (!executor) {
    for (std::size_t i = 0; i < parameters_.size(); ++i) f(i, 0, parameters_[i].second->value.size());
    return;
  }
  std::vector<std::size_t> sizes;
  std::size_t total = 0;
  for (const auto& named : parameters_) total += sizes.emplace_back(named.second->value.size());
  executor(total, [&](std::size_t from, std::size_t to) { nn::for_each_part(sizes, from, to, f); });
}

template <class T>
void zero_grad(const NamedParameters<T>& parameters, const Executor& executor) {
  std::vector<std::size_t> sizes;
  std::size_t total = 0;
  for (const auto& named : parameters) {
    Parameter<T>& p = *named.second;
    if (p.grad.shape() != p.value.shape()) p.grad = Tensor<T>(p.value.shape(), uninitialized);
    total += sizes.emplace_back(p.value.size());
  }
  const auto zero = [&](std::size_t from, std::size_t to) {
    for_each_part(sizes, from, to, [&](std::size_t i, std::size_t begin, std::size_t end) {
      T* g = parameters[i].second->grad.data();
      std::fill(g + begin, g + end, T(0));
    });
  };
  if (executor) {
    executor(total, zero);
  } else {
    zero(0, total);
  }
}

template <class T>
void Optimizer<T>::zero_grad(const Executor& executor) {
  nn::zero_grad(parameters_, executor);
}

template <class T>
std::vector<std::pair<std::string, const Tensor<T>*>> Optimizer<T>::state() const {
  const std::string prefix = "optimizer." + kind_ + ".";
  std::vector<std::pair<std::string, const Tensor<T>*>> out;
  out.emplace_back(prefix + "step", &step_);
  for (const Buffer& buffer : buffers_) {
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
      out.emplace_back(prefix + buffer.quantity + "." + parameters_[i].first, &buffer.tensors[i]);
    }
  }
  return out;
}

template <class T>
std::vector<std::pair<std::string, Tensor<T>*>> Optimizer<T>::state_slots() {
  std::vector<std::pair<std::string, Tensor<T>*>> out;
  for (const auto& [name, tensor] : state()) out.emplace_back(name, const_cast<Tensor<T>*>(tensor));
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Sgd

template <class T>
Sgd<T>::Sgd(NamedParameters<T> parameters, const SgdOptions& options)
    : Optimizer<T>("Sgd", "sgd", std::move(parameters), options.lr),
      momentum_(options.momentum),
      dampening_(options.dampening),
      weight_decay_(options.weight_decay),
      nesterov_(options.nesterov) {
  require(is_nonnegative(momentum_), "Sgd", "momentum", momentum_, "finite and >= 0");
  require(std::isfinite(dampening_), "Sgd", "dampening", dampening_, "finite");
  require(is_nonnegative(weight_decay_), "Sgd", "weight_decay", weight_decay_, "finite and >= 0");
  if (nesterov_ && (momentum_ <= 0.0 || dampening_ != 0.0)) {
    throw std::invalid_argument("Sgd: nesterov requires momentum > 0 and dampening = 0 (got momentum " +
                                show(momentum_) + ", dampening " + show(dampening_) + ")");
  }
  if (momentum_ != 0.0) momentum_buffer_ = this->add_buffer("momentum_buffer");
}

template <class T>
void Sgd<T>::update(std::int64_t step, const Executor&, const StepExtras& extras) {
  const T lr = static_cast<T>(this->lr);
  const T momentum = static_cast<T>(momentum_);
  const T one_minus_dampening = static_cast<T>(1.0 - dampening_);
  const T weight_decay = static_cast<T>(weight_decay_);
  for (std::size_t i = 0; i < this->parameters_.size(); ++i) {
    Parameter<T>& p = *this->parameters_[i].second;
    auto& w = p.value.flat();  // (n,)
    // g: (n,) the gradient, with the L2 term when there is one (a lazy expression, read element by element)
    auto apply = [&](const auto& g) {
      if (momentum_ == 0.0) {
        xt::noalias(w) = w - lr * g;
        return;
      }
      auto& b = this->buffer(momentum_buffer_, i);  // (n,) momentum buffer
      if (step == 1) {
        xt::noalias(b) = g;
      } else {
        xt::noalias(b) = momentum * b + one_minus_dampening * g;
      }
      if (nesterov_) {
        xt::noalias(w) = w - lr * (g + momentum * b);
      } else {
        xt::noalias(w) = w - lr * b;
      }
    };
    const T scale = static_cast<T>(extras.gradient_factor);
    if (scale != T(1)) {
      if (weight_decay_ != 0.0) {
        apply(p.grad.flat() * scale + weight_decay * w);
      } else {
        apply(p.grad.flat() * scale);
      }
    } else if (weight_decay_ != 0.0) {
      apply(p.grad.flat() + weight_decay * w);
    } else {
      apply(p.grad.flat());
    }
    if (extras.updated) extras.updated(i, 0, w.size());
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Adam, AdamW

template <class T>
Adam<T>::Adam(NamedParameters<T> parameters, const AdamOptions& options)
    : Adam("Adam", "adam", std::move(parameters), options, false) {}

template <class T>
Adam<T>::Adam(std::string name, std::string kind, NamedParameters<T> parameters, const AdamOptions& options,
              bool decoupled)
    : Optimizer<T>(std::move(name), std::move(kind), std::move(parameters), options.lr),
      beta1_(options.beta1),
      beta2_(options.beta2),
      eps_(options.eps),
      weight_decay_(options.weight_decay),
      amsgrad_(options.amsgrad),
      decoupled_(decoupled) {
  const std::string& who = this->name();
  require(beta1_ >= 0.0 && beta1_ < 1.0, who, "beta1", beta1_, "in [0, 1)");
  require(beta2_ >= 0.0 && beta2_ < 1.0, who, "beta2", beta2_, "in [0, 1)");
  require(is_nonnegative(eps_), who, "eps", eps_, "finite and >= 0");
  require(is_nonnegative(weight_decay_), who, "weight_decay", weight_decay_, "finite and >= 0");
  exp_avg_ = this->add_buffer("exp_avg");
  exp_avg_sq_ = this->add_buffer("exp_avg_sq");
  if (amsgrad_) max_exp_avg_sq_ = this->add_buffer("max_exp_avg_sq");
}

// Adam's slices when StepExtras::updated reads the new weights: 2¹⁴ elements, whose weights, gradients and moments
// (256 KB in float) are still in a 1 MB L2 cache when updated() reads them — a thread's part of a parameter can be
// megabytes (half of the translation model's 5.3 million output weights).
constexpr std::size_t updated_slice = std::size_t{1} << 14;

template <class T>
void Adam<T>::update(std::int64_t step, const Executor& executor, const StepExtras& extras) {
  // The scalars in double, as PyTorch computes them in Python, then rounded to T once.
  const double bias_correction1 = 1.0 - std::pow(beta1_, static_cast<double>(step));
  const double bias_correction2 = 1.0 - std::pow(beta2_, static_cast<double>(step));
  AdamStep<T> s;
  s.step_size = static_cast<T>(this->lr / bias_correction1);
  s.bias_correction2_sqrt = static_cast<T>(std::sqrt(bias_correction2));
  s.beta1 = static_cast<T>(beta1_), s.one_minus_beta1 = static_cast<T>(1.0 - beta1_);
  s.beta2 = static_cast<T>(beta2_), s.one_minus_beta2 = static_cast<T>(1.0 - beta2_);
  s.eps = static_cast<T>(eps_);
  s.l2 = !decoupled_ && weight_decay_ != 0.0;
  s.weight_decay = static_cast<T>(weight_decay_);
  s.decoupled = decoupled_;
  s.decay_factor = static_cast<T>(1.0 - this->lr * weight_decay_);  // AdamW's 1 − ηλ
  s.gradient_factor = static_cast<T>(extras.gradient_factor);
  // elements [part_begin, part_end) of parameter i (the whole parameter, or a thread's share of it: every element's
  // update reads only that element, so the result is the same however the elements are shared out); with
  // extras.updated, in slices of updated_slice elements, each handed to updated() as soon as it is done
  const std::size_t slice = extras.updated ? updated_slice : std::numeric_limits<std::size_t>::max();
  this->for_each_part(executor, [&](std::size_t i, std::size_t part_begin, std::size_t part_end) {
    for (std::size_t begin = part_begin, end = 0; begin < part_end; begin = end) {
      end = part_end - begin > slice ? begin + slice : part_end;
      T* w = this->parameters_[i].second->value.data() + begin;
      const T* grad = this->parameters_[i].second->grad.data() + begin;
      T* m = this->buffer(exp_avg_, i).data() + begin;     // first moment
      T* v = this->buffer(exp_avg_sq_, i).data() + begin;  // second moment
      if (amsgrad_) {
        adam_elements<T, true>(end - begin, w, grad, m, v, this->buffer(max_exp_avg_sq_, i).data() + begin, s);
      } else {
        adam_elements<T, false>(end - begin, w, grad, m, v, nullptr, s);
      }
      if (extras.updated) extras.updated(i, begin, end);
    }
  });
}

template <class T>
AdamW<T>::AdamW(NamedParameters<T> parameters, const AdamWOptions& options)
    : Adam<T>("AdamW", "adamw", std::move(parameters),
              AdamOptions{options.lr, options.beta1, options.beta2, options.eps, options.weight_decay, options.amsgrad},
              true) {}

// ---------------------------------------------------------------------------------------------------------------
// clip_grad_norm

template <class T>
double chunk_squares(const T* x, std::size_t n) {
  // eight partial sums (in a fixed order, so that the loop vectorises)
  double partial[8] = {};
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    for (std::size_t l = 0; l < 8; ++l) partial[l] += static_cast<double>(x[k + l]) * static_cast<double>(x[k + l]);
  }
  double s = 0;
  for (const double p : partial) s += p;
  for (; k < n; ++k) s += static_cast<double>(x[k]) * static_cast<double>(x[k]);
  return s;
}

template <class T>
double gradient_squares(const NamedParameters<T>& parameters, const Executor& executor) {
  // the chunks: (parameter, first element), and where each starts in the concatenation of all gradients
  std::vector<std::pair<std::size_t, std::size_t>> chunks;
  std::vector<std::size_t> starts;
  std::size_t total = 0;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const auto& [name, p] = parameters[i];
    if (p == nullptr) throw std::invalid_argument("clip_grad_norm: parameter \"" + name + "\" is a null pointer");
    for (std::size_t at = 0; at < p->grad.size(); at += norm_chunk) {
      chunks.emplace_back(i, at);
      starts.push_back(total + at);
    }
    total += p->grad.size();
  }
  std::vector<double> sums(chunks.size());
  const auto run = [&](std::size_t from, std::size_t to) {
    // the chunks that start in [from, to): every chunk once, whatever the ranges
    const auto first = std::lower_bound(starts.begin(), starts.end(), from) - starts.begin();
    const auto last = std::lower_bound(starts.begin(), starts.end(), to) - starts.begin();
    for (auto c = static_cast<std::size_t>(first); c < static_cast<std::size_t>(last); ++c) {
      const Tensor<T>& g = parameters[chunks[c].first].second->grad;
      sums[c] = chunk_squares(g.data() + chunks[c].second, std::min(norm_chunk, g.size() - chunks[c].second));
    }
  };
  if (executor) {
    executor(total, run);
  } else {
    run(0, total);
  }
  double sum_of_squares = 0.0;
  for (const double s : sums) sum_of_squares += s;
  return sum_of_squares;
}

template <class T>
T clip_factor(double norm, double max_norm) {
  require(max_norm >= 0.0, "clip_factor", "max_norm", max_norm, ">= 0");
  if (!std::isfinite(norm)) return T(1);
  const double coefficient = max_norm / (norm + 1e-6);
  return coefficient < 1.0 ? static_cast<T>(coefficient) : T(1);
}

template <class T>
T clip_grad_norm(const NamedParameters<T>& parameters, double max_norm, const Executor& executor) {
  require(max_norm >= 0.0, "clip_grad_norm", "max_norm", max_norm, ">= 0");
  const double norm = std::sqrt(gradient_squares(parameters, executor));
  const T factor = clip_factor<T>(norm, max_norm);
  if (factor != T(1)) {
    std::vector<std::size_t> sizes;
    std::size_t total = 0;
    for (const auto& named : parameters) total += sizes.emplace_back(named.second->grad.size());
    const auto scale = [&](std::size_t from, std::size_t to) {
      for_each_part(sizes, from, to, [&](std::size_t i, std::size_t begin, std::size_t end) {
        T* g = parameters[i].second->grad.data();
        for (std::size_t k = begin; k < end; ++k) g[k] *= factor;
      });
    };
    if (executor) {
      executor(total, scale);
    } else {
      scale(0, total);
    }
  }
  return static_cast<T>(norm);
}

// ---------------------------------------------------------------------------------------------------------------
// Schedules

StepLR::StepLR(double& lr, const std::string& optimizer, std::int64_t step_size, double gamma)
    : lr_(&lr), step_size_(step_size), gamma_(gamma) {
  const std::string who = "StepLR(" + optimizer + ")";
  require(step_size >= 1, who, "step_size", static_cast<double>(step_size), ">= 1");
  require(is_nonnegative(gamma), who, "gamma", gamma, "finite and >= 0");
}

void StepLR::step() {
  ++state_.epoch;
  if (state_.epoch % step_size_ == 0) *lr_ *= gamma_;
}

void StepLR::load_state(const State& state) {
  require(state.epoch >= 0, "StepLR", "epoch", static_cast<double>(state.epoch), ">= 0");
  state_ = state;
}

MultiStepLR::MultiStepLR(double& lr, const std::string& optimizer, std::vector<std::int64_t> milestones, double gamma)
    : lr_(&lr), base_lr_(lr), milestones_(std::move(milestones)), gamma_(gamma) {
  const std::string who = "MultiStepLR(" + optimizer + ")";
  for (const std::int64_t milestone : milestones_) {
    require(milestone >= 0, who, "milestone", static_cast<double>(milestone), ">= 0");
  }
  require(is_nonnegative(gamma), who, "gamma", gamma, "finite and >= 0");
  std::sort(milestones_.begin(), milestones_.end());
  *lr_ = lr_at(state_.epoch);
}

double MultiStepLR::lr_at(std::int64_t s) const {
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), s) - milestones_.begin();
  return base_lr_ * std::pow(gamma_, static_cast<double>(passed));  // γ^0 = 1: η₀ exactly
}

void MultiStepLR::step() {
  ++state_.epoch;
  *lr_ = lr_at(state_.epoch);
}

void MultiStepLR::load_state(const State& state) {
  require(state.epoch >= 0, "MultiStepLR", "epoch", static_cast<double>(state.epoch), ">= 0");
  state_ = state;
  *lr_ = lr_at(state_.epoch);
}

NoamLR::NoamLR(double& lr, const std::string& optimizer, std::size_t d_model, std::int64_t warmup, double factor)
    : lr_(&lr), d_model_(static_cast<double>(d_model)), warmup_(warmup), factor_(factor) {
  const std::string who = "NoamLR(" + optimizer + ")";
  require(d_model >= 1, who, "d_model", d_model_, ">= 1");
  require(warmup >= 1, who, "warmup", static_cast<double>(warmup), ">= 1");
  require(std::isfinite(factor) && factor > 0.0, who, "factor", factor, "finite and > 0");
  *lr_ = lr_at(state_.step);
}

double NoamLR::lr_at(std::int64_t s) const {
  require(s >= 1, "NoamLR", "step", static_cast<double>(s), ">= 1");
  const double step = static_cast<double>(s);
  return factor_ / std::sqrt(d_model_) *
         std::min(1.0 / std::sqrt(step), step / (static_cast<double>(warmup_) * std::sqrt(warmup_)));
}

void NoamLR::step() {
  ++state_.step;
  *lr_ = lr_at(state_.step);
}

void NoamLR::load_state(const State& state) {
  require(state.step >= 1, "NoamLR", "step", static_cast<double>(state.step), ">= 1");
  state_ = state;
  *lr_ = lr_at(state_.step);
}

ReduceLROnPlateau::ReduceLROnPlateau(double& lr, const std::string& optimizer, const ReduceLROnPlateauOptions& options)
    : lr_(&lr), options_(options) {
  const std::string who = "ReduceLROnPlateau(" + optimizer + ")";
  require(options.factor >= 0.0 && options.factor < 1.0, who, "factor", options.factor, "in [0, 1)");
  require(options.patience >= 0, who, "patience", static_cast<double>(options.patience), ">= 0");
  require(is_nonnegative(options.threshold), who, "threshold", options.threshold, "finite and >= 0");
  require(options.cooldown >= 0, who, "cooldown", static_cast<double>(options.cooldown), ">= 0");
  require(is_nonnegative(options.min_lr), who, "min_lr", options.min_lr, "finite and >= 0");
  require(is_nonnegative(options.eps), who, "eps", options.eps, "finite and >= 0");
  const double worst = std::numeric_limits<double>::infinity();
  state_.best = options.mode == PlateauMode::min ? worst : -worst;
}

bool ReduceLROnPlateau::is_better(double metric) const {
  const double best = state_.best, threshold = options_.threshold;
  const bool relative = options_.threshold_mode == ThresholdMode::rel;
  if (options_.mode == PlateauMode::min) {
    return relative ? metric < best * (1.0 - threshold) : metric < best - threshold;
  }
  return relative ? metric > best * (threshold + 1.0) : metric > best + threshold;
}

void ReduceLROnPlateau::step(double metric) {
  ++state_.epoch;
  if (is_better(metric)) {
    state_.best = metric;
    state_.num_bad_epochs = 0;
  } else {
    ++state_.num_bad_epochs;
  }
  if (in_cooldown()) {
    --state_.cooldown_counter;
    state_.num_bad_epochs = 0;  // bad epochs during a cooldown do not count
  }
  if (state_.num_bad_epochs > options_.patience) {
    const double old_lr = *lr_;
    const double new_lr = std::max(old_lr * options_.factor, options_.min_lr);
    if (old_lr - new_lr > options_.eps) *lr_ = new_lr;
    state_.cooldown_counter = options_.cooldown;
    state_.num_bad_epochs = 0;
  }
}

void ReduceLROnPlateau::load_state(const State& state) {
  require(state.epoch >= 0, "ReduceLROnPlateau", "epoch", static_cast<double>(state.epoch), ">= 0");
  require(state.num_bad_epochs >= 0, "ReduceLROnPlateau", "num_bad_epochs", static_cast<double>(state.num_bad_epochs),
          ">= 0");
  require(state.cooldown_counter >= 0, "ReduceLROnPlateau", "cooldown_counter",
          static_cast<double>(state.cooldown_counter), ">= 0");
  state_ = state;
}

template class Optimizer<float>;
template class Optimizer<double>;
template class Sgd<float>;
template class Sgd<double>;
template class Adam<float>;
template class Adam<double>;
template class AdamW<float>;
template class AdamW<double>;
template void zero_grad(const NamedParameters<float>&, const Executor&);
template void zero_grad(const NamedParameters<double>&, const Executor&);
template float clip_grad_norm(const NamedParameters<float>&, double, const Executor&);
template double clip_grad_norm(const NamedParameters<double>&, double, const Executor&);
template double gradient_squares(const NamedParameters<float>&, const Executor&);
template double gradient_squares(const NamedParameters<double>&, const Executor&);
template float clip_factor<float>(double, double);
template double clip_factor<double>(double, double);
template double chunk_squares(const float*, std::size_t);
template double chunk_squares(const double*, std::size_t);

}  // namespace attend::nn
