// attend serve's counters, as GET /metrics shows them in Prometheus's text format (version 0.0.4): requests by status
// code, their latency, the batches decoded, the inputs cancelled and waiting, and the open connections. Safe to call
// from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace attend::app::serve {

// A Prometheus histogram: cumulative counts of observations at most each bound, their sum and count.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // The exposition lines of `name` (its _bucket, _sum and _count series).
  std::string text(const std::string& name) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // observations in (bound k−1, bound k]; the last: above every bound
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();
  // An answered request: its status code and the seconds from its last byte read to its answer written.
  void request(int status, double seconds);
  // A batch the worker decoded: its inputs.
  void batch(std::size_t inputs);
  // Inputs whose decoding stopped, or never began, because nobody waited for them any more.
  void cancelled(std::size_t inputs);
  void connection_opened();
  void connection_closed();
  // The whole exposition; `queued` gives each model's inputs waiting (name → count).
  std::string text(const std::map<std::string, std::size_t>& queued) const;

 private:
  mutable std::mutex mutex_;
  std::map<int, std::uint64_t> requests_;  // by status code
  Histogram latency_, batches_;
  std::uint64_t inputs_ = 0, cancelled_ = 0;
  std::int64_t connections_ = 0;
};

}  // namespace attend::app::serve
