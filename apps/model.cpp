// The model interface's shared parts (model.hpp).
#include "apps/model.hpp"

#include <algorithm>
#include <numeric>

#include "nn/checkpoint.hpp"
#include "plot/svg.hpp"

namespace attend::app {

void Model::add_scores(const std::vector<models::Hypothesis>&, Scores&) const {}

void Model::record_every_attention(bool) {}  // one map: it is every map

void Model::choose_attention(std::size_t layer, std::size_t head) {
  if (layer == 0 && head == 0) return;
  const std::string flag = layer ? "--layer" : "--head";
  throw InputError(flag + " is for models with several attention layers and heads; this " + format() +
                   " model has one attention");
}

// Sources of similar length go together, in batches of at most `batch_size`, so a batch carries little padding; results
// return in input order.
std::vector<models::Hypothesis> decode_by_length(
    const std::vector<std::vector<std::int64_t>>& sources, std::size_t batch_size,
    const std::function<std::vector<models::Hypothesis>(const std::vector<std::vector<std::int64_t>>&)>& decode_batch) {
  std::vector<std::size_t> order(sources.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sources[a].size() < sources[b].size(); });
  std::vector<models::Hypothesis> result(sources.size());
  for (std::size_t start = 0; start < order.size(); start += batch_size) {
    const std::size_t end = std::min(order.size(), start + batch_size);
    std::vector<std::vector<std::int64_t>> chunk;
    for (std::size_t k = start; k < end; ++k) chunk.push_back(sources[order[k]]);
    std::vector<models::Hypothesis> decoded = decode_batch(chunk);
    for (std::size_t k = start; k < end; ++k) result[order[k]] = std::move(decoded[k - start]);
  }
  return result;
}

std::string text_attention_picture(const PictureInput& input, const std::vector<std::string>& rows,
                                   const models::Hypothesis& output, const std::string& title) {
  std::vector<std::vector<double>> weights;
  for (const auto& row : output.attention) weights.emplace_back(row.begin(), row.end());
  plot::HeatmapOptions heatmap;
  heatmap.title = title;
  return plot::attention_svg(input.source_tokens, rows, weights, heatmap);
}

// Every weight of the model is a tensor of the file, so a configuration that asks for more weights than the file holds
// is damaged: refused before building the model would allocate (and initialise) what it asks for, which a few edited
// numbers can make gigabytes, or a million layers.
void check_sizes_fit(const std::string& path, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& products,
                     std::uint64_t tensors) {
  const std::vector<nn::CheckpointTensor> listed = nn::list_checkpoint(path);
  std::uint64_t bytes = 0;  // of all tensors together: more than their elements
  for (const auto& t : listed) bytes += t.end - t.begin;
  bool fits = tensors <= listed.size();
  for (const auto& [a, b] : products) {
    std::uint64_t product = 0;
    fits = fits && !__builtin_mul_overflow(a, b, &product) && product <= bytes;
  }
  if (!fits)
    throw InputError("model file " + path + ": the model configuration asks for more weights than the file holds");
}

}  // namespace attend::app
