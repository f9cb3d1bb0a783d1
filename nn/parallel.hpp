// Data parallelism over the rows of a batch, on the threads of one machine: the batch is cut into contiguous shards,
// every shard runs forward and backward on its own thread and its own tape at the same time (the parameters are read
// by all, written by none), and the shards' parameter gradients are then added into p.grad one shard after the other,
// in shard order. For a loss that is a mean over the batch's targets, weighting shard k by n_k / N (its share of the
// counted targets) gives exactly the gradient of the whole batch's mean, up to the order of float sums: the same
// seed and thread count give bit-identical numbers, a different thread count may change the last bits.
// Why: at the sizes of the course, one training step is a few thousand small ops; two threads that each run every op
// on half the batch (elementwise work, small matrix products, the tape's own bookkeeping) come much closer to twice
// the speed than OpenBLAS threads, which only share the matrix products. Measured in docs/performance.md.
//
//   nn::BatchParallel<float> parallel(2);
//   float loss = parallel.step(batch_size, [&](Tape<float>& tape, std::size_t begin, std::size_t end) {
//     Variable<float> l = cross_entropy(model.forward(tape, rows(src, begin, end), ...), rows(tgt, begin, end));
//     return nn::ShardLoss<float>{l, double(end - begin)};   // weight: how many targets the mean is over
//   });
//   optimizer.step();
//
// (With step(rows, f, {}, &parameters), the whole list's gradients are set, not added to: no zero_grad() needed.)
//
// The model must not change state while running forward on several threads at once: no modules that cache per-call
// data, and no draws from a module's own stream. Dropout in training mode is fine after seed_shards(s) before each
// step: every shard's tape then carries a generator of its own in its context (runtime/context.hpp), made from s and
// the shard's index, which every module's random op on that tape draws from (nn::RandomStream, nn/generator.hpp), so
// that the random numbers depend only on s and the thread count, never on which thread runs first; the modules' streams
// are not used. OpenBLAS should run one thread per caller then (openblas_set_num_threads(1)); the shards
// are the parallelism.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "autograd/tape.hpp"
#include "nn/generator.hpp"
#include "nn/optim.hpp"
#include "runtime/context.hpp"

namespace attend::nn {

// What a shard's function returns: its loss (a scalar on the shard's tape) and its weight, e.g. the number of targets
// the loss is a mean over. The step's loss is Σ_k w_k loss_k / Σ_k w_k.
template <class T>
struct ShardLoss {
  Variable<T> loss;
  double weight = 1.0;
};

// Where the last step() spent its time, in seconds of the wall clock: each phase from its start on the calling
// thread until every shard has finished it (forward includes step()'s `total_of`, e.g. the wait for other processes'
// weights). `waiting`: Σ_k (slowest − t_k) over the shards' own times t_k in forward and in backward, each timed
// from the shard's start — how long the faster shards would have waited for the slowest if all had started at once
// (0 on one thread).
struct StepTimes {
  double forward = 0, backward = 0, sums = 0, waiting = 0;
};

template <class T>
class BatchParallel {
 public:
  using ShardFn = std::function<ShardLoss<T>(Tape<T>& tape, std::size_t begin, std::size_t end)>;

  // threads ≥ 1 (std::invalid_argument otherwise); threads - 1 worker threads are started here, the caller's thread
  // runs shard 0. Every shard's tape carries `products` (precision/products.hpp: the precision of its float products;
  // nullptr: float32), which must outlive the pool.
  explicit BatchParallel(std::size_t threads, const Products* products = nullptr);
  ~BatchParallel();
  BatchParallel(const BatchParallel&) = delete;
  BatchParallel& operator=(const BatchParallel&) = delete;

  // One forward + backward over rows [0, rows): shard k gets rows [begin_k, end_k), contiguous and as equal as possible
  // (min(threads, rows) shards). Clears each shard's tape first, runs f on it, then backward from the shard's loss
  // with seed w_k / Σ w, and finally adds every shard's parameter gradients into p.grad in shard order (each element
  // gets g_0, then g_1, …: the threads share the elements out, not the order). Returns the
  // weighted loss Σ_k w_k loss_k / Σ w. An exception in any shard is rethrown here (after all shards have stopped);
  // p.grad is then unchanged.
  // `total_of`, for shards in several processes (apps/ranks.hpp): given this process's total weight, returns every
  // process's, which then seeds backward (w_k / Σ w); the loss returned is then this process's part of the whole.
  // `assign`, a list of every parameter the shards may reach (a model's parameters()): their gradients are set instead
  // of added to — p.grad = g_0 + g_1 + … for one a shard reached, 0 for one none did. The numbers of zero_grad()
  // followed by step() (up to the sign of a zero: −0 stays −0 where 0 + (−0) gives +0), without a pass that writes
  // zeros over every gradient and another that reads them back. A parameter a shard reached that is not in the list:
  // std::invalid_argument, and p.grad unchanged.
  // `squares` (with `assign`): set to gradient_squares(*assign), the same number, taken as each chunk of the sum is
  // made (clip_grad_norm's n is its square root: with StepExtras::gradient_factor, clipping takes no pass of its own).
  T step(std::size_t rows, const ShardFn& f, const std::function<double(double)>& total_of = {},
         const NamedParameters<T>* assign = nullptr, double* squares = nullptr);

  // The same shards and weights, forward only (e.g. a validation loss): no backward, no gradient changes. With
  // `record` false, every shard runs in a NoGradGuard.
  T forward(std::size_t rows, const ShardFn& f, bool record = false);

  // The random numbers of the next step() or forward() (only that one): shard k draws from a generator seeded from
  // `seed` and first + k (the (first + k)-th number of Rng(seed)) instead of from the modules' generators. Give every
  // step its own seed (e.g. made from the training seed and the step number, which makes a resumed run draw the same
  // numbers); `first` is this process's first shard when several processes share a batch.
  void seed_shards(std::uint64_t seed, std::size_t first = 0) {
    seed_ = seed;
    first_shard_ = first;
  }

  // f(begin, end) on every thread at once, on contiguous ranges that cover [0, count) (one range a thread, as equal as
  // can be; fewer when count is small); returns when all are done. An exception is rethrown here, as in step().
  void for_ranges(std::size_t count, const std::function<void(std::size_t, std::size_t)>& f);
  // for_ranges as an nn::Executor, for the optimizer's elementwise work (Optimizer::step and zero_grad,
  // clip_grad_norm); fewer than 2^15 elements are done by the calling thread alone (waking the others would cost more).
  // The pool must outlive its use.
  Executor executor() {
    return [this](std::size_t count, const std::function<void(std::size_t, std::size_t)>& f) {
      if (count < (std::size_t(1) << 15)) {
        f(0, count);
      } else {
        for_ranges(count, f);
      }
    };
  }

  // The last step()'s phases (zeros before the first).
  const StepTimes& last_step_times() const { return times_; }

  std::size_t threads() const { return tapes_.size(); }
  // The tape of shard k, e.g. to read values after step(); valid until the next step().
  Tape<T>& tape(std::size_t k) { return *tapes_[k]; }

 private:
  void run_on_all(const std::function<void(std::size_t)>& job, std::size_t count);
  // Phase 1 of step() and all of forward(): runs f on every shard; returns the losses and their total weight.
  std::vector<ShardLoss<T>> run_forward(std::size_t rows, const ShardFn& f, bool record, double& total,
                                        const std::function<double(double)>& total_of = {});
  void worker(std::size_t index);

  std::vector<std::unique_ptr<Tape<T>>> tapes_;
  std::vector<Context> contexts_;      // one a tape: its shard's generator and the products
  std::vector<Rng> generators_;        // one a shard, while seed_ is in use
  StepTimes times_;                    // of the last step()
  std::vector<double> shard_seconds_;  // each shard's time in the phase that ran last
  std::optional<std::uint64_t> seed_;  // seed_shards(), until the next step
  std::size_t first_shard_ = 0;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t job_count_ = 0;   // shards in the current job
  std::size_t generation_ = 0;  // increases with every job
  std::size_t remaining_ = 0;   // workers still running the current job
  bool stopping_ = false;
  // generation_ and remaining_ as atomics, for the threads that wait in a loop before they sleep (parallel.cpp)
  std::atomic<std::size_t> published_{0}, pending_{0};
  std::vector<std::exception_ptr> errors_;
};

}  // namespace attend::nn
