// The check of exercise 12.5 (exercises/12/5.hpp): the split with fewer training pairs against the full one (the same
// test sentences, a sample of its training pairs); pairs_needed against exact cases; then three seeds of the chapter's
// Hindi model scaled down, on half its training pairs and on all of them, with the claims that all the pairs give the
// lower test loss and that half of them open a wider gap between the training and the test loss.
#include "exercises/12/5.hpp"

#include <cmath>
#include <set>
#define yours reference
#include "exercises/12/5.hpp"
#undef yours
#include "data/locate.hpp"
#include "exercises/check.hpp"
#include "models/train.hpp"

using namespace attend;
using namespace attend::models;

namespace {

void check_pairs_needed(exercise::Check& check) {
  const struct {
    std::string name;
    double n_1, b_1, n_2, b_2, b, expected;
  } cases[] = {{"10 from 1,000 pairs, 15 from 2,000: 25 takes two more doublings", 1000, 10, 2000, 15, 25, 8000},
               {"the same line: 15 takes 2,000", 1000, 10, 2000, 15, 15, 2000},
               {"another case: 4 from 500, 10 from 1,500: 16 takes one more tripling", 500, 4, 1500, 10, 16, 4500},
               {"another case: 10 from 1,000, 15 from 2,000: 5 took 500", 1000, 10, 2000, 15, 5, 500},
               {"another case: half a step, 12.5 from 1,000 and 2,000 pairs at 10 and 15", 1000, 10, 2000, 15, 12.5,
                1000 * std::sqrt(2.0)}};
  for (const auto& c : cases) {
    check.run(c.name, [&] {
      check.near("pairs_needed: " + c.name, yours::pairs_needed(c.n_1, c.b_1, c.n_2, c.b_2, c.b), c.expected,
                 1e-9 * c.expected);
    });
  }
}

data::TranslationSplitOptions hindi_split() {
  data::TranslationSplitOptions split;  // the chapter's: seed 1, at most 10 words, 300 test sentences
  split.validation_size = 0;
  split.test_size = 300;
  split.max_words = 10;
  return split;
}

std::string joined(const data::TokenPair& pair) {
  std::string text;
  for (const std::string& token : pair.source) text += token + " ";
  text += "\t";
  for (const std::string& token : pair.target) text += token + " ";
  return text;
}

void check_split(exercise::Check& check, const data::PairFile& file, const data::TranslationData& all) {
  for (const std::size_t pairs : {std::size_t{1175}, std::size_t{100}}) {
    const std::string name = std::string(pairs == 1175 ? "" : "another case: ") + std::to_string(pairs) + " pairs";
    check.run(name, [&] {
      const data::TranslationSplitOptions split = yours::with_training_pairs(hindi_split(), pairs);
      const data::TranslationData fewer = data::make_translation_data(file, split);
      std::set<std::string> all_pairs;
      for (const data::TokenPair& pair : all.train) all_pairs.insert(joined(pair));
      std::size_t inside = 0;
      for (const data::TokenPair& pair : fewer.train) inside += all_pairs.count(joined(pair));
      bool same_test = fewer.test.size() == all.test.size();
      for (std::size_t k = 0; same_test && k < all.test.size(); ++k) {
        same_test = fewer.test[k].source == all.test[k].source && fewer.test[k].references == all.test[k].references;
      }
      check.that(
          fewer.train.size() == pairs && inside == pairs,
          name + ": that many training pairs, each one of the full split's",
          std::to_string(fewer.train.size()) + " pairs, " + std::to_string(inside) + " of them in the full split");
      check.that(same_test && split.seed == hindi_split().seed && split.max_words == hindi_split().max_words,
                 name + ": the same 300 test sentences as the full split, the other options unchanged");
    });
  }
}

using Sequence = std::vector<std::int64_t>;

// {the loss on 300 of its own training pairs, the loss on the test sentences (first references)} of the chapter's
// Bahdanau model, E = H = 16, after 300 steps of 32 of the given training pairs.
std::pair<double, double> losses(const std::vector<data::TokenPair>& train_pairs,
                                 const std::vector<data::TranslationExample>& test, const data::Vocabulary& source,
                                 const data::Vocabulary& target, std::uint64_t seed) {
  std::vector<Sequence> xs, ys, test_x, test_y;
  for (const data::TokenPair& pair : train_pairs)
    xs.push_back(source.encode(pair.source)), ys.push_back(target.encode(pair.target));
  for (const data::TranslationExample& example : test) {
    test_x.push_back(source.encode(example.source));
    test_y.push_back(target.encode(example.references.front()));
  }
  Seq2seqConfig config;
  config.source_vocab_size = source.size();
  config.target_vocab_size = target.size();
  config.set_decoder("bahdanau");
  config.embedding_dim = config.hidden_size = 16;
  config.seed = seed;
  Seq2seq<float> model(config);
  TrainOptions training;
  training.steps = 300;
  training.batch_size = 32;
  training.lr = 0.01;
  training.seed = seed;
  train(model, xs, ys, training);
  Tape<float> tape;
  const std::vector<Sequence> own_x(xs.begin(), xs.begin() + 300), own_y(ys.begin(), ys.begin() + 300);
  const double own = model.loss(tape, make_batch(own_x, own_y)).value().item();
  return {own, model.loss(tape, make_batch(test_x, test_y)).value().item()};
}

void check_seed(exercise::Check& check, const data::TranslationData& half, const data::TranslationData& all,
                std::uint64_t seed) {
  const std::string name = "seed " + std::to_string(seed);
  check.run(name + ": half the pairs and all of them", [&] {
    std::vector<std::vector<std::string>> sources, targets;
    for (const data::TokenPair& pair : all.train) sources.push_back(pair.source), targets.push_back(pair.target);
    const data::Vocabulary source = data::build_vocabulary(sources, 2), target = data::build_vocabulary(targets, 2);
    const auto [half_own, half_test] = losses(half.train, half.test, source, target, seed);
    const auto [all_own, all_test] = losses(all.train, all.test, source, target, seed);
    const std::string detail = std::to_string(half.train.size()) + " pairs: own " + exercise::number(half_own) +
                               ", test " + exercise::number(half_test) + "; " + std::to_string(all.train.size()) +
                               " pairs: own " + exercise::number(all_own) + ", test " + exercise::number(all_test);
    check.that(all_test <= half_test - 0.15, name + ": all the pairs give a test loss at least 0.15 below half of them",
               detail);
    check.that(half_test - half_own >= all_test - all_own + 0.3,
               name + ": with half the pairs, test loss − own loss is at least 0.3 wider", detail);
  });
}

}  // namespace

int main() {
  exercise::Check check("12.5", "Hindi → English on half the pairs: what more data would buy");
  check_pairs_needed(check);
  data::PairFile file;
  data::TranslationData all;
  check.run("the data: tatoeba/hin-eng.tsv", [&] {
    file = data::read_pair_file(data::find_data_file("tatoeba/hin-eng.tsv"));
    all = data::make_translation_data(file, hindi_split());
  });
  if (all.train.empty()) return check.verdict();
  check_split(check, file, all);
  data::TranslationData half;
  check.run("half of the training pairs", [&] {
    half = data::make_translation_data(file, yours::with_training_pairs(hindi_split(), all.train.size() / 2));
  });
  if (half.train.size() != all.train.size() / 2) return check.verdict();
  for (const std::uint64_t seed : {1, 2, 3}) check_seed(check, half, all, seed);
  return check.verdict();
}
