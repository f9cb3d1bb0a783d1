// The model interface's shared parts (model.hpp).
#include "apps/model.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "apps/commands.hpp"
#include "autograd/blas.hpp"
#include "nn/checkpoint.hpp"
#include "plot/svg.hpp"

namespace attend::app {

double shortest(float value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  *end = '\0';
  return std::strtod(text, nullptr);
}

nlohmann::ordered_json float_array(const float* values, std::size_t n) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < n; ++k) array.push_back(shortest(values[k]));
  return array;
}

void Model::add_scores(const std::vector<models::Hypothesis>&, Scores&) const {}

void Model::record_every_attention(bool) {}  // one map: it is every map

void Model::choose_attention(std::size_t layer, std::size_t head) {
  if (layer == 0 && head == 0) return;
  const std::string flag = layer ? "--layer" : "--head";
  throw InputError(flag + " is for models with several attention layers and heads; this " + format() +
                   " model has one attention");
}

Explanation Model::explain(const ModelInputs& one, models::SearchOptions search) {
  Explanation result;
  std::vector<models::SearchTree> trees;
  search.trees = &trees;
  record_every_attention(true);
  std::vector<models::Hypothesis> outputs;
  try {
    outputs = decode(one, search);
    result.layout = attention_layout();
  } catch (...) {
    record_every_attention(false);
    throw;
  }
  record_every_attention(false);
  result.output = std::move(outputs.at(0));
  result.tree = std::move(trees.at(0));
  if (!has_attention()) return result;
  // the output's rows, [j][(l·H + h)·S + i], as maps [l][h][j][i]
  const models::Hypothesis& h = result.output;
  AttentionMaps cross{"cross", result.layout.layers, result.layout.heads, h.attention.size(), 0, {}};
  const std::size_t maps = cross.layers * cross.heads;
  cross.keys = h.attention.empty() ? 0 : h.attention[0].size() / maps;
  cross.weights.resize(maps * cross.queries * cross.keys);
  for (std::size_t j = 0; j < cross.queries; ++j) {
    for (std::size_t m = 0; m < maps; ++m) {
      std::copy_n(h.attention[j].begin() + static_cast<std::ptrdiff_t>(m * cross.keys), cross.keys,
                  cross.weights.begin() + static_cast<std::ptrdiff_t>((m * cross.queries + j) * cross.keys));
    }
  }
  result.attention.push_back(std::move(cross));
  return result;
}

std::vector<models::Attribution<float>> Model::attribute(const ModelInputs&, const models::Hypothesis&, std::size_t,
                                                         const std::function<bool()>&) {
  return {};
}

void decode_batches(std::size_t batches, const models::SearchOptions& search,
                    const std::function<void(std::size_t, const models::SearchOptions&)>& decode_batch) {
  const std::size_t threads = std::min(search.threads, batches);
  if (threads <= 1) {
    for (std::size_t b = 0; b < batches; ++b) decode_batch(b, search);
    return;
  }
  if (search.trees != nullptr) throw std::invalid_argument("decode_batches: search trees are kept for one batch only");
  models::SearchOptions alone = search;
  alone.threads = 1;
  const int blas = blas_threads();
  set_threads(1);  // every product on the thread of its batch
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failures(threads);
  auto work = [&](std::size_t t) {
    try {
      for (std::size_t k = next++; k < batches; k = next++) decode_batch(batches - 1 - k, alone);
    } catch (...) {
      failures[t] = std::current_exception();
      next = batches;  // the others stop after their batch
    }
  };
  std::vector<std::thread> workers;
  try {
    for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(work, t);
  } catch (const std::system_error&) {  // no more threads to be had: the ones started and the caller's share the rest
  }
  work(0);
  for (std::thread& w : workers) w.join();
  set_threads(static_cast<std::size_t>(blas));
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

// Sources of similar length go together, in batches of at most `batch_size`, so a batch carries little padding; results
// return in input order.
std::vector<models::Hypothesis> decode_by_length(const std::vector<std::vector<std::int64_t>>& sources,
                                                 std::size_t batch_size, const models::SearchOptions& search,
                                                 const DecodeBatch& decode_batch) {
  std::vector<std::size_t> order(sources.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sources[a].size() < sources[b].size(); });
  std::vector<models::Hypothesis> result(sources.size());
  const std::size_t batches = (order.size() + batch_size - 1) / batch_size;
  decode_batches(batches, search, [&](std::size_t b, const models::SearchOptions& options) {
    const std::size_t start = b * batch_size, end = std::min(order.size(), start + batch_size);
    std::vector<std::vector<std::int64_t>> chunk;
    for (std::size_t k = start; k < end; ++k) chunk.push_back(sources[order[k]]);
    // the observer is told of the sources by their places in `sources`
    std::optional<models::PartObserver> part;
    const models::SearchOptions own = models::for_part(
        options, {order.begin() + static_cast<std::ptrdiff_t>(start), order.begin() + static_cast<std::ptrdiff_t>(end)},
        part);
    std::vector<models::Hypothesis> decoded = decode_batch(chunk, own);
    if (decoded.size() != chunk.size())
      throw std::logic_error("decode_by_length: a batch's outputs and sources differ");
    for (std::size_t k = start; k < end; ++k) result[order[k]] = std::move(decoded[k - start]);
  });
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
