// What the training benchmarks (bench/seq2seq.cpp, bench/transformer.cpp) share: wall-clock and RSS readings, medians,
// the "BLAS-bound" step (a step's matrix products timed in sgemm alone, on its own shapes), the random token batch and
// --precision.
// Includes OpenBLAS's <cblas.h>, so a file that includes this must not include xtensor-blas.
#pragma once

#include <cblas.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/blas.hpp"
#include "autograd/tensor.hpp"
#include "precision/precision.hpp"

namespace attend::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs run(0) and run(1) `rounds` times each, alternately, the one that goes first changing every round (so that a
// drift of the machine's speed falls on both): the seconds of each, seconds[0] and seconds[1].
template <class F>
std::array<std::vector<double>, 2> time_alternately(int rounds, const F& run) {
  std::array<std::vector<double>, 2> seconds;
  for (int r = 0; r < rounds; ++r) {
    for (const int which : {r % 2, 1 - r % 2}) {
      const auto start = Clock::now();
      run(which);
      seconds[static_cast<std::size_t>(which)].push_back(seconds_since(start));
    }
  }
  return seconds;
}

inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline double quantile_of(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

inline double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

inline double current_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0.0;
}

// One matrix product of the forward pass, C (m, n) = A (m, k) · B (k, n), done `count` times per step.
struct Product {
  std::size_t m, n, k, count;
};

// Training FLOPs of the products: forward 2mnk each, backward two products of the same size.
inline double training_flops(const std::vector<Product>& products) {
  double f = 0;
  for (const Product& p : products) f += 3.0 * 2.0 * double(p.m) * double(p.n) * double(p.k) * double(p.count);
  return f;
}

// The products of a training benchmark's --precision for a model's `parameters`, as `attend train --precision` makes
// them (precision/precision.hpp): given to the shards' tapes (nn::BatchParallel), and told of every optimizer step
// (weights_updated). Throws naming what is missing (no oneDNN, no AVX512-BF16).
template <class Parameters>
std::unique_ptr<attend::Products> bench_products(const std::string& name, const Parameters& parameters) {
  try {
    return attend::make_products(name, attend::matrices_of(parameters));
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--precision ") + e.what());
  }
}

// After an optimizer step: every weight of `parameters` changed (Products::updated), as nn::Trainer reports it.
template <class Parameters>
void weights_updated(const attend::Products& products, const Parameters& parameters) {
  if (!products.copies_weights()) return;
  for (const auto& [name, parameter] : parameters) {
    if constexpr (std::is_same_v<std::decay_t<decltype(parameter->value)>, attend::Tensor<float>>) {
      products.updated(*parameter, 0, parameter->value.size());
    }
  }
}

// The time the step's products take in sgemm alone (in bf16 under --precision bf16): each product and its two backward
// products (dA = dC Bᵀ, dB = Aᵀ dC), timed on buffers of their shapes (median of repetitions, after a warm-up), times
// its count.
inline double blas_bound_seconds(const std::vector<Product>& products, int reps, const attend::Products* precision) {
  double total = 0;
  for (const Product& p : products) {
    std::vector<float> a(p.m * p.k, 0.5f), b(p.k * p.n, 0.25f), c(p.m * p.n, 0.f), da(p.m * p.k), db(p.k * p.n);
    const std::size_t m = p.m, n = p.n, k = p.k;
    auto run = [&] {
      // through the engine's wrapper, as the step's own products go (sgemm; sgemv for ≤ 4 rows or 1 column)
      attend::gemm(precision, false, false, m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, c.data(), n);
      attend::gemm(precision, false, true, m, k, n, 1.f, c.data(), n, b.data(), n, 1.f, da.data(), k);
      attend::gemm(precision, true, false, k, n, m, 1.f, a.data(), k, c.data(), n, 1.f, db.data(), n);
    };
    // enough calls per sample that one sample lasts ≥ ~2 ms
    const double flop = 6.0 * double(p.m) * double(p.n) * double(p.k);
    const int inner = std::max(1, int(2e-3 * 20e9 / std::max(flop, 1.0)));
    for (int w = 0; w < 3; ++w) run();
    std::vector<double> samples;
    for (int r = 0; r < reps; ++r) {
      const auto start = Clock::now();
      for (int i = 0; i < inner; ++i) run();
      samples.push_back(seconds_since(start) / inner);
    }
    total += median_of(samples) * double(p.count);
  }
  return total;
}

// Uniform random ids in [0, vocab) of the given shape, from rng.
inline Ids random_ids(Rng& rng, std::size_t rows, std::size_t cols, std::size_t vocab) {
  Ids ids(Shape{rows, cols});
  for (std::size_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<std::int64_t>(rng.next() % vocab);
  return ids;
}

template <class T>
Ids ids_from(const Tensor<T>& t) {
  Ids ids(t.shape());
  for (std::size_t i = 0; i < t.size(); ++i) ids.data()[i] = static_cast<std::int64_t>(t.data()[i]);
  return ids;
}

// Rows [begin, end) of a (rows, cols) id matrix.
inline Ids rows_of(const Ids& ids, std::size_t begin, std::size_t end) {
  const std::size_t cols = ids.shape()[1];
  Ids part(Shape{end - begin, cols});
  std::copy(ids.data() + begin * cols, ids.data() + end * cols, part.data());
  return part;
}

}  // namespace attend::bench
