// The text tasks' shared parts (text_task.hpp).
#include "apps/tasks/text_task.hpp"

#include "data/text.hpp"
#include "io/atomic_file.hpp"
#include "models/batch.hpp"

namespace attend::app {

namespace {

// The training pairs as token ids, in batches of similar source length, reshuffled every epoch.
class TextBatches : public Batches {
 public:
  TextBatches(const std::vector<data::TokenPair>& pairs, const data::Vocabulary& source, const data::Vocabulary& target,
              std::size_t batch_size)
      : batch_size_(batch_size) {
    for (const data::TokenPair& p : pairs) {
      sources_.push_back(source.encode(p.source));
      targets_.push_back(target.encode(p.target));
      source_lengths_.push_back(sources_.back().size());
    }
  }
  std::size_t steps_per_epoch() const override { return (sources_.size() + batch_size_ - 1) / batch_size_; }
  std::vector<std::vector<std::size_t>> epoch_order(Rng& rng) const override {
    return models::bucketed_batch_order(source_lengths_, batch_size_, rng);
  }
  TrainingBatch batch(std::size_t, const std::vector<std::size_t>& indices) const override {
    TrainingBatch batch;
    for (std::size_t i : indices) {
      batch.sources.push_back(sources_[i]);
      batch.targets.push_back(targets_[i]);
      batch.tokens += targets_[i].size() + 1;
    }
    return batch;
  }

 private:
  std::size_t batch_size_;
  std::vector<std::vector<std::int64_t>> sources_, targets_;
  std::vector<std::size_t> source_lengths_;
};

std::string held_out_file(const std::vector<Example>& examples) {
  std::string text;
  for (const Example& e : examples) {
    text += data::join_tokens(e.source);
    for (const auto& reference : e.references) text += "\t" + data::join_tokens(reference);
    text += "\n";
  }
  return text;
}

}  // namespace

std::vector<std::int64_t> TextTask::encode_source(const data::Vocabulary& vocabulary, const std::string& text) const {
  const std::vector<std::string> tokens = source_tokens(text);
  if (tokens.empty()) throw InputError("empty input: nothing to read");
  if (tokens.size() > settings.max_source_length) {
    throw InputError("input " + quoted_input(text) + " is " + std::to_string(tokens.size()) + " " + token_word() +
                     " long; the model reads at most " + std::to_string(settings.max_source_length));
  }
  if (unknown_reads_as_unknown()) return vocabulary.encode(tokens);
  std::vector<std::int64_t> ids;
  for (const auto& token : tokens) {
    if (!vocabulary.contains(token)) {
      throw InputError("input " + quoted_input(text) + ": the character \"" + shown_text(token) +
                       "\" was never seen in training");
    }
    ids.push_back(vocabulary.id(token));
  }
  return ids;
}

std::string TextTask::training_summary(const TaskData& data, const data::Vocabulary& source,
                                       const data::Vocabulary& target) const {
  return std::to_string(static_cast<const TextData&>(data).train.size()) + " training pairs, " +
         std::to_string(data.validation.size()) + " validation; vocabularies " + std::to_string(source.size()) + " → " +
         std::to_string(target.size()) + "; ";
}

std::unique_ptr<Batches> TextTask::batches(const TaskData& data, const data::Vocabulary& source,
                                           const data::Vocabulary& target, std::size_t batch_size) const {
  return std::make_unique<TextBatches>(static_cast<const TextData&>(data).train, source, target, batch_size);
}

std::vector<Example> TextTask::training_examples(const TaskData& data) const {
  std::vector<Example> examples;
  for (const auto& p : static_cast<const TextData&>(data).train) examples.push_back({p.source, {p.target}});
  return examples;
}

std::string TextTask::vocabulary_summary(const data::Vocabulary& source, const data::Vocabulary& target) const {
  return "vocabularies: " + std::to_string(source.size()) + " source tokens, " + std::to_string(target.size()) +
         " target tokens";
}

std::string TextTask::write_data(const std::string& folder, const TaskData& data, const data::Vocabulary& source,
                                 const data::Vocabulary& target) const {
  std::string train;
  for (const auto& p : static_cast<const TextData&>(data).train) {
    train += data::join_tokens(p.source) + "\t" + data::join_tokens(p.target) + "\n";
  }
  write_file_atomically(folder + "train.tsv", train);
  write_file_atomically(folder + "validation.tsv", held_out_file(data.validation));
  write_file_atomically(folder + "test.tsv", held_out_file(data.test));
  write_file_atomically(folder + "source.vocab", vocabulary_file(source));
  write_file_atomically(folder + "target.vocab", vocabulary_file(target));
  return "train.tsv, validation.tsv, test.tsv, source.vocab and target.vocab";
}

}  // namespace attend::app
