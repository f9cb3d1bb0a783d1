// One training step, the one every trainer in attend runs — models::train (chapters 3 to 12), the tutorials that train
// a model of their own, and `attend train`:
//   clear the tape, zero the gradients, L = the batch's loss, backward (p.grad = ∂L/∂p), clip, update, schedule.
// How the loss and gradient of a batch are made is the strategy the Trainer is given: on one tape (OneTape, what
// docs/03-encoder-decoder.md teaches), on several threads each with a tape of its own (ThreadShards,
// nn::BatchParallel), or in several processes (apps/ranks.hpp's shards, Open MPI). The update, the clipping and the
// schedules are the same code whatever the strategy. Chapter: docs/03-encoder-decoder.md; API: docs/reference/nn.md.
//
//   nn::Adam<float> adam(model.parameters(), {1e-3});
//   nn::OneTape<float> one_tape;
//   nn::Trainer<float> trainer(adam, one_tape, /*max_grad_norm=*/1.0);
//   const nn::StepReport<float> report = trainer.step(batch.size(), [&](Tape<float>& tape, std::size_t, std::size_t) {
//     return nn::ShardLoss<float>{model.loss(tape, batch)};
//   });
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "nn/optim.hpp"
#include "nn/parallel.hpp"
#include "precision/products.hpp"

namespace attend::nn {

// The loss of rows [begin, end) of a batch on a tape (a shard's, or the whole batch's: begin 0, end the row count),
// with its weight (ShardLoss: the batch's loss is Σ w_k L_k / Σ w_k over the parts).
template <class T>
using RowsLoss = std::function<ShardLoss<T>(Tape<T>& tape, std::size_t begin, std::size_t end)>;

// How a step's loss and gradient are made.
template <class T>
class GradientStrategy {
 public:
  virtual ~GradientStrategy() = default;
  // Sets p.grad of every parameter in `parameters` to ∂L/∂p, L the loss of rows [0, rows) as `loss` gives it, and
  // returns L. `step` is the number of steps taken before this one (for the random numbers of a step on shards).
  // With `squares`, also sets *squares to gradient_squares(parameters) (clip_grad_norm's n is its square root).
  virtual T loss_and_gradient(std::int64_t step, std::size_t rows, const RowsLoss<T>& loss,
                              const NamedParameters<T>& parameters, double* squares) = 0;
  // Where the optimizer's elementwise work may run (empty: on the calling thread).
  virtual Executor executor() { return {}; }
  // The products the strategy's tapes multiply with (precision/products.hpp; nullptr: float32): the Trainer tells them
  // which weights each update wrote (Products::updated), so that a copy they keep of a weight is never stale.
  virtual const Products* products() const { return nullptr; }
};

// The whole batch on one tape, on the calling thread: the loop docs/03-encoder-decoder.md teaches. Random numbers come
// from the modules' own generators; the products are `products`' (nullptr: float32), which must outlive the strategy.
template <class T>
class OneTape final : public GradientStrategy<T> {
 public:
  explicit OneTape(const Products* products = nullptr) {
    context_.products = products;
    tape_.set_context(&context_);
  }
  OneTape(const OneTape&) = delete;  // the tape points at the context
  OneTape& operator=(const OneTape&) = delete;
  T loss_and_gradient(std::int64_t step, std::size_t rows, const RowsLoss<T>& loss,
                      const NamedParameters<T>& parameters, double* squares) override;
  const Products* products() const override { return context_.products; }
  // The tape of the last step, e.g. to read values recorded on it; valid until the next step.
  Tape<T>& tape() { return tape_; }

 private:
  Context context_;
  Tape<T> tape_;
};

// The seed of the random numbers of step `step` on shards: a function of the training seed and the step alone, so
// that a resumed run draws the same numbers (splitmix64's finaliser).
std::uint64_t step_seed(std::uint64_t seed, std::int64_t step);

// The batch's rows cut into one shard a thread (nn::BatchParallel: each shard on a tape of its own, the gradients added
// in shard order), weighted by ShardLoss::weight. On more than one thread, the shards of step s draw their random
// numbers from generators seeded from step_seed(seed, s) and the shard's index (BatchParallel::seed_shards): the same
// numbers whichever thread runs first, never one module's stream from two threads at once; on one thread, from the
// modules' own streams, as OneTape. The optimizer's elementwise work runs on the same threads. Every shard multiplies
// with `products` (nullptr: float32), which must outlive the strategy.
template <class T>
class ThreadShards final : public GradientStrategy<T> {
 public:
  ThreadShards(std::size_t threads, std::uint64_t seed, const Products* products = nullptr)
      : parallel_(threads, products), seed_(seed), products_(products) {}
  T loss_and_gradient(std::int64_t step, std::size_t rows, const RowsLoss<T>& loss,
                      const NamedParameters<T>& parameters, double* squares) override;
  Executor executor() override { return parallel_.executor(); }
  const Products* products() const override { return products_; }
  BatchParallel<T>& parallel() { return parallel_; }

 private:
  BatchParallel<T> parallel_;
  std::uint64_t seed_;
  const Products* products_;
};

// What a step did.
template <class T>
struct StepReport {
  T loss = 0;            // the batch's loss, before the update
  T norm = 0;            // the gradient's global norm before clipping (0 when the Trainer does not clip)
  bool updated = false;  // false: the loss or the norm was not finite, and nothing was changed
};

// The training step: an optimizer, the strategy that makes the gradient, clipping and schedules.
template <class T>
class Trainer {
 public:
  // Clips the gradient to a global norm of max_grad_norm before each update (nn::clip_grad_norm); 0: no clipping.
  // The optimizer and the strategy must outlive the trainer. max_grad_norm finite and ≥ 0 (std::invalid_argument).
  Trainer(Optimizer<T>& optimizer, GradientStrategy<T>& gradients, double max_grad_norm = 0);

  // Steps `schedule` (anything with a step(): nn::MultiStepLR, NoamLR, StepLR stepped per optimizer step) after every
  // update, in the order added. The schedule must outlive the trainer.
  template <class Schedule>
  void add_schedule(Schedule& schedule) {
    schedules_.push_back([&schedule] { schedule.step(); });
  }

  // One step on a batch of `rows` rows whose loss `loss` gives. When the loss or the gradient's norm is not finite
  // (a NaN or ∞ anywhere), nothing is updated and the schedules are not stepped: the caller decides what then.
  StepReport<T> step(std::size_t rows, const RowsLoss<T>& loss);

  Optimizer<T>& optimizer() { return optimizer_; }
  double max_grad_norm() const { return max_grad_norm_; }

 private:
  // StepExtras::updated for the strategy's products: Products::updated when they keep copies of the weights (bf16);
  // empty otherwise.
  std::function<void(std::size_t, std::size_t, std::size_t)> copies_to_update() const;

  Optimizer<T>& optimizer_;
  GradientStrategy<T>& gradients_;
  double max_grad_norm_;
  std::vector<std::function<void()>> schedules_;
};

}  // namespace attend::nn
