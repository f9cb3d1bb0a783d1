// attend serve's counters (metrics.hpp).
#include "apps/serve/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace attend::app::serve {

namespace {

// A number as the exposition format writes it: the shortest decimal that reads back as the same double.
std::string number(double value) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

// A label's value escaped as the format asks: backslash, double quote and line feed.
std::string label(const std::string& value) {
  std::string escaped;
  for (const char c : value) {
    if (c == '\\' || c == '"') escaped += '\\';
    escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return escaped;
}

void header(std::ostringstream& out, const std::string& name, const char* type, const char* help) {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto at = std::lower_bound(bounds_.begin(), bounds_.end(), value);  // the first bound ≥ value
  ++counts_[static_cast<std::size_t>(at - bounds_.begin())];
  sum_ += value;
  ++count_;
}

std::string Histogram::text(const std::string& name) const {
  std::ostringstream out;
  std::uint64_t cumulative = 0;
  for (std::size_t k = 0; k < bounds_.size(); ++k) {
    cumulative += counts_[k];
    out << name << "_bucket{le=\"" << number(bounds_[k]) << "\"} " << cumulative << "\n";
  }
  out << name << "_bucket{le=\"+Inf\"} " << count_ << "\n";
  out << name << "_sum " << number(sum_) << "\n" << name << "_count " << count_ << "\n";
  return out.str();
}

Metrics::Metrics()
    : latency_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}),
      batches_({1, 2, 4, 8, 16, 32, 64, 128, 256}) {}

void Metrics::request(int status, double seconds) {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[status];
  latency_.observe(seconds);
}

void Metrics::batch(std::size_t inputs) {
  const std::lock_guard<std::mutex> lock(mutex_);
  batches_.observe(static_cast<double>(inputs));
  inputs_ += inputs;
}

void Metrics::cancelled(std::size_t inputs) {
  const std::lock_guard<std::mutex> lock(mutex_);
  cancelled_ += inputs;
}

void Metrics::connection_opened() {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++connections_;
}

void Metrics::connection_closed() {
  const std::lock_guard<std::mutex> lock(mutex_);
  --connections_;
}

std::string Metrics::text(const std::map<std::string, std::size_t>& queued) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  header(out, "attend_requests_total", "counter", "HTTP requests answered, by status code.");
  for (const auto& [code, count] : requests_) out << "attend_requests_total{code=\"" << code << "\"} " << count << "\n";
  header(out, "attend_request_duration_seconds", "histogram",
         "Seconds from a request read to its answer written (decoding included).");
  out << latency_.text("attend_request_duration_seconds");
  header(out, "attend_batch_size", "histogram", "Inputs decoded together in one batch, across clients.");
  out << batches_.text("attend_batch_size");
  header(out, "attend_inputs_decoded_total", "counter", "Inputs decoded.");
  out << "attend_inputs_decoded_total " << inputs_ << "\n";
  header(out, "attend_inputs_cancelled_total", "counter",
         "Inputs whose decoding stopped, or never began, because their client left.");
  out << "attend_inputs_cancelled_total " << cancelled_ << "\n";
  header(out, "attend_queue_inputs", "gauge", "Inputs waiting to be decoded, by model.");
  for (const auto& [model, count] : queued)
    out << "attend_queue_inputs{model=\"" << label(model) << "\"} " << count << "\n";
  header(out, "attend_open_connections", "gauge", "Open client connections.");
  out << "attend_open_connections " << connections_ << "\n";
  return out.str();
}

}  // namespace attend::app::serve
