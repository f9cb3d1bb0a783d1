// Padded batches and epoch orders (batch.hpp).
#include "models/batch.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace attend::models {

void make_targets(const std::vector<std::vector<std::int64_t>>& targets, Ids& target_in, Ids& target_out) {
  const std::size_t B = targets.size();
  std::size_t T = 0;
  for (const auto& y : targets) T = std::max(T, y.size() + 1);
  target_in = Ids(Shape{B, T});  // zero-filled: pad_id
  target_out = Ids(Shape{B, T});
  for (std::size_t b = 0; b < B; ++b) {
    std::int64_t* in = target_in.data() + b * T;
    std::int64_t* out = target_out.data() + b * T;
    const std::vector<std::int64_t>& y = targets[b];
    in[0] = sos_id;
    std::copy(y.begin(), y.end(), in + 1);
    std::copy(y.begin(), y.end(), out);
    out[y.size()] = eos_id;
  }
}

Batch make_batch(const std::vector<std::vector<std::int64_t>>& sources,
                 const std::vector<std::vector<std::int64_t>>& targets) {
  if (sources.empty()) throw std::invalid_argument("make_batch: an empty batch");
  if (!targets.empty() && targets.size() != sources.size()) {
    throw std::invalid_argument("make_batch: " + std::to_string(sources.size()) + " sources but " +
                                std::to_string(targets.size()) + " targets");
  }
  const std::size_t B = sources.size();
  std::size_t S = 0;
  for (std::size_t b = 0; b < B; ++b) {
    if (sources[b].empty()) throw std::invalid_argument("make_batch: source " + std::to_string(b) + " is empty");
    S = std::max(S, sources[b].size());
  }
  Batch batch;
  batch.source = Ids(Shape{B, S});  // zero-filled: pad_id
  for (std::size_t b = 0; b < B; ++b) {
    std::copy(sources[b].begin(), sources[b].end(), batch.source.data() + b * S);
    batch.source_lengths.push_back(static_cast<std::int64_t>(sources[b].size()));
  }
  if (!targets.empty()) make_targets(targets, batch.target_in, batch.target_out);
  return batch;
}

std::vector<std::vector<std::size_t>> batch_order(std::size_t count, std::size_t batch_size, Rng* rng) {
  if (batch_size == 0) throw std::invalid_argument("batch_order: batch size 0");
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (rng) {
    // Fisher–Yates with the project's generator, so the order is the same on every platform
    for (std::size_t i = count; i > 1; --i) std::swap(order[i - 1], order[rng->next() % i]);
  }
  std::vector<std::vector<std::size_t>> batches;
  for (std::size_t start = 0; start < count; start += batch_size) {
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(start),
                         order.begin() + static_cast<std::ptrdiff_t>(std::min(count, start + batch_size)));
  }
  return batches;
}

std::vector<std::vector<std::size_t>> bucketed_batch_order(const std::vector<std::size_t>& lengths,
                                                           std::size_t batch_size, Rng& rng) {
  if (batch_size == 0) throw std::invalid_argument("bucketed_batch_order: batch size 0");
  if (lengths.empty()) return {};
  std::vector<std::size_t> order = batch_order(lengths.size(), lengths.size() + 1, &rng).front();
  const std::size_t window = 32 * batch_size;
  std::vector<std::vector<std::size_t>> batches;
  for (std::size_t start = 0; start < order.size(); start += window) {
    const auto first = order.begin() + static_cast<std::ptrdiff_t>(start);
    const auto last = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + window));
    std::stable_sort(first, last, [&](std::size_t a, std::size_t b) { return lengths[a] < lengths[b]; });
    for (auto b = first; b < last; b += static_cast<std::ptrdiff_t>(std::min<std::size_t>(batch_size, last - b))) {
      batches.emplace_back(b, b + static_cast<std::ptrdiff_t>(std::min<std::size_t>(batch_size, last - b)));
    }
  }
  for (std::size_t i = batches.size(); i > 1; --i) std::swap(batches[i - 1], batches[rng.next() % i]);
  return batches;
}

}  // namespace attend::models
