// The toy task of chapters 3, 4 and 10: random sequences of symbols (the letters a, b, c, …) of a length you choose,
// and a target that copies or reverses them. Its one knob is the source length, which makes it the cleanest probe of
// the basic encoder-decoder's fixed context vector (docs/04-bottleneck.md) and of what attention changes
// (docs/10-attention-fixes-the-bottleneck.md). Also here: the shared training loop (models/train.hpp) on these
// examples, greedy outputs for a whole set, exact match per source length, and the copy of a
// float model's weights into a double one for finite-difference checks.
// Ids: the four special ids of batch.hpp first (<pad> 0, <sos> 1, <eos> 2, <unk> 3), then symbol k has id 4 + k.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/batch.hpp"
#include "models/seq2seq.hpp"
#include "models/train.hpp"

namespace attend::models::sequences {

enum class Task { copy, reverse };
std::string to_string(Task task);  // "copy", "reverse"

struct TaskConfig {
  Task task = Task::copy;
  std::size_t symbols = 10;    // distinct symbols, 1..26
  std::size_t min_length = 1;  // source lengths are drawn uniformly from [min_length, max_length]
  std::size_t max_length = 10;
};

struct Example {
  std::vector<std::int64_t> source;  // x_1 … x_Tx: symbol ids
  std::vector<std::int64_t> target;  // y_1 … y_Ty: the source copied, or reversed (T_y = T_x)
};

inline constexpr std::int64_t first_symbol = unk_id + 1;  // the id of "a"

// V of both sides: the four specials and the symbols.
std::size_t vocab_size(const TaskConfig& config);
// count examples, each of a length drawn uniformly from [min_length, max_length] and then that many symbols drawn
// uniformly, all from rng. Throws std::invalid_argument for symbols outside 1..26 or min_length outside
// 1..max_length.
std::vector<Example> generate(const TaskConfig& config, std::size_t count, Rng& rng);
// The examples at `indices` as one padded batch (models::make_batch: <sos>/<eos> added, padding with id 0).
Batch batch_of(const std::vector<Example>& examples, const std::vector<std::size_t>& indices);
// Ids as letters, one character each: symbols a, b, …; "^" <sos>, "$" <eos>, "_" <pad>, "?" anything else.
std::string spell(const std::vector<std::int64_t>& ids);

// models::train (train.hpp, the loop of docs/03-encoder-decoder.md) on the examples' sources and targets. Throws
// std::invalid_argument when there are none.
template <class T>
std::vector<double> train(Seq2seq<T>& model, const std::vector<Example>& examples, const TrainOptions& options);

// The greedy output (models::greedy_decode) of every example's source, batch_size sources at a time, in order.
template <class T>
std::vector<std::vector<std::int64_t>> predict(Seq2seq<T>& model, const std::vector<Example>& examples,
                                               std::size_t batch_size = 64);

// Exact match per source length: how many outputs equal their target token for token.
struct LengthScore {
  std::size_t length = 0;  // T_x
  std::size_t count = 0;   // examples of this length
  std::size_t exact = 0;   // of which the output is exactly the target
  double exact_match() const { return count ? static_cast<double>(exact) / static_cast<double>(count) : 0.0; }
};
// One LengthScore per source length present, by increasing length. outputs[k] is the output for examples[k]; throws
// std::invalid_argument when the counts differ.
std::vector<LengthScore> score_by_length(const std::vector<Example>& examples,
                                         const std::vector<std::vector<std::int64_t>>& outputs);

// The experiment of chapters 4 and 10, in one place so that every decoder it compares sees the same data, the same
// sizes and the same training budget: train on sources of mixed lengths, then score exact match at each test length.
struct LengthExperiment {
  TaskConfig task;  // the training distribution of lengths
  std::size_t train_examples = 0;
  std::vector<std::size_t> test_lengths;  // T_x of the test sets
  std::size_t test_per_length = 0;
  std::size_t embedding_dim = 0;  // E
  std::size_t hidden_size = 0;    // H
  TrainOptions training;
  std::uint64_t seed = 0;  // data, initial weights and batch order
};
// The settings the chapters run with; `small` is the quick version `meson test` runs (--small).
LengthExperiment bottleneck_experiment(bool small);
std::vector<Example> training_set(const LengthExperiment& experiment);
// test_per_length examples of each test length, by increasing length, drawn apart from the training set's generator.
std::vector<Example> test_set(const LengthExperiment& experiment);
// The model of the experiment with the given decoder ("vanilla", "bahdanau", … as Seq2seqConfig::set_decoder).
Seq2seqConfig model_config(const LengthExperiment& experiment, const std::string& decoder);

// Copies every parameter of `from` into the parameter of the same name in `to`, converting the scalar type (a float
// model's weights into a double model for finite differences). Throws std::invalid_argument naming the first
// parameter whose name or shape differs, or when the counts differ.
template <class To, class From>
void copy_parameters(nn::Module<From>& from, nn::Module<To>& to) {
  const nn::NamedParameters<From> source = from.parameters();
  const nn::NamedParameters<To> destination = to.parameters();
  if (source.size() != destination.size()) {
    throw std::invalid_argument("copy_parameters: " + std::to_string(source.size()) + " parameters into " +
                                std::to_string(destination.size()));
  }
  for (std::size_t p = 0; p < source.size(); ++p) {
    const Tensor<From>& value = source[p].second->value;
    Tensor<To>& into = destination[p].second->value;
    if (source[p].first != destination[p].first || value.shape() != into.shape()) {
      throw std::invalid_argument("copy_parameters: " + source[p].first + " " + to_string(value.shape()) + " into " +
                                  destination[p].first + " " + to_string(into.shape()));
    }
    for (std::size_t k = 0; k < value.size(); ++k) into.data()[k] = static_cast<To>(value.data()[k]);
  }
}

}  // namespace attend::models::sequences
