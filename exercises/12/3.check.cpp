// The check of exercise 12.3 (exercises/12/3.hpp): best_of_tree against trees built by hand and against decode() on
// three small trained Spanish → English models (widths 1, 2, 5 and 10; α = 0, 1 and 2; a maximum length nothing
// reaches the end of); then, from one search per width, the claims that the mean log p(y | x) gains less from 5 to 10
// beams than from 1 to 2, and that α = 0, 0.5, 1 and 2 leave the output length c/r within 0.1 of each other.
#include "exercises/12/3.hpp"

#include <cmath>
#define yours reference
#include "exercises/12/3.hpp"
#undef yours
#include "data/bleu.hpp"
#include "exercises/12/spanish_data.hpp"
#include "exercises/check.hpp"

using namespace attend;
using namespace attend::models;

namespace {

std::string ids(const std::vector<std::int64_t>& tokens) {
  std::string text;
  for (const std::int64_t t : tokens) text += (text.empty() ? "" : " ") + std::to_string(t);
  return "[" + text + "]";
}

std::string shown(const Hypothesis& h) {
  return ids(h.tokens) + ", log p " + exercise::number(h.log_prob) + ", s " + exercise::number(h.score) +
         (h.finished ? ", finished" : ", unfinished");
}

bool same(const Hypothesis& a, const Hypothesis& b) {
  return a.tokens == b.tokens && a.finished == b.finished && a.log_prob == b.log_prob &&
         std::abs(a.score - b.score) <= 1e-12 * (1 + std::abs(b.score));
}

// A tree by hand. Step 1 keeps 5 (log p −0.5) and 6 (−0.7). Step 2 finishes 5 (−1.2: |y| = 2) and keeps 5 7 (−1.0)
// and 6 8 (−1.3). Step 3 finishes 5 7 (−1.5: |y| = 3) and keeps 5 7 9 (−2.0), 6 8 9 (−2.2).
SearchTree by_hand() {
  const std::int64_t end = eos_id;
  return {{{5, -0.5, -1, false, {}}, {6, -0.7, -1, false, {}}},
          {{end, -1.2, 0, true, {}}, {7, -1.0, 0, false, {}}, {8, -1.3, 1, false, {}}},
          {{end, -1.5, 1, true, {}}, {9, -2.0, 1, false, {}}, {9, -2.2, 2, false, {}}}};
}

Hypothesis expected(std::vector<std::int64_t> tokens, double log_prob, double score, bool finished) {
  Hypothesis h;
  h.tokens = std::move(tokens);
  h.log_prob = log_prob;
  h.score = score;
  h.finished = finished;
  return h;
}

void check_by_hand(exercise::Check& check) {
  SearchTree unfinished = by_hand();
  unfinished[1].erase(unfinished[1].begin());
  unfinished[2].erase(unfinished[2].begin());
  unfinished[2][0].parent = 0, unfinished[2][1].parent = 1;
  SearchTree tie = by_hand();
  tie[2][0].log_prob = -1.2;
  const struct {
    std::string name;
    SearchTree tree;
    double alpha;
    Hypothesis h;
  } cases[] = {
      {"a tree by hand, α = 0: the more probable [5] (−1.2 against −1.5)", by_hand(), 0.0,
       expected({5}, -1.2, -1.2, true)},
      {"a tree by hand, α = 1: the better per token [5 7] (−1.5/3 against −1.2/2)", by_hand(), 1.0,
       expected({5, 7}, -1.5, -0.5, true)},
      {"another case: α = 0.5, [5] again (−1.2/√2 against −1.5/√3)", by_hand(), 0.5,
       expected({5}, -1.2, -1.2 / std::sqrt(2.0), true)},
      {"another case: α = 0, [5] and [5 7] both at −1.2: the first", tie, 0.0, expected({5}, -1.2, -1.2, true)},
      {"another case: nothing finished, α = 1: the best live beam [5 7 9], |y| = 3", unfinished, 1.0,
       expected({5, 7, 9}, -2.0, -2.0 / 3, false)}};
  for (const auto& c : cases) {
    check.run(c.name, [&] {
      const Hypothesis h = yours::best_of_tree(c.tree, c.alpha);
      check.that(same(h, c.h), c.name, "yours " + shown(h) + "; expected " + shown(c.h));
    });
  }
}

// The Bahdanau model of the chapter, E = H = 16, after 200 steps of 32 pairs.
std::unique_ptr<Seq2seq<float>> trained(const exercise::SmallCorpus& corpus, std::uint64_t seed) {
  Seq2seqConfig config;
  config.source_vocab_size = corpus.source.size();
  config.target_vocab_size = corpus.target.size();
  config.set_decoder("bahdanau");
  config.embedding_dim = config.hidden_size = 16;
  config.max_target_length = 20;
  config.seed = seed;
  auto model = std::make_unique<Seq2seq<float>>(config);
  exercise::train_on(corpus, *model, seed);
  return model;
}

// decode() with the given width, α and maximum length, and each source's tree.
std::vector<Hypothesis> search(Seq2seq<float>& model, const Batch& batch, std::size_t width, double alpha,
                               std::vector<SearchTree>* trees, std::size_t max_length = 0) {
  SearchOptions options;
  options.beam_width = width;
  options.length_penalty = alpha;
  options.max_length = max_length;
  options.trees = trees;
  return decode(model, batch.source, batch.source_lengths, options);
}

// How many of decode()'s outputs your best_of_tree gives from its trees (at the α given to best_of_tree).
std::size_t agreeing(const std::vector<Hypothesis>& outputs, const std::vector<SearchTree>& trees, double alpha,
                     std::string& first_difference) {
  std::size_t agree = 0;
  for (std::size_t b = 0; b < outputs.size(); ++b) {
    const Hypothesis h = yours::best_of_tree(trees[b], alpha);
    if (same(h, outputs[b])) {
      ++agree;
    } else if (first_difference.empty()) {
      first_difference = "source " + std::to_string(b) + ": yours " + shown(h) + "; decode() " + shown(outputs[b]);
    }
  }
  return agree;
}

// c/r of the outputs best_of_tree picks from the trees at α: output length over reference length, as BLEU counts them.
double length_ratio(const exercise::SmallCorpus& corpus, const std::vector<SearchTree>& trees, double alpha) {
  std::vector<std::vector<std::string>> outputs;
  std::vector<std::vector<std::vector<std::string>>> references;
  for (std::size_t b = 0; b < trees.size(); ++b) {
    outputs.push_back(corpus.target.decode(yours::best_of_tree(trees[b], alpha).tokens));
    references.push_back(corpus.test[b].references);
  }
  const data::BleuScore score = data::corpus_bleu(outputs, references);
  return double(score.hypothesis_length) / double(score.reference_length);
}

void check_seed(exercise::Check& check, const exercise::SmallCorpus& corpus, std::uint64_t seed) {
  const std::string name = "seed " + std::to_string(seed);
  check.run(name + ": searches of widths 1, 2, 5, 10", [&] {
    const std::unique_ptr<Seq2seq<float>> model = trained(corpus, seed);
    const Batch test_batch = make_batch(corpus.test_sources);
    const std::size_t widths[4] = {1, 2, 5, 10}, n = corpus.test.size();
    std::vector<SearchTree> trees[4];
    double log_p[4] = {0, 0, 0, 0};
    for (std::size_t w = 0; w < 4; ++w) {
      const std::vector<Hypothesis> outputs = search(*model, test_batch, widths[w], 1.0, &trees[w]);
      std::string difference;
      const std::size_t agree = agreeing(outputs, trees[w], 1.0, difference);
      check.that(agree == n, name + ", width " + std::to_string(widths[w]) + ", α = 1: best_of_tree = decode()",
                 std::to_string(agree) + " of " + std::to_string(n) + " alike" + (agree == n ? "" : "; " + difference));
      for (const SearchTree& tree : trees[w]) log_p[w] += yours::best_of_tree(tree, 0.0).log_prob / double(n);
    }
    if (seed == 1) {
      for (const double alpha : {0.0, 2.0}) {
        std::string difference;
        const std::size_t agree = agreeing(search(*model, test_batch, 5, alpha, nullptr), trees[2], alpha, difference);
        check.that(
            agree == n,
            "another case: " + name + ", width 5: decode() at α = " + exercise::number(alpha) +
                " = best_of_tree at that α on the trees of α = 1",
            std::to_string(agree) + " of " + std::to_string(n) + " alike" + (agree == n ? "" : "; " + difference));
      }
      std::vector<SearchTree> short_trees;
      const std::vector<Hypothesis> outputs = search(*model, test_batch, 3, 1.0, &short_trees, 2);
      std::string difference;
      const std::size_t agree = agreeing(outputs, short_trees, 1.0, difference);
      check.that(agree == n, "another case: " + name + ", width 3, at most 2 tokens: best_of_tree = decode()",
                 std::to_string(agree) + " of " + std::to_string(n) + " alike" + (agree == n ? "" : "; " + difference));
    }
    const double first = log_p[1] - log_p[0], last = log_p[3] - log_p[2];
    check.that(first > 0 && first >= 2 * last,
               name + ": α = 0, the mean log p(y|x) gains at least twice as much from 1 to 2 beams as from 5 to 10",
               "mean log p: width 1 " + exercise::number(log_p[0]) + ", 2 " + exercise::number(log_p[1]) + ", 5 " +
                   exercise::number(log_p[2]) + ", 10 " + exercise::number(log_p[3]));
    double lowest = INFINITY, highest = -INFINITY;
    std::string ratios;
    for (const double alpha : {0.0, 0.5, 1.0, 2.0}) {
      const double r = length_ratio(corpus, trees[2], alpha);
      lowest = std::min(lowest, r), highest = std::max(highest, r);
      ratios += (ratios.empty() ? "" : ", ") + ("α = " + exercise::number(alpha)) + ": " + exercise::number(r);
    }
    check.that(highest - lowest <= 0.1, name + ": width 5, c/r moves by at most 0.1 from α = 0 to α = 2", ratios);
  });
}

}  // namespace

int main() {
  exercise::Check check("12.3", "beam widths and α: one search, every α");
  check_by_hand(check);
  exercise::SmallCorpus corpus;  // Spanish → English scaled down, as in exercise 12.1
  check.run("the data: tatoeba/spa-eng.tsv", [&] { corpus = exercise::small_corpus(); });
  if (corpus.test.empty()) return check.verdict();
  for (const std::uint64_t seed : {1, 2, 3}) check_seed(check, corpus, seed);
  return check.verdict();
}
