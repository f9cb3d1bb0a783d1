// The Spanish → English pairs as the checks of chapter 12's exercises scale the chapter's data down: every n-th pair
// of tatoeba/spa-eng.tsv, and the small corpus exercises 12.1 and 12.3 train on, encoded, with their training.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/locate.hpp"
#include "data/pairs.hpp"
#include "models/seq2seq.hpp"
#include "models/train.hpp"

namespace attend::exercise {

// Every `every`-th pair of tatoeba/spa-eng.tsv, from the first. Throws data::DataNotFound when the file is absent.
inline data::PairFile spanish_pairs(std::size_t every) {
  const data::PairFile file = data::read_pair_file(data::find_data_file("tatoeba/spa-eng.tsv"));
  data::PairFile few = file;
  few.pairs.clear();
  for (std::size_t k = 0; k < file.pairs.size(); k += every) few.pairs.push_back(file.pairs[k]);
  return few;
}

// Spanish → English, scaled down: every 5th pair of the file, pairs of at most 4 words a side, 200 test sentences,
// the tokens seen at least 3 times (the rest <unk>).
struct SmallCorpus {
  data::Vocabulary source, target;
  std::vector<std::vector<std::int64_t>> sources, targets;  // the training pairs
  std::vector<data::TranslationExample> test;
  std::vector<std::vector<std::int64_t>> test_sources, test_targets;  // the test sentences and their first references
};

inline SmallCorpus small_corpus() {
  data::TranslationSplitOptions split;
  split.validation_size = 0;
  split.test_size = 200;
  split.max_words = 4;
  const data::TranslationData data = data::make_translation_data(spanish_pairs(5), split);
  std::vector<std::vector<std::string>> sources, targets;
  for (const data::TokenPair& pair : data.train) sources.push_back(pair.source), targets.push_back(pair.target);
  SmallCorpus corpus;
  corpus.source = data::build_vocabulary(sources, 3);
  corpus.target = data::build_vocabulary(targets, 3);
  for (std::size_t k = 0; k < sources.size(); ++k) {
    corpus.sources.push_back(corpus.source.encode(sources[k]));
    corpus.targets.push_back(corpus.target.encode(targets[k]));
  }
  corpus.test = data.test;
  for (const data::TranslationExample& example : data.test) {
    corpus.test_sources.push_back(corpus.source.encode(example.source));
    corpus.test_targets.push_back(corpus.target.encode(example.references.front()));
  }
  return corpus;
}

// 200 steps of 32 of the corpus's training pairs, Adam at 3e-3, the batches drawn from `seed`.
inline void train_on(const SmallCorpus& corpus, models::Seq2seq<float>& model, std::uint64_t seed) {
  models::TrainOptions training;
  training.steps = 200;
  training.batch_size = 32;
  training.lr = 3e-3;
  training.seed = seed;
  models::train(model, corpus.sources, corpus.targets, training);
}

}  // namespace attend::exercise
