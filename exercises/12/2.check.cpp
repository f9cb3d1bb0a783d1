// The check of exercise 12.2 (exercises/12/2.hpp): the parameters of one more source or target word against the
// library's parameter_count of models one word apart; the <unk> share against a count here and the reference; the
// BLEU ceiling against the reference and, for a vocabulary that holds every reference word, against BLEU of the
// references themselves; and, on Spanish → English with three split seeds, the claims that the <unk> share grows and
// the ceiling falls as min_count goes 1 → 2 → 5.
#include "exercises/12/2.hpp"

#define yours reference
#include "exercises/12/2.hpp"
#undef yours
#include "data/bleu.hpp"
#include "exercises/12/spanish_data.hpp"
#include "exercises/check.hpp"

using namespace attend;
using namespace attend::models;

namespace {

Seq2seqConfig configured(const std::string& decoder, std::size_t E, std::size_t H) {
  Seq2seqConfig config;
  config.source_vocab_size = 300;
  config.target_vocab_size = 200;
  config.set_decoder(decoder);
  config.embedding_dim = E;
  config.hidden_size = H;
  return config;
}

void check_parameters(exercise::Check& check) {
  Seq2seqConfig both_ways = configured("bahdanau", 6, 9), lstm = configured("luong-concat", 5, 7);
  both_ways.bidirectional = true;
  lstm.cell = nn::CellKind::lstm;
  const std::pair<std::string, Seq2seqConfig> cases[] = {
      {"Bahdanau, the chapter's E = 64, H = 128", configured("bahdanau", 64, 128)},
      {"vanilla, E = 64, H = 128", configured("vanilla", 64, 128)},
      {"Luong-general, E = 64, H = 128", configured("luong-general", 64, 128)},
      {"another case: a bidirectional Bahdanau, E = 6, H = 9", both_ways},
      {"another case: an LSTM Luong-concat, E = 5, H = 7", lstm}};
  for (const auto& [name, config] : cases) {
    check.run(name + ": parameters per word", [&, name = name, config = config] {
      const auto count = [](Seq2seqConfig c, std::size_t more_x, std::size_t more_y) {
        c.source_vocab_size += more_x;
        c.target_vocab_size += more_y;
        return double(Seq2seq<float>(c).parameter_count());
      };
      check.near(name + ": one more source word adds your parameters_per_source_word",
                 double(yours::parameters_per_source_word(config)), count(config, 1, 0) - count(config, 0, 0), 0.0);
      check.near(name + ": one more target word adds your parameters_per_target_word",
                 double(yours::parameters_per_target_word(config)), count(config, 0, 1) - count(config, 0, 0), 0.0);
    });
  }
}

// Spanish → English as the chapter splits it (at most 10 words a side), every 10th pair of the file, 300 test
// sentences, no validation set.
data::TranslationData split_of(const data::PairFile& file, std::uint64_t seed) {
  data::TranslationSplitOptions split;
  split.seed = seed;
  split.validation_size = 0;
  split.test_size = 300;
  split.max_words = 10;
  return data::make_translation_data(file, split);
}

// The share of <unk> counted here: tokens the vocabulary does not contain.
double counted_share(const std::vector<data::TranslationExample>& test, const data::Vocabulary& source) {
  double tokens = 0, unknown = 0;
  for (const data::TranslationExample& example : test) {
    for (const std::string& token : example.source) tokens += 1, unknown += !source.contains(token);
  }
  return unknown / tokens;
}

void check_seed(exercise::Check& check, const data::PairFile& file, std::uint64_t seed) {
  const std::string name = "split seed " + std::to_string(seed);
  check.run(name, [&] {
    const data::TranslationData data = split_of(file, seed);
    std::vector<std::vector<std::string>> sources, targets;
    for (const data::TokenPair& pair : data.train) sources.push_back(pair.source), targets.push_back(pair.target);
    double share[3], ceiling[3];
    std::string line;
    const std::size_t min_counts[3] = {1, 2, 5};
    for (std::size_t m = 0; m < 3; ++m) {
      const data::Vocabulary source = data::build_vocabulary(sources, min_counts[m]);
      const data::Vocabulary target = data::build_vocabulary(targets, min_counts[m]);
      share[m] = yours::unk_share(data.test, source);
      ceiling[m] = yours::bleu_ceiling(data.test, target);
      const std::string at = name + ", min_count " + std::to_string(min_counts[m]);
      check.near(at + ": <unk> share = the count of tokens the vocabulary lacks", share[m],
                 counted_share(data.test, source), 1e-15);
      check.near(at + ": the BLEU ceiling = the reference's", ceiling[m], reference::bleu_ceiling(data.test, target),
                 1e-15);
      line += (line.empty() ? "" : "; ") + std::to_string(min_counts[m]) + ": V " + std::to_string(source.size()) +
              "/" + std::to_string(target.size()) + ", <unk> " + exercise::number(share[m]) + ", ceiling " +
              exercise::number(ceiling[m]);
    }
    check.that(share[0] < share[1] && share[1] < share[2] && share[2] >= 2 * share[0],
               name + ": the <unk> share of the test sources grows with min_count, at least doubling from 1 to 5",
               line);
    check.that(ceiling[0] > ceiling[1] && ceiling[1] > ceiling[2] && ceiling[0] - ceiling[2] >= 0.05,
               name + ": the BLEU ceiling falls as min_count grows, by at least 0.05 from 1 to 5", line);
  });
}

void check_extremes(exercise::Check& check, const data::PairFile& file) {
  check.run("another case: vocabularies built from the test sentences themselves", [&] {
    const data::TranslationData data = split_of(file, 1);
    std::vector<std::vector<std::string>> sources, references;
    for (const data::TranslationExample& example : data.test) {
      sources.push_back(example.source);
      for (const auto& reference : example.references) references.push_back(reference);
    }
    check.near("another case: a source vocabulary of the test sources: <unk> share 0",
               yours::unk_share(data.test, data::build_vocabulary(sources, 1)), 0.0, 0.0);
    // every reference word known: the ceiling is BLEU of the first references themselves, below 1 only because a
    // reference shorter than n tokens still counts one unmatched n-gram (12.2)
    std::vector<std::vector<std::string>> first;
    std::vector<std::vector<std::vector<std::string>>> all;
    for (const data::TranslationExample& example : data.test) {
      first.push_back(example.references.front());
      all.push_back(example.references);
    }
    check.near("another case: a target vocabulary of the test references: the ceiling = BLEU of the references",
               yours::bleu_ceiling(data.test, data::build_vocabulary(references, 1)),
               data::corpus_bleu(first, all).bleu, 1e-15);
  });
}

}  // namespace

int main() {
  exercise::Check check("12.2", "min_count: vocabularies, <unk>, parameters per word, the BLEU ceiling");
  check_parameters(check);
  data::PairFile file;
  check.run("the data: tatoeba/spa-eng.tsv", [&] { file = exercise::spanish_pairs(10); });
  if (file.pairs.empty()) return check.verdict();
  for (const std::uint64_t seed : {1, 2, 3}) check_seed(check, file, seed);
  check_extremes(check, file);
  return check.verdict();
}
