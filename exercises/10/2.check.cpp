// The check of exercise 10.2 (exercises/10/2.hpp): the lengthened experiment, where_it_falls, alignment_path and slip
// against outputs and scores built by hand and against the reference solution; then three seeds of the chapter's
// Bahdanau model trained on sources lengthened from 3–8 to 3–16 symbols, with the claims that its curve falls inside
// the trained lengths and that its long failures go wrong inside the string, not at its end.
#include "exercises/10/2.hpp"

#include <map>
#define yours reference
#include "exercises/10/2.hpp"
#undef yours
#include "exercises/check.hpp"

using namespace attend;
using namespace attend::models;

namespace {

std::string lengths_of(const std::vector<std::size_t>& lengths) {
  std::string text;
  for (const std::size_t n : lengths) text += (text.empty() ? "" : ", ") + std::to_string(n);
  return "{" + text + "}";
}

void check_lengthened(exercise::Check& check) {
  sequences::LengthExperiment one = sequences::bottleneck_experiment(true);
  one.test_lengths = {4};
  const struct {
    std::string name;
    sequences::LengthExperiment base;
    std::size_t max_length;
  } cases[] = {{"the chapter's experiment to 60 symbols", sequences::bottleneck_experiment(false), 60},
               {"another case: the --small experiment (tests 5, 12) to 30", sequences::bottleneck_experiment(true), 30},
               {"another case: one test length, 4, to 16", one, 16}};
  for (const auto& c : cases) {
    check.run(c.name, [&] {
      const sequences::LengthExperiment yours = yours::lengthened(c.base, c.max_length);
      const sequences::LengthExperiment expected = reference::lengthened(c.base, c.max_length);
      check.that(yours.test_lengths == expected.test_lengths && yours.task.max_length == c.max_length,
                 c.name + ": max_length and the test lengths",
                 "yours: max_length " + std::to_string(yours.task.max_length) + ", tests " +
                     lengths_of(yours.test_lengths) + "; expected " + lengths_of(expected.test_lengths));
      check.that(yours.train_examples == c.base.train_examples && yours.task.min_length == c.base.task.min_length &&
                     yours.hidden_size == c.base.hidden_size && yours.training.steps == c.base.training.steps &&
                     yours.test_per_length == c.base.test_per_length,
                 c.name + ": everything else as it was");
    });
  }
}

sequences::LengthScore score(std::size_t length, std::size_t exact) { return {length, 10, exact}; }

void check_falls(exercise::Check& check) {
  const std::vector<sequences::LengthScore> curve{score(5, 10), score(10, 9), score(15, 4), score(20, 6)};
  const struct {
    std::string name;
    std::vector<sequences::LengthScore> scores;
    double threshold;
    std::size_t expected;
  } cases[] = {{"100 %, 90 %, 40 %, 60 %, below 0.5", curve, 0.5, 15},
               {"another case: the same curve, below 0.95", curve, 0.95, 10},
               {"another case: 90 % exactly is not below 0.9", curve, 0.9, 15},
               {"another case: nothing below 0.3", curve, 0.3, 0}};
  for (const auto& c : cases) {
    check.run(c.name, [&] {
      const std::size_t yours = yours::where_it_falls(c.scores, c.threshold);
      check.that(yours == c.expected, "where_it_falls, " + c.name,
                 "yours " + std::to_string(yours) + ", expected " + std::to_string(c.expected));
    });
  }
}

Hypothesis output(const std::vector<std::int64_t>& tokens, const std::vector<std::vector<float>>& rows) {
  Hypothesis h;
  h.tokens = tokens;
  h.finished = true;
  h.attention = rows;
  return h;
}

// A row of weights over 5 source positions with its largest at position `at` (from 1).
std::vector<float> peak(std::size_t at) {
  std::vector<float> row(5, 0.1f);
  row[at - 1] = 0.6f;
  return row;
}

void check_by_hand(exercise::Check& check) {
  check.run("alignment_path of weights built by hand", [&] {
    const Hypothesis h = output({5, 6, 7}, {peak(1), peak(2), {0.4f, 0.1f, 0.4f, 0.05f, 0.05f}, peak(5)});
    const std::vector<std::size_t> path = yours::alignment_path(h), expected{1, 2, 1, 5};
    check.that(path == expected, "a_j = argmax_i α_ij, from 1, the first of two equal weights (row 3)",
               "yours " + lengths_of(path) + ", expected " + lengths_of(expected));
  });
  const sequences::Example copy{{4, 5, 6, 7, 8}, {4, 5, 6, 7, 8}};
  const auto diagonal = [](std::size_t rows) {
    std::vector<std::vector<float>> weights;
    for (std::size_t j = 1; j <= rows; ++j) weights.push_back(peak(std::min<std::size_t>(j, 5)));
    return weights;
  };
  std::vector<std::vector<float>> ahead = diagonal(5), behind = diagonal(7), early = diagonal(3), late = diagonal(7);
  ahead[2] = peak(4);
  behind[2] = peak(2);
  early[2] = peak(5);
  late[5] = peak(4);
  const struct {
    std::string name;
    Hypothesis h;
    std::string expected;
  } cases[] = {{"the target itself", output({4, 5, 6, 7, 8}, diagonal(6)), ""},
               {"x_3 left out, the weight on x_4 at step 3", output({4, 5, 7, 8}, ahead), "skip"},
               {"x_2 written twice, the weight on x_2 at step 3", output({4, 5, 5, 6, 7, 8}, behind), "stutter"},
               {"a wrong symbol at step 3 with the weight on x_3", output({4, 5, 9, 7, 8}, diagonal(6)), "misread"},
               {"another case: the end token at step 3, weight on x_5", output({4, 5}, early), "skip"},
               {"another case: a sixth symbol, weight on x_4 where the end belongs", output({4, 5, 6, 7, 8, 7}, late),
                "stutter"}};
  for (const auto& c : cases) {
    check.run("slip: " + c.name, [&] {
      const std::string yours = yours::slip(copy, c.h);
      check.that(yours == c.expected, "slip: " + c.name, "yours \"" + yours + "\", expected \"" + c.expected + "\"");
    });
  }
}

// The experiment of the check: chapter 10's scaled down to 6 symbols, sources of 3 to 8 symbols (tests at 4, 6, 8),
// H = E = 16, 300 steps of 32 at a learning rate of 0.01 (a tenth of it for the last 30 %).
sequences::LengthExperiment small_experiment(std::uint64_t seed) {
  sequences::LengthExperiment experiment = sequences::bottleneck_experiment(true);
  experiment.task.symbols = 6;
  experiment.task.min_length = 3;
  experiment.task.max_length = 8;
  experiment.test_lengths = {4, 6, 8};
  experiment.test_per_length = 30;
  experiment.train_examples = 4000;
  experiment.embedding_dim = experiment.hidden_size = 16;
  experiment.training.steps = 300;
  experiment.training.lr = 0.01;
  experiment.training.lr_drop_after = 210;
  experiment.training.seed = seed;
  return experiment;
}

// The first wrong output step j of a failure (from 1; T_y + 1 where the end token belongs).
std::size_t first_wrong(const sequences::Example& example, const Hypothesis& h) {
  std::size_t j = 1;
  while (j <= h.tokens.size() && j <= example.target.size() && h.tokens[j - 1] == example.target[j - 1]) ++j;
  return j;
}

void check_seed(exercise::Check& check, std::uint64_t seed) {
  const std::string name = "seed " + std::to_string(seed);
  check.run(name + ": the lengthened experiment", [&] {
    const sequences::LengthExperiment experiment = yours::lengthened(small_experiment(seed), 16);
    Seq2seqConfig config = sequences::model_config(experiment, "bahdanau");
    config.seed = seed;
    Seq2seq<double> model(config);
    sequences::train(model, sequences::training_set(experiment), experiment.training);
    const std::vector<sequences::Example> test = sequences::test_set(experiment);
    std::vector<std::size_t> all(test.size());
    for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
    const Batch batch = sequences::batch_of(test, all);
    const std::vector<Hypothesis> outputs = decode(model, batch.source, batch.source_lengths);
    std::vector<std::vector<std::int64_t>> tokens;
    for (const Hypothesis& h : outputs) tokens.push_back(h.tokens);
    const std::vector<sequences::LengthScore> scores = sequences::score_by_length(test, tokens);
    const std::size_t falls = yours::where_it_falls(scores, 0.5);
    std::string curve;
    for (const sequences::LengthScore& s : scores) {
      curve += (curve.empty() ? "" : ", ") + std::to_string(s.length) + ": " + exercise::number(s.exact_match());
    }
    check.that(
        falls > scores.front().length && falls <= 16,
        name + ": exact match falls below 0.5 after the shortest test length and at most at 16, a trained length",
        "yours " + std::to_string(falls) + " (exact match " + curve + ")");
    // every failure's path and slip against the reference's; the first wrong step of the longest sources
    std::size_t differ = 0, failures_16 = 0, wrong_steps_16 = 0;
    std::map<std::string, std::size_t> kinds;
    for (std::size_t k = 0; k < test.size(); ++k) {
      const std::string kind = yours::slip(test[k], outputs[k]);
      differ += yours::alignment_path(outputs[k]) != reference::alignment_path(outputs[k]) ||
                kind != reference::slip(test[k], outputs[k]);
      if (kind.empty()) continue;
      ++kinds[kind];
      if (test[k].source.size() == 16) ++failures_16, wrong_steps_16 += first_wrong(test[k], outputs[k]);
    }
    std::string tally;
    for (const auto& [kind, count] : kinds) tally += (tally.empty() ? "" : ", ") + kind + " " + std::to_string(count);
    check.that(differ == 0,
               name + ": alignment_path and slip of all " + std::to_string(test.size()) + " outputs = the reference's",
               std::to_string(differ) + " differ; slips: " + tally);
    const double mean = failures_16 ? static_cast<double>(wrong_steps_16) / static_cast<double>(failures_16) : 0.0;
    check.that(failures_16 > 0 && mean <= 13,
               name + ": the failures at 16 symbols go wrong inside the string: mean first wrong step j ≤ 13",
               std::to_string(failures_16) + " failures, mean j " + exercise::number(mean));
  });
}

}  // namespace

int main() {
  exercise::Check check("10.2", "longer sources: where the curve falls, how the alignment breaks");
  check_lengthened(check);
  check_falls(check);
  check_by_hand(check);
  for (const std::uint64_t seed : {1, 2, 3}) check_seed(check, seed);
  return check.verdict();
}
