// The dates task as the checks of chapters 8, 9 and 14 use it: its source and target vocabularies (the four specials,
// then each alphabet's characters, as the chapters' programs make them), a text as ids of either, a recurrent model
// of the task, and the encoded training pairs and test dates an experiment is trained (scaled down) and measured on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dates.hpp"
#include "data/vocabulary.hpp"
#include "models/batch.hpp"
#include "models/seq2seq.hpp"
#include "models/train.hpp"

namespace attend::exercise {

struct DateVocabularies {
  data::Vocabulary source, target;
};

inline const DateVocabularies& date_vocabularies() {
  static const DateVocabularies v = [] {
    DateVocabularies made;
    for (const std::string& c : data::dates::source_alphabet()) made.source.add(c);
    for (const std::string& c : data::dates::target_alphabet()) made.target.add(c);
    return made;
  }();
  return v;
}

// A source text ("12/28/1953") as ids of the source vocabulary; a target ("1953-12-28") as ids of the target one.
inline std::vector<std::int64_t> date_source_ids(const std::string& text) {
  return date_vocabularies().source.encode(data::utf8_characters(text));
}
inline std::vector<std::int64_t> date_target_ids(const std::string& text) {
  return date_vocabularies().target.encode(data::utf8_characters(text));
}

// A Seq2seq model of the dates task: `decoder` (a name Seq2seqConfig::set_decoder knows), E, H and the seed of its
// weights; every other field the library's default.
inline models::Seq2seqConfig date_model_config(const std::string& decoder, std::size_t E, std::size_t H,
                                               std::uint64_t seed) {
  models::Seq2seqConfig config;
  config.source_vocab_size = date_vocabularies().source.size();
  config.target_vocab_size = date_vocabularies().target.size();
  config.set_decoder(decoder);
  config.embedding_dim = E;
  config.hidden_size = H;
  config.seed = seed;
  return config;
}

// dates::make_splits(seed 1, `pairs` training pairs, no validation, `test_dates` test dates) encoded: the pairs as id
// sequences, the test dates as one batch (with their targets when `with_targets`).
struct DatesData {
  std::vector<std::vector<std::int64_t>> sources, targets;
  models::Batch test;
};

inline DatesData dates_data(std::size_t pairs, std::size_t test_dates, bool with_targets) {
  const data::dates::Splits splits = data::dates::make_splits(/*seed=*/1, pairs, 0, test_dates);
  DatesData encoded;
  for (const data::dates::Example& e : splits.train) {
    encoded.sources.push_back(date_source_ids(e.source));
    encoded.targets.push_back(date_target_ids(e.target));
  }
  std::vector<std::vector<std::int64_t>> test_sources, test_targets;
  for (const data::dates::Example& e : splits.test) {
    test_sources.push_back(date_source_ids(e.source));
    if (with_targets) test_targets.push_back(date_target_ids(e.target));
  }
  encoded.test = models::make_batch(test_sources, test_targets);
  return encoded;
}

// The training of the chapters' dates experiments scaled down: `steps` steps of 32 pairs, Adam at 8e-3, the batches
// drawn from `seed`.
inline models::TrainOptions dates_training(std::size_t steps, std::uint64_t seed) {
  models::TrainOptions options;
  options.steps = steps;
  options.batch_size = 32;
  options.lr = 8e-3;
  options.seed = seed;
  return options;
}

}  // namespace attend::exercise
