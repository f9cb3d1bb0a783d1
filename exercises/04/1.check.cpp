// The check of exercise 4.1 (exercises/04/1.hpp): the reversed experiment field by field, the table of positions
// against exact shares of examples typed in here and against the reference solution; then chapter 4's experiment,
// scaled down, on copy and on reverse (three seeds).
#include "exercises/04/1.hpp"

#include <cmath>
#include <string>
#define yours reference
#include "exercises/04/1.hpp"
#undef yours
#include "exercises/check.hpp"

using namespace attend;
using namespace attend::models;

namespace {

using sequences::Example;
using sequences::LengthExperiment;

// Everything but the task kind, as text, to compare two experiments.
std::string settings(const LengthExperiment& e) {
  std::string s = std::to_string(e.task.symbols) + " symbols, lengths " + std::to_string(e.task.min_length) + ".." +
                  std::to_string(e.task.max_length) + ", tests";
  for (const std::size_t length : e.test_lengths) s += " " + std::to_string(length);
  s += " × " + std::to_string(e.test_per_length) + ", " + std::to_string(e.train_examples) + " examples, E " +
       std::to_string(e.embedding_dim) + ", H " + std::to_string(e.hidden_size) + ", " +
       std::to_string(e.training.steps) + " steps of " + std::to_string(e.training.batch_size) + ", lr " +
       exercise::number(e.training.lr) + " (÷10 after " + std::to_string(e.training.lr_drop_after) + "), seeds " +
       std::to_string(e.seed) + "/" + std::to_string(e.training.seed);
  return s;
}

void check_reversed(exercise::Check& check, const std::string& name, const LengthExperiment& experiment) {
  const LengthExperiment yours = yours::reversed(experiment);
  check.that(yours.task.task == sequences::Task::reverse && settings(yours) == settings(experiment),
             name + ": your experiment is the reverse task, everything else as it was",
             "task " + sequences::to_string(yours.task.task) + "; " + settings(yours));
}

// Chapter 4's experiment scaled down to run in about a second: sources of 5 to 10 symbols, 2000 of them, 100 tests per
// length, H = 32, 400 steps (lr / 10 for the last 30 %).
LengthExperiment scaled_down(std::uint64_t seed) {
  LengthExperiment experiment = sequences::bottleneck_experiment(true);
  experiment.task.max_length = 10;
  experiment.train_examples = 2000;
  experiment.test_lengths = {5, 6, 7, 8, 9, 10};
  experiment.test_per_length = 100;
  experiment.hidden_size = 32;
  experiment.training.steps = 400;
  experiment.training.lr_drop_after = 280;
  experiment.seed = experiment.training.seed = seed + 1;
  return experiment;
}

struct Run {
  std::vector<Example> test;
  std::vector<std::vector<std::int64_t>> outputs;
  std::vector<sequences::LengthScore> scores;
};

// Chapter 4's train_and_measure: train, decode the test sources greedily, exact match by length (4.1).
Run run(const LengthExperiment& experiment) {
  Seq2seq<float> model(sequences::model_config(experiment, "vanilla"));
  sequences::train(model, sequences::training_set(experiment), experiment.training);
  Run r;
  r.test = sequences::test_set(experiment);
  r.outputs = sequences::predict(model, r.test);
  r.scores = sequences::score_by_length(r.test, r.outputs);
  return r;
}

std::string percentages(const std::vector<double>& shares) {
  std::string s;
  for (const double share : shares) s += (s.empty() ? "" : " ") + std::to_string(std::lround(100 * share));
  return s + " %";
}

void check_table(exercise::Check& check) {
  // Three sources of 4 symbols (a = 4, b = 5, …) and one of 2; outputs right, too short, too long, anything.
  const std::vector<Example> examples{
      {{4, 5, 6, 7}, {4, 5, 6, 7}}, {{4, 4, 4, 4}, {4, 4, 4, 4}}, {{7, 6, 5, 4}, {7, 6, 5, 4}}, {{5, 6}, {5, 6}}};
  const std::vector<std::vector<std::int64_t>> outputs{{4, 5, 6, 7}, {4, 4, 5}, {7, 6, 5, 4, 4, 4}, {5, 5, 5}};
  check.near("T_x = 4: abcd → abcd, aaaa → aab, dcba → dcbaaa: right at j = 1 … 4 = 3/3, 3/3, 2/3, 2/3",
             yours::right_by_position(examples, outputs, 4), {1.0, 1.0, 2.0 / 3, 2.0 / 3}, 1e-15);
  check.near("another case: T_x = 2, the one source of 2 symbols: bc → bbb: right at j = 1, 2 = 1, 0",
             yours::right_by_position(examples, outputs, 2), {1.0, 0.0}, 1e-15);
}

}  // namespace

int main() {
  exercise::Check check("4.1", "the bottleneck on reversed strings");
  check.run("the reversed experiment", [&] {
    check_reversed(check, "chapter 4's experiment", sequences::bottleneck_experiment(false));
    check_reversed(check, "another case: its --small version", sequences::bottleneck_experiment(true));
  });
  check.run("the table of positions", [&] { check_table(check); });
  double gain_at_5 = 0;  // the mean over the seeds of exact match at T_x = 5, reverse − copy
  for (const std::uint64_t seed : {0, 1, 2}) {
    const std::string name = "seed " + std::to_string(seed);
    check.run(name + ": copy against reverse", [&] {
      const LengthExperiment experiment = scaled_down(seed);
      const Run copy = run(experiment), reverse = run(yours::reversed(experiment));
      const std::vector<double> copy_table = yours::right_by_position(copy.test, copy.outputs, 10);
      const std::vector<double> reverse_table = yours::right_by_position(reverse.test, reverse.outputs, 10);
      if (seed == 0) {
        check.near("another case: copy, T_x = 10: your table = the reference's", copy_table,
                   reference::right_by_position(copy.test, copy.outputs, 10), 1e-15);
      }
      std::string em = "; exact match at T_x = 5 … 10: copy";
      for (const auto& score : copy.scores) em += " " + std::to_string(std::lround(100 * score.exact_match()));
      em += " %, reverse";
      for (const auto& score : reverse.scores) em += " " + std::to_string(std::lround(100 * score.exact_match()));
      check.that(reverse_table.at(0) > copy_table.at(0),
                 name + ": at T_x = 10, y_1 is right more often under reverse (1 encoder step from c, not 10)",
                 "right at j = 1 … 10: copy " + percentages(copy_table) + ", reverse " + percentages(reverse_table) +
                     em + " %");
      gain_at_5 += (reverse.scores.at(0).exact_match() - copy.scores.at(0).exact_match()) / 3;
    });
  }
  check.run("over the three seeds", [&] {
    check.that(gain_at_5 > 0, "over the three seeds, exact match at T_x = 5 is higher under reverse",
               "reverse − copy = " + exercise::number(100 * gain_at_5) + " points");
  });
  return check.verdict();
}
