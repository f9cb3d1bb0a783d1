// Optimizers, gradient clipping and learning-rate schedules, with exactly the semantics of PyTorch 1.13's
// torch.optim.SGD / Adam / AdamW, torch.nn.utils.clip_grad_norm_ and torch.optim.lr_scheduler.StepLR /
// MultiStepLR / ReduceLROnPlateau, so that the same gradients give the same parameters (tests/nn/test_optim.cpp replays
// PyTorch's steps). An optimizer updates the (name, Parameter*) pairs of Module::parameters() in place from their
// .grad, after backward. Chapter: docs/02-encoder.md; API: docs/reference/nn.md.
//
//   tape.backward(loss);
//   clip_grad_norm(params, 1.0);    // optional
//   optimizer.step();               // p.value updated from p.grad
//   optimizer.zero_grad();          // p.grad = 0 for the next batch
//
// Hyper-parameters are doubles (like PyTorch's Python floats); the update itself runs in T on each parameter's flat
// storage, one xtensor expression per quantity (SGD) or one loop over the elements (Adam, AdamW). Notation in the
// equations: g is p.grad, w is p.value, t the number of this step (1 for the first), η the learning rate `lr`, λ the
// weight decay.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/tensor.hpp"
#include "nn/module.hpp"
#include "runtime/executor.hpp"

namespace attend::nn {

// What an optimizer does each step(), and the state it keeps between steps.
//
// State for checkpoints: state() lists every tensor the updates depend on, by a stable name —
//   "optimizer.<kind>.step"                      (1,)  the number of steps taken
//   "optimizer.<kind>.<quantity>.<param name>"   shaped like the parameter (momentum_buffer, exp_avg, ...)
// with <kind> sgd, adam or adamw (so a state cannot be loaded into the wrong kind of optimizer). Save what state()
// points to (it is nn::NamedTensors, save_checkpoint's `extra`), restore into state_slots() (nn::NamedTensorSlots,
// load_checkpoint's `extra`) of an optimizer built with the same hyper-parameters over the same parameters, and
// training continues bit-identically. The learning rate is a double and not a tensor: keep `lr` (and a schedule's
// State) in the checkpoint's JSON metadata, which round-trips doubles exactly. The step count is stored in T, like
// PyTorch's float32 `state["step"]`: in float it counts exactly up to 2^24 = 16,777,216 steps and then stops growing,
// which changes no update (1 - β^t is 1 in float long before).
// The pointers stay valid as long as the optimizer is alive and not moved.
// Runs f(begin, end) over ranges that together cover [0, count) exactly once (runtime/executor.hpp). Empty: not used.
using attend::Executor;

// f(i, begin, end) for the parts of the arrays (of the given sizes, one after the other) that elements [from, to) of
// their concatenation cover.
void for_each_part(const std::vector<std::size_t>& sizes, std::size_t from, std::size_t to,
                   const std::function<void(std::size_t, std::size_t, std::size_t)>& f);

// What a step() may do besides its update, for a training loop that would otherwise make more passes over every
// parameter's numbers (apps/train.cpp). The defaults change nothing.
struct StepExtras {
  // The gradients are read as s·g, with s = gradient_factor rounded to T: clip_grad_norm's multiplication (clip_factor
  // below) made inside the update instead of in a pass of its own; p.grad itself is left as it is. With the factor
  // clip_grad_norm would use, the new values are exactly those of clip_grad_norm followed by step(). Finite and ≥ 0
  // (std::invalid_argument otherwise). Not PyTorch's fused `grad_scale`, a loss scale that its optimizers divide by.
  double gradient_factor = 1.0;
  // Called as updated(i, begin, end) once elements [begin, end) of parameter i hold their new values, on the thread
  // that updated them, while they are still in its cache (nn::Trainer passes Products::updated, which rounds a bf16
  // copy there).
  // Every element of every parameter is in exactly one call; calls on different threads overlap.
  std::function<void(std::size_t, std::size_t, std::size_t)> updated;
};

template <class T>
class Optimizer {
 public:
  // The learning rate η of the next step. Schedules change it; so may the user. Checked (finite, ≥ 0) at each step().
  double lr;

  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  Optimizer(Optimizer&&) = default;
  Optimizer& operator=(Optimizer&&) = default;

  // One update of every parameter from its gradient. Throws std::invalid_argument for an invalid lr or a gradient whose
  // shape is not its parameter's, and std::runtime_error for a restored state of the wrong shape or step count.
  // With an executor (nn::BatchParallel::executor()), Adam's and AdamW's elementwise work is cut into ranges of all
  // parameters' elements and shared out over its threads; the numbers are the same on any number of threads. Without
  // one (the default), the calling thread does it all.
  void step(const Executor& executor = {}, const StepExtras& extras = {});
  // Sets every parameter's gradient to zero (PyTorch 1.13's zero_grad(set_to_none=False)), in place; on the executor's
  // threads when one is given.
  void zero_grad(const Executor& executor = {});
  // The number of steps taken (restored with the state; std::runtime_error when a restored one is not a count).
  std::int64_t step_count() const;

  const NamedParameters<T>& parameters() const { return parameters_; }
  // "Sgd", "Adam", "AdamW": the name used in error messages.
  const std::string& name() const { return name_; }

  // The state tensors by name (see above), for saving; state_slots() the same tensors, for restoring into.
  std::vector<std::pair<std::string, const Tensor<T>*>> state() const;
  std::vector<std::pair<std::string, Tensor<T>*>> state_slots();

 protected:
  // Validates the parameter list (non-empty, no null pointers, no parameter or name twice) and lr.
  // `kind` is the lower-case word of the state names ("sgd").
  Optimizer(std::string name, std::string kind, NamedParameters<T> parameters, double lr);

  // The update itself, for every parameter; `step` is this step's number t (1 for the first). An optimizer of one's
  // own keeps StepExtras' contract here: it reads every gradient as s·g, and calls `updated` for every element, once,
  // after its update (Sgd and Adam show how). The extras belong to the update because what they save is a pass over
  // every parameter's numbers: only the loop that already reads them can take them in.
  virtual void update(std::int64_t step, const Executor& executor, const StepExtras& extras) = 0;

  // Registers one zero-initialised state tensor per parameter, shaped like it, named "<quantity>.<param name>";
  // returns the handle buffer() takes. Called from constructors only.
  std::size_t add_buffer(const std::string& quantity);
  // The state tensor of `quantity` (a handle from add_buffer) for parameter `index`, as flat storage.
  typename Tensor<T>::storage_type& buffer(std::size_t quantity, std::size_t index) {
    return buffers_[quantity].tensors[index].flat();
  }

  NamedParameters<T> parameters_;
  // f(i, begin, end) on elements [begin, end) of parameter i, for every element of every parameter; on the executor's
  // threads when there is one (different i, or different ranges of one i, at once).
  void for_each_part(const Executor& executor,
                     const std::function<void(std::size_t, std::size_t, std::size_t)>& f) const;

 private:
  struct Buffer {
    std::string quantity;
    std::vector<Tensor<T>> tensors;  // one per parameter, in the order of parameters_
  };
  std::string name_;
  std::string kind_;
  Tensor<T> step_ = Tensor<T>(Shape{1});  // (1,): the number of steps taken
  std::vector<Buffer> buffers_;
};

// Stochastic gradient descent with momentum, torch.optim.SGD:
//   g ← g + λ w                                       (weight_decay λ > 0: L2 penalty added to the gradient)
//   b ← g                              at t = 1       (momentum μ > 0: the buffer starts at the first gradient,
//   b ← μ b + (1 − τ) g                at t > 1        not at zero; τ is the dampening)
//   d ← g + μ b   (nesterov)    d ← b   (momentum)    d ← g   (μ = 0)
//   w ← w − η d
// State: momentum_buffer (b), only when μ > 0. Nesterov needs μ > 0 and τ = 0 (std::invalid_argument otherwise).
struct SgdOptions {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

template <class T>
class Sgd : public Optimizer<T> {
 public:
  Sgd(NamedParameters<T> parameters, const SgdOptions& options);
  double momentum() const { return momentum_; }
  double dampening() const { return dampening_; }
  double weight_decay() const { return weight_decay_; }
  bool nesterov() const { return nesterov_; }

 protected:
  void update(std::int64_t step, const Executor& executor, const StepExtras& extras) override;

 private:
  double momentum_, dampening_, weight_decay_;
  bool nesterov_;
  std::size_t momentum_buffer_ = 0;
};

// Adam, torch.optim.Adam (β₁, β₂ = beta1, beta2; ε = eps):
//   g ← g + λ w                                       (weight_decay λ > 0: L2 penalty added to the gradient)
//   m ← β₁ m + (1 − β₁) g                             first moment,  starts at 0
//   v ← β₂ v + (1 − β₂) g²                            second moment, starts at 0
//   v̂ ← max(v̂, v)                                    (amsgrad only; v̂ replaces v below)
//   w ← w − (η / (1 − β₁ᵗ)) · m / (√v / √(1 − β₂ᵗ) + ε)
// The bias corrections are applied to the step size and to √v, and ε is added after the square root and after the
// correction: this is the paper's Algorithm 1, η m̂ / (√v̂ + ε) with m̂ = m / (1 − β₁ᵗ), v̂ = v / (1 − β₂ᵗ) (PyTorch's
// placement), not the paper's "efficient" form η √(1 − β₂ᵗ) / (1 − β₁ᵗ) · m / (√v + ε) used by TensorFlow, whose ε
// acts 1 / √(1 − β₂ᵗ) times larger (32× at t = 1 with β₂ = 0.999). The first step moves every weight by about η
// (m̂ / √v̂ = ±1 at t = 1).
// State: exp_avg (m), exp_avg_sq (v), and max_exp_avg_sq (v̂) with amsgrad.
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool amsgrad = false;
};

template <class T>
class Adam : public Optimizer<T> {
 public:
  Adam(NamedParameters<T> parameters, const AdamOptions& options);
  double beta1() const { return beta1_; }
  double beta2() const { return beta2_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }
  bool amsgrad() const { return amsgrad_; }

 protected:
  // For AdamW: `decoupled` applies the weight decay to w directly instead of adding it to g.
  Adam(std::string name, std::string kind, NamedParameters<T> parameters, const AdamOptions& options, bool decoupled);
  void update(std::int64_t step, const Executor& executor, const StepExtras& extras) override;

 private:
  double beta1_, beta2_, eps_, weight_decay_;
  bool amsgrad_, decoupled_;
  std::size_t exp_avg_ = 0, exp_avg_sq_ = 0, max_exp_avg_sq_ = 0;
};

// AdamW, torch.optim.AdamW: Adam with decoupled weight decay (Loshchilov & Hutter). Before the Adam update above
// (which then has no λ w in g):
//   w ← w · (1 − η λ)
// so the decay does not pass through m and v. Note the default λ = 1e-2, as PyTorch's (Adam's is 0).
struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
};

template <class T>
class AdamW : public Adam<T> {
 public:
  AdamW(NamedParameters<T> parameters, const AdamWOptions& options);
};

// Sets every gradient of `parameters` to zero, in place (a gradient not shaped like its parameter is made so first);
// on the executor's threads when one is given. Optimizer::zero_grad does this for the optimizer's parameters.
template <class T>
void zero_grad(const NamedParameters<T>& parameters, const Executor& executor = {});

// Gradient clipping by global norm, torch.nn.utils.clip_grad_norm_:
//   n = √(Σ over all parameters and elements of g²)          (accumulated in double: each parameter's elements in
//                                                             chunks of 2^16, the chunks' sums added in order, so
//                                                             the executor's threads give the same number)
//   g ← g · max_norm / (n + 1e-6)     when that factor is < 1; otherwise the gradients are left as they are
// Returns n, the norm before clipping. When n is not finite (a NaN or ±inf gradient), returns it and leaves every
// gradient unchanged — unlike PyTorch, which multiplies them by 0 or NaN — so the caller can skip the step:
// `if (!std::isfinite(clip_grad_norm(params, 1.0))) { zero_grad; continue; }`. max_norm must be ≥ 0.
template <class T>
T clip_grad_norm(const NamedParameters<T>& parameters, double max_norm, const Executor& executor = {});

// clip_grad_norm in parts, for a loop that fuses them into its other passes (StepExtras::gradient_factor;
// BatchParallel::step's `squares`): gradient_squares is Σ g² exactly as clip_grad_norm adds it (n is its square
// root), clip_factor what clip_grad_norm multiplies the gradients by — max_norm / (n + 1e-6) rounded to T when that is
// < 1, otherwise 1 — for a finite n; a NaN or ±inf n gives 1. Give clip_factor n = √(gradient_squares) in double, as
// clip_grad_norm does (not its T return value, which can move the factor's last bit); max_norm ≥ 0
// (std::invalid_argument otherwise).
template <class T>
double gradient_squares(const NamedParameters<T>& parameters, const Executor& executor = {});
template <class T>
T clip_factor(double norm, double max_norm);

// How clip_grad_norm adds squares up: each parameter's elements in chunks of norm_chunk, each chunk's squares in
// double in eight partial sums (elements 8j + l into sum l, then the eight sums in order and the last n mod 8
// squares), the chunks' sums then in order. chunk_squares is one chunk's sum.
inline constexpr std::size_t norm_chunk = std::size_t(1) << 16;
template <class T>
double chunk_squares(const T* x, std::size_t n);

// Step decay, torch.optim.lr_scheduler.StepLR: call step() once per epoch, after that epoch's optimizer steps.
// After epoch e (e = 1, 2, ...), η ← η · γ whenever e is a multiple of step_size, so η_e = η₀ γ^⌊e / step_size⌋
// when nothing else changes η. Changes the optimizer's `lr` (it multiplies the current value, as PyTorch's chainable
// form does). step_size ≥ 1, γ ≥ 0. The optimizer must outlive the schedule (and not move).
class StepLR {
 public:
  struct State {
    std::int64_t epoch = 0;  // the number of step() calls so far (PyTorch's last_epoch)
  };

  template <class T>
  StepLR(Optimizer<T>& optimizer, std::int64_t step_size, double gamma = 0.1)
      : StepLR(optimizer.lr, optimizer.name(), step_size, gamma) {}

  void step();
  double lr() const { return *lr_; }
  State state() const { return state_; }
  void load_state(const State& state);

 private:
  StepLR(double& lr, const std::string& optimizer, std::int64_t step_size, double gamma);
  double* lr_;
  std::int64_t step_size_;
  double gamma_;
  State state_;
};

// Drops at milestones, torch.optim.lr_scheduler.MultiStepLR: call step() once per epoch — or once per optimizer step,
// as the seq2seq loop (models/train.hpp) and `attend train --lr-drop` do, with milestones counted in steps. After s
// calls, η = η₀ · γ^k with k the number of milestones ≤ s (PyTorch's closed form, `base_lr * gamma ** k`), η₀ the
// optimizer's `lr` at construction. Sets η outright, so a resumed run that restores the state gets the same η.
// PyTorch's default, chainable form multiplies the current η at each milestone instead: the same η while nothing else
// changes it, to the bit with one milestone (η₀ · γ either way), to the last bits with several (η₀ · γ · γ against η₀ ·
// γ²). Milestones ≥ 0, in any order, repeats counting twice (as PyTorch's Counter does); γ ≥ 0. The optimizer must
// outlive the schedule.
class MultiStepLR {
 public:
  struct State {
    std::int64_t epoch = 0;  // the number of step() calls so far (PyTorch's last_epoch)
  };

  template <class T>
  MultiStepLR(Optimizer<T>& optimizer, std::vector<std::int64_t> milestones, double gamma = 0.1)
      : MultiStepLR(optimizer.lr, optimizer.name(), std::move(milestones), gamma) {}

  // η after s calls to step().
  double lr_at(std::int64_t s) const;
  void step();
  double lr() const { return *lr_; }
  State state() const { return state_; }
  void load_state(const State& state);  // sets η for state.epoch

 private:
  MultiStepLR(double& lr, const std::string& optimizer, std::vector<std::int64_t> milestones, double gamma);
  double* lr_;
  double base_lr_;
  std::vector<std::int64_t> milestones_;  // sorted
  double gamma_;
  State state_;
};

// The Transformer's warm-up then inverse-square-root decay ("Noam", Vaswani et al. 2017, eq. 3, with a factor):
//   η(s) = factor · d^−0.5 · min(s^−0.5, s · warmup^−1.5)      for optimizer step s = 1, 2, …
// η rises linearly for `warmup` steps to its peak factor · (d · warmup)^−0.5 at s = warmup, then falls as 1/√s.
// Construction sets the optimizer's `lr` to η(1); call step() after each optimizer step, which sets η(s + 1) (PyTorch's
// LambdaLR with this lambda and base lr 1 does the same). d (d_model) ≥ 1, warmup ≥ 1, factor finite and > 0. Sets η
// outright (unlike StepLR, which multiplies): a resumed run restores the state and gets the same η. The optimizer must
// outlive the schedule (and not move).
class NoamLR {
 public:
  struct State {
    std::int64_t step = 1;  // the optimizer step the current η is for
  };

  template <class T>
  NoamLR(Optimizer<T>& optimizer, std::size_t d_model, std::int64_t warmup, double factor = 1.0)
      : NoamLR(optimizer.lr, optimizer.name(), d_model, warmup, factor) {}

  // η(s) of this schedule, for any step s ≥ 1.
  double lr_at(std::int64_t s) const;
  void step();
  double lr() const { return *lr_; }
  State state() const { return state_; }
  void load_state(const State& state);  // sets η(state.step)

 private:
  NoamLR(double& lr, const std::string& optimizer, std::size_t d_model, std::int64_t warmup, double factor);
  double* lr_;
  double d_model_;
  std::int64_t warmup_;
  double factor_;
  State state_;
};

// Reduce on plateau, torch.optim.lr_scheduler.ReduceLROnPlateau: call step(metric) once per epoch with a validation
// metric. A metric a is an improvement over the best so far when
//   min/rel: a < best · (1 − threshold)     min/abs: a < best − threshold
//   max/rel: a > best · (1 + threshold)     max/abs: a > best + threshold
// (best starts at +inf for min, −inf for max; with rel and negative metrics this is PyTorch's formula as it is).
// Each epoch without improvement is a bad epoch; bad epochs during a cooldown do not count. When there have been more
// than `patience` bad epochs: η ← max(η · factor, min_lr) if that lowers η by more than eps, then `cooldown` epochs of
// cooldown begin and the bad-epoch count restarts. A NaN metric is never an improvement. The optimizer must outlive
// the schedule (and not move).
enum class PlateauMode { min, max };
enum class ThresholdMode { rel, abs };

struct ReduceLROnPlateauOptions {
  PlateauMode mode = PlateauMode::min;
  double factor = 0.1;  // in [0, 1)
  std::int64_t patience = 10;
  double threshold = 1e-4;
  ThresholdMode threshold_mode = ThresholdMode::rel;
  std::int64_t cooldown = 0;
  double min_lr = 0.0;
  double eps = 1e-8;
};

class ReduceLROnPlateau {
 public:
  struct State {
    std::int64_t epoch = 0;  // the number of step() calls so far
    double best = 0.0;       // the best metric so far (±inf before the first)
    std::int64_t num_bad_epochs = 0;
    std::int64_t cooldown_counter = 0;  // epochs of cooldown left
  };

  template <class T>
  ReduceLROnPlateau(Optimizer<T>& optimizer, const ReduceLROnPlateauOptions& options = {})
      : ReduceLROnPlateau(optimizer.lr, optimizer.name(), options) {}

  void step(double metric);
  double lr() const { return *lr_; }
  bool in_cooldown() const { return state_.cooldown_counter > 0; }
  State state() const { return state_; }
  void load_state(const State& state);

 private:
  ReduceLROnPlateau(double& lr, const std::string& optimizer, const ReduceLROnPlateauOptions& options);
  bool is_better(double metric) const;
  double* lr_;
  ReduceLROnPlateauOptions options_;
  State state_;
};

}  // namespace attend::nn
