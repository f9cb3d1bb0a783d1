// BatchParallel (parallel.hpp): a fixed pool of worker threads that run one job per shard, and the two-phase step
// (forward on all shards, then backward on all shards once the weights are known), then the ordered gradient sum.
#include "nn/parallel.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "runtime/clock.hpp"
#include "runtime/kernels.hpp"

namespace attend::nn {

namespace {

// About 100 µs of waiting in a loop before a thread sleeps on the condition variable.
constexpr int spin_limit = 2000;

inline void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Σ_k (slowest − seconds[k]) over the first `count`: how long the faster shards waited for the slowest.
double waited(const std::vector<double>& seconds, std::size_t count) {
  const double slowest = *std::max_element(seconds.begin(), seconds.begin() + static_cast<std::ptrdiff_t>(count));
  double total = 0;
  for (std::size_t k = 0; k < count; ++k) total += slowest - seconds[k];
  return total;
}

}  // namespace

template <class T>
BatchParallel<T>::BatchParallel(std::size_t threads, const Products* products) {
  if (threads == 0) throw std::invalid_argument("BatchParallel: threads must be at least 1");
  contexts_.resize(threads);  // never resized again: each tape points at its own
  for (Context& context : contexts_) context.products = products;
  for (std::size_t k = 0; k < threads; ++k) {
    tapes_.push_back(std::make_unique<Tape<T>>());
    tapes_.back()->set_retain_gradients(false);
    tapes_.back()->set_context(&contexts_[k]);
  }
  errors_.resize(threads);
  shard_seconds_.resize(threads);
  for (std::size_t k = 1; k < threads; ++k) workers_.emplace_back([this, k] { worker(k); });
}

template <class T>
BatchParallel<T>::~BatchParallel() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (std::thread& t : workers_) t.join();
}

template <class T>
void BatchParallel<T>::worker(std::size_t index) {
  std::size_t seen = 0;
  for (;;) {
    const std::function<void(std::size_t)>* job = nullptr;
    bool mine = false;
    // a step's jobs follow each other within microseconds: look for the next one for a moment before sleeping (a
    // sleeping thread takes tens of microseconds to wake, several times a step)
    for (int spin = 0; spin < spin_limit && published_.load(std::memory_order_acquire) == seen; ++spin) pause();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      job = job_;
      mine = index < job_count_;
    }
    if (mine) {
      try {
        (*job)(index);
      } catch (...) {
        errors_[index] = std::current_exception();
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.store(remaining_ - 1, std::memory_order_release);
      if (--remaining_ == 0) done_.notify_one();
    }
  }
}

template <class T>
void BatchParallel<T>::run_on_all(const std::function<void(std::size_t)>& job, std::size_t count) {
  for (auto& e : errors_) e = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &job;
    job_count_ = count;
    remaining_ = workers_.size();
    pending_.store(remaining_, std::memory_order_relaxed);
    ++generation_;
    published_.store(generation_, std::memory_order_release);
  }
  start_.notify_all();
  if (count > 0) {
    try {
      job(0);
    } catch (...) {
      errors_[0] = std::current_exception();
    }
  }
  for (int spin = 0; spin < spin_limit && pending_.load(std::memory_order_acquire) != 0; ++spin) pause();
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return remaining_ == 0; });
    job_ = nullptr;
  }
  for (auto& e : errors_) {
    if (e) std::rethrow_exception(e);
  }
}

template <class T>
std::vector<ShardLoss<T>> BatchParallel<T>::run_forward(std::size_t rows, const ShardFn& f, bool record, double& total,
                                                        const std::function<double(double)>& total_of) {
  if (rows == 0) throw std::invalid_argument("BatchParallel: an empty batch (0 rows)");
  const std::size_t shards = std::min(rows, tapes_.size());
  std::vector<ShardLoss<T>> losses(shards);
  generators_.clear();
  if (seed_) {
    Rng seeds(*seed_);
    for (std::size_t k = 0; k < first_shard_; ++k) seeds.next();
    for (std::size_t k = 0; k < shards; ++k) generators_.emplace_back(seeds.next());
    seed_.reset();
  }
  const std::function<void(std::size_t)> forward = [&](std::size_t k) {
    const Clock::time_point start = Clock::now();
    const std::size_t begin = rows * k / shards, end = rows * (k + 1) / shards;
    Tape<T>& tape = *tapes_[k];
    tape.clear();
    {
      contexts_[k].generator = generators_.empty() ? nullptr : &generators_[k];  // what random ops draw from
      NoGradGuard<T> guard(tape);
      tape.set_grad_enabled(record);
      losses[k] = f(tape, begin, end);
    }
    tape.check(losses[k].loss, "BatchParallel");
    if (losses[k].loss.value().size() != 1) {
      throw std::invalid_argument("BatchParallel: shard " + std::to_string(k) + " returned a loss of shape " +
                                  to_string(losses[k].loss.value().shape()) + "; expected a scalar");
    }
    if (!(losses[k].weight >= 0.0)) {
      throw std::invalid_argument("BatchParallel: shard " + std::to_string(k) + " has weight " +
                                  std::to_string(losses[k].weight) + "; expected ≥ 0");
    }
    shard_seconds_[k] = seconds_since(start);
  };
  run_on_all(forward, shards);
  total = 0;
  for (const ShardLoss<T>& l : losses) total += l.weight;
  if (total_of) total = total_of(total);
  return losses;
}

template <class T>
T BatchParallel<T>::forward(std::size_t rows, const ShardFn& f, bool record) {
  double total = 0;
  const std::vector<ShardLoss<T>> losses = run_forward(rows, f, record, total);
  T loss = 0;
  for (const ShardLoss<T>& l : losses) {
    if (total > 0) loss += static_cast<T>(l.weight / total) * l.loss.value().item();
  }
  return loss;
}

namespace {

// The parameters that shards' backward reached, in the order of first use on shard 0's tape (then the others'), and
// each one's gradients in shard order.
template <class T>
struct ReachedGradients {
  std::vector<Parameter<T>*> parameters;
  std::vector<std::vector<const Tensor<T>*>> gradients;        // of parameters[i], in shard order
  std::unordered_map<const Parameter<T>*, std::size_t> index;  // of each in parameters
};

// y[begin, end) = the parts' sum there, added left to right; Σ y² there as chunk_squares adds it when `squares`.
// float's in one pass, past the cache when `stream` (kernels::sum_parts: the same sums, the same squares); double's as
// written.
double assign_sum(const std::vector<const Tensor<float>*>& parts, float* y, std::size_t begin, std::size_t end,
                  bool squares, bool stream) {
  thread_local std::vector<const float*> from;  // the parts from `begin` on (kept: a step sums hundreds of chunks)
  from.clear();
  for (const Tensor<float>* part : parts) from.push_back(part->data() + begin);
  return kernels::sum_parts(from.data(), from.size(), y + begin, end - begin, squares, stream);
}
double assign_sum(const std::vector<const Tensor<double>*>& parts, double* y, std::size_t begin, std::size_t end,
                  bool squares, bool /*stream*/) {
  std::copy(parts[0]->data() + begin, parts[0]->data() + end, y + begin);
  for (std::size_t k = 1; k < parts.size(); ++k) {
    const double* add = parts[k]->data();
    for (std::size_t e = begin; e < end; ++e) y[e] += add[e];
  }
  return squares ? chunk_squares(y + begin, end - begin) : 0.0;
}

// Phase 3 of step(): p.grad (+)= g_0 + g_1 + … for every parameter reached (assigned: the first additions start from
// g_0 rather than from p.grad), every thread on whole chunks (norm_chunk elements of a parameter; its last one
// shorter). With `squares_of` (the list of parameters to assign), also returns gradient_squares(*squares_of): each
// chunk's squares taken while the chunk is in cache, then added in the order of the list (a parameter no shard reached
// adds squares of zeros).
template <class T>
double sum_gradients(const ReachedGradients<T>& reached, bool assigned, const Executor& executor,
                     const NamedParameters<T>* squares_of) {
  std::vector<std::pair<std::size_t, std::size_t>> chunks;  // (parameter, first element)
  std::vector<std::size_t> starts;                          // of each chunk in the concatenation of all gradients
  std::vector<std::size_t> first;                           // each parameter's first chunk
  std::size_t elements = 0;
  for (std::size_t i = 0; i < reached.parameters.size(); ++i) {
    const std::size_t size = reached.parameters[i]->grad.size();
    first.push_back(chunks.size());
    for (std::size_t at = 0; at < size; at += norm_chunk) {
      chunks.emplace_back(i, at);
      starts.push_back(elements + at);
    }
    elements += size;
  }
  first.push_back(chunks.size());
  std::vector<double> squares(squares_of != nullptr ? chunks.size() : 0);
  const bool stream = elements * sizeof(T) > kernels::streaming_bytes;  // Adam will find little of it in the cache
  executor(elements, [&](std::size_t from, std::size_t to) {
    // the chunks that start in [from, to): every chunk once, whatever the ranges
    const auto c0 = std::lower_bound(starts.begin(), starts.end(), from) - starts.begin();
    const auto c1 = std::lower_bound(starts.begin(), starts.end(), to) - starts.begin();
    for (auto c = static_cast<std::size_t>(c0); c < static_cast<std::size_t>(c1); ++c) {
      const auto [i, begin] = chunks[c];
      const std::size_t end = std::min(begin + norm_chunk, reached.parameters[i]->grad.size());
      T* sum = reached.parameters[i]->grad.data();
      const std::vector<const Tensor<T>*>& parts = reached.gradients[i];
      if (assigned) {
        const double s = assign_sum(parts, sum, begin, end, squares_of != nullptr, stream);
        if (squares_of != nullptr) squares[c] = s;
        continue;
      }
      for (const Tensor<T>* part : parts) {
        const T* add = part->data();
        for (std::size_t e = begin; e < end; ++e) sum[e] += add[e];
      }
      if (squares_of != nullptr) squares[c] = chunk_squares(sum + begin, end - begin);
    }
  });
  double total = 0.0;
  if (squares_of == nullptr) return total;
  for (const auto& named : *squares_of) {
    const auto found = reached.index.find(named.second);
    if (found == reached.index.end()) continue;
    for (std::size_t c = first[found->second]; c < first[found->second + 1]; ++c) total += squares[c];
  }
  return total;
}

// Phase 3's list: the parameters that the first `shards` tapes' backward reached (Tape::parameter_gradients), in the
// order of first use on shard 0's tape, then the others'.
template <class T, class Tapes>
ReachedGradients<T> reached_gradients(const Tapes& tapes, std::size_t shards) {
  ReachedGradients<T> reached;
  for (std::size_t k = 0; k < shards; ++k) {
    for (const auto& [p, g] : tapes[k]->parameter_gradients()) {
      const auto [at, added] = reached.index.emplace(p, reached.parameters.size());
      if (added) {
        reached.parameters.push_back(p);
        reached.gradients.emplace_back();
      }
      reached.gradients[at->second].push_back(g);
    }
  }
  return reached;
}

}  // namespace

template <class T>
T BatchParallel<T>::step(std::size_t rows, const ShardFn& f, const std::function<double(double)>& total_of,
                         const NamedParameters<T>* assign, double* squares) {
  if (squares != nullptr && assign == nullptr) {
    throw std::invalid_argument("BatchParallel::step: the gradients' squares need the list of parameters to assign");
  }
  double total = 0;
  times_ = StepTimes{};
  Clock::time_point start = Clock::now();
  std::vector<ShardLoss<T>> losses = run_forward(rows, f, true, total, total_of);
  const std::size_t shards = losses.size();
  times_.forward = seconds_since(start);
  times_.waiting = waited(shard_seconds_, shards);
  // phase 2: backward on every shard, seeded with its share of the weight
  const std::function<void(std::size_t)> backward = [&](std::size_t k) {
    const Clock::time_point shard_start = Clock::now();
    const double share = total > 0 ? losses[k].weight / total : 0.0;
    tapes_[k]->propagate(losses[k].loss, Tensor<T>(losses[k].loss.value().shape(), static_cast<T>(share)));
    shard_seconds_[k] = seconds_since(shard_start);
  };
  start = Clock::now();
  run_on_all(backward, shards);
  times_.backward = seconds_since(start);
  times_.waiting += waited(shard_seconds_, shards);
  start = Clock::now();
  const ReachedGradients<T> reached = reached_gradients<T>(tapes_, shards);
  if (assign != nullptr) {
    std::unordered_set<const Parameter<T>*> listed;
    for (const auto& named : *assign) listed.insert(named.second);
    for (const Parameter<T>* p : reached.parameters) {
      if (listed.count(p) == 0) {
        throw std::invalid_argument("BatchParallel::step: the shards reached a parameter of shape " +
                                    to_string(p->value.shape()) + " that is not in the list whose gradients to set");
      }
    }
    for (const auto& [name, p] : *assign) {
      if (reached.index.count(p) != 0) continue;
      if (p->grad.shape() != p->value.shape()) p->grad = Tensor<T>(p->value.shape());
      std::fill(p->grad.data(), p->grad.data() + p->grad.size(), T(0));  // reached by no shard: its gradient is 0
    }
  }
  for (Parameter<T>* p : reached.parameters) {
    if (p->grad.shape() != p->value.shape()) p->grad = Tensor<T>(p->value.shape());
  }
  const double sum_of_squares =
      sum_gradients(reached, assign != nullptr, executor(), squares != nullptr ? assign : nullptr);
  if (squares != nullptr) *squares = sum_of_squares;
  times_.sums = seconds_since(start);
  T loss = 0;
  for (std::size_t k = 0; k < shards; ++k) {
    if (total > 0) loss += static_cast<T>(losses[k].weight / total) * losses[k].loss.value().item();
  }
  return loss;
}

template <class T>
void BatchParallel<T>::for_ranges(std::size_t count, const std::function<void(std::size_t, std::size_t)>& f) {
  if (count == 0) return;
  const std::size_t parts = std::min(count, tapes_.size());
  run_on_all([&](std::size_t k) { f(count * k / parts, count * (k + 1) / parts); }, parts);
}

template class BatchParallel<float>;
template class BatchParallel<double>;

}  // namespace attend::nn
