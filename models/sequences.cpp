// The copy/reverse task, models::train on its examples, and its per-length scores (sequences.hpp).
#include "models/sequences.hpp"

#include <algorithm>
#include <map>

#include "models/search.hpp"

namespace attend::models::sequences {

std::string to_string(Task task) { return task == Task::copy ? "copy" : "reverse"; }

std::size_t vocab_size(const TaskConfig& config) { return static_cast<std::size_t>(first_symbol) + config.symbols; }

std::vector<Example> generate(const TaskConfig& config, std::size_t count, Rng& rng) {
  if (config.symbols < 1 || config.symbols > 26) {
    throw std::invalid_argument("sequences::generate: " + std::to_string(config.symbols) +
                                " symbols (expected 1..26, the letters a..z)");
  }
  if (config.min_length < 1 || config.min_length > config.max_length) {
    throw std::invalid_argument("sequences::generate: lengths " + std::to_string(config.min_length) + ".." +
                                std::to_string(config.max_length) + " (expected 1 ≤ min_length ≤ max_length)");
  }
  const std::size_t span = config.max_length - config.min_length + 1;
  std::vector<Example> examples(count);
  for (Example& example : examples) {
    const std::size_t length = config.min_length + rng.next() % span;
    for (std::size_t i = 0; i < length; ++i) {
      example.source.push_back(first_symbol + static_cast<std::int64_t>(rng.next() % config.symbols));
    }
    example.target = example.source;
    if (config.task == Task::reverse) std::reverse(example.target.begin(), example.target.end());
  }
  return examples;
}

Batch batch_of(const std::vector<Example>& examples, const std::vector<std::size_t>& indices) {
  std::vector<std::vector<std::int64_t>> sources, targets;
  for (const std::size_t k : indices) {
    sources.push_back(examples.at(k).source);
    targets.push_back(examples.at(k).target);
  }
  return make_batch(sources, targets);
}

std::string spell(const std::vector<std::int64_t>& ids) {
  std::string text;
  for (const std::int64_t id : ids) {
    if (id >= first_symbol && id < first_symbol + 26) {
      text += static_cast<char>('a' + (id - first_symbol));
    } else if (id == sos_id) {
      text += '^';
    } else if (id == eos_id) {
      text += '$';
    } else if (id == pad_id) {
      text += '_';
    } else {
      text += '?';
    }
  }
  return text;
}

template <class T>
std::vector<double> train(Seq2seq<T>& model, const std::vector<Example>& examples, const TrainOptions& options) {
  if (examples.empty()) throw std::invalid_argument("sequences::train: no examples");
  std::vector<std::vector<std::int64_t>> sources, targets;
  for (const Example& example : examples) {
    sources.push_back(example.source);
    targets.push_back(example.target);
  }
  return models::train(model, sources, targets, options);
}

template <class T>
std::vector<std::vector<std::int64_t>> predict(Seq2seq<T>& model, const std::vector<Example>& examples,
                                               std::size_t batch_size) {
  if (batch_size == 0) throw std::invalid_argument("sequences::predict: batch size 0");
  std::vector<std::vector<std::int64_t>> outputs;
  for (const std::vector<std::size_t>& indices : batch_order(examples.size(), batch_size, nullptr)) {
    const Batch batch = batch_of(examples, indices);
    for (Hypothesis& h : greedy_decode(model, batch.source, batch.source_lengths)) outputs.push_back(h.tokens);
  }
  return outputs;
}

std::vector<LengthScore> score_by_length(const std::vector<Example>& examples,
                                         const std::vector<std::vector<std::int64_t>>& outputs) {
  if (examples.size() != outputs.size()) {
    throw std::invalid_argument("sequences::score_by_length: " + std::to_string(examples.size()) + " examples but " +
                                std::to_string(outputs.size()) + " outputs");
  }
  std::map<std::size_t, LengthScore> by_length;
  for (std::size_t k = 0; k < examples.size(); ++k) {
    LengthScore& score = by_length[examples[k].source.size()];
    score.length = examples[k].source.size();
    ++score.count;
    if (outputs[k] == examples[k].target) ++score.exact;
  }
  std::vector<LengthScore> scores;
  for (const auto& entry : by_length) scores.push_back(entry.second);
  return scores;
}

LengthExperiment bottleneck_experiment(bool small) {
  // [docs:experiment]
  LengthExperiment experiment;
  experiment.task.task = Task::copy;  // y = x: y_1 = x_1 must travel through all T_x encoder steps and c
  experiment.task.symbols = 10;       // a..j
  experiment.task.min_length = 5;
  experiment.task.max_length = small ? 12 : 40;
  experiment.train_examples = small ? 400 : 20000;
  for (std::size_t length = 5; length <= experiment.task.max_length; length += small ? 7 : 5) {
    experiment.test_lengths.push_back(length);
  }
  experiment.test_per_length = small ? 10 : 100;
  experiment.embedding_dim = 16;
  experiment.hidden_size = small ? 16 : 64;
  experiment.training.steps = small ? 40 : 2000;
  experiment.training.batch_size = 32;
  experiment.training.lr = 3e-3;
  // lr / 10 for the last 30% of the steps: without it the attention model's exact match on long strings depended on
  // the training (40 symbols: 34-73% over three seeds; with it 95-99% over five,
  // docs/10-attention-fixes-the-bottleneck.md)
  experiment.training.lr_drop_after = experiment.training.steps * 7 / 10;
  experiment.seed = 1;
  experiment.training.seed = experiment.seed;
  // [docs:end]
  return experiment;
}

std::vector<Example> training_set(const LengthExperiment& experiment) {
  Rng rng(experiment.seed);
  return generate(experiment.task, experiment.train_examples, rng);
}

std::vector<Example> test_set(const LengthExperiment& experiment) {
  Rng rng(experiment.seed + 1);
  std::vector<Example> examples;
  for (const std::size_t length : experiment.test_lengths) {
    TaskConfig at_length = experiment.task;
    at_length.min_length = at_length.max_length = length;
    const std::vector<Example> some = generate(at_length, experiment.test_per_length, rng);
    examples.insert(examples.end(), some.begin(), some.end());
  }
  return examples;
}

Seq2seqConfig model_config(const LengthExperiment& experiment, const std::string& decoder) {
  Seq2seqConfig config;
  config.source_vocab_size = config.target_vocab_size = vocab_size(experiment.task);
  config.set_decoder(decoder);
  config.embedding_dim = experiment.embedding_dim;
  config.hidden_size = experiment.hidden_size;
  config.max_target_length = experiment.task.max_length + 10;  // room for an output that runs on
  config.seed = experiment.seed;
  return config;
}

#define ATTEND_INSTANTIATE(T)                                                                           \
  template std::vector<double> train<T>(Seq2seq<T>&, const std::vector<Example>&, const TrainOptions&); \
  template std::vector<std::vector<std::int64_t>> predict<T>(Seq2seq<T>&, const std::vector<Example>&, std::size_t);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend::models::sequences
