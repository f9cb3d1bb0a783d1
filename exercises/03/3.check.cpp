// The check of exercise 3.3 (exercises/03/3.hpp): log p(y | x) against −N·L from the model's loss, the beam against
// models::decode, and the verdicts against log-probabilities the library gives, on vanilla models trained here on the
// chapter's copy task (scaled down: H = 32, 400 steps); then, over three trainings, the greedy errors of each kind and
// what a beam of width 5 does about them.
#include "exercises/03/3.hpp"

#include <cmath>
#include <memory>
#include <string>
#define yours reference
#include "exercises/03/3.hpp"
#undef yours
#include "exercises/03/copy_task.hpp"
#include "exercises/check.hpp"
#include "models/sequences.hpp"

using namespace attend;
using namespace attend::models;

namespace {

// A vanilla encoder-decoder trained on chapter 3's copy task (3 to 10 letters of a..j), scaled down to run in a second:
// H = 32 and 400 steps instead of 64 and 700. Trained in float, its weights copied into a double model.
struct Trained {
  std::unique_ptr<Seq2seq<double>> model;
  std::vector<sequences::Example> test;
};

Trained train(std::uint64_t seed) {
  const sequences::TaskConfig task = exercise::small_task();
  Rng data(100 + seed);
  const std::vector<sequences::Example> train_set = sequences::generate(task, 2000, data);
  Trained trained{nullptr, sequences::generate(task, 200, data)};
  const Seq2seqConfig config = exercise::small_vanilla_config(seed);
  Seq2seq<float> model(config);
  exercise::train_small(model, train_set, seed);
  trained.model = std::make_unique<Seq2seq<double>>(config);
  sequences::copy_parameters(model, *trained.model);
  trained.model->eval();
  return trained;
}

// −N·L: the library's training loss of one example, times its N = T_y + 1 terms.
double minus_N_L(Seq2seq<double>& model, const std::vector<std::int64_t>& source,
                 const std::vector<std::int64_t>& target) {
  Tape<double> tape;
  return -static_cast<double>(target.size() + 1) * model.loss(tape, make_batch({source}, {target})).value().item();
}

// The verdict from the library's numbers: greedy_decode's output and log p, the loss of the target. Empty for a tie
// closer than rounding can decide.
std::string truth(Seq2seq<double>& model, const sequences::Example& example) {
  const Batch one = make_batch({example.source});
  const Hypothesis greedy = greedy_decode(model, one.source, one.source_lengths)[0];
  if (greedy.tokens == example.target) return "none";
  const double target = minus_N_L(model, example.source, example.target);
  if (std::abs(target - greedy.log_prob) < 1e-9) return "";
  return target > greedy.log_prob ? "search" : "model";
}

void check_log_p(exercise::Check& check, const std::string& name, Seq2seq<double>& model,
                 const std::vector<std::int64_t>& source, const std::vector<std::int64_t>& target) {
  check.near(name + ": (3.1) your log p(y | x) = −N·L of the training loss", yours::log_p(model, source, target),
             minus_N_L(model, source, target), 1e-10);
}

void check_beam(exercise::Check& check, Seq2seq<double>& model, const std::vector<sequences::Example>& test) {
  std::size_t differ = 0, differ_greedy = 0;
  for (std::size_t k = 0; k < 60; ++k) {
    const Batch one = make_batch({test[k].source});
    SearchOptions options;
    options.beam_width = 5;
    options.length_penalty = 0;
    differ += yours::beam(model, test[k].source, 5) != decode(model, one.source, one.source_lengths, options)[0].tokens;
    differ_greedy +=
        yours::beam(model, test[k].source, 1) != greedy_decode(model, one.source, one.source_lengths)[0].tokens;
  }
  check.that(differ == 0, "your beam of width 5 = models::decode's (length penalty 0), 60 test sources",
             std::to_string(differ) + " outputs differ");
  check.that(differ_greedy == 0, "another case: your beam of width 1 = greedy_decode's output, 60 test sources",
             std::to_string(differ_greedy) + " outputs differ");
}

void check_verdicts(exercise::Check& check, Seq2seq<double>& model, const std::vector<sequences::Example>& test) {
  std::size_t differ = 0, decided = 0;
  std::string first;
  for (const sequences::Example& example : test) {
    const std::string expected = truth(model, example);
    if (expected.empty()) continue;
    ++decided;
    const std::string yours = yours::to_blame(model, example.source, example.target);
    if (yours != expected && differ++ == 0) {
      first =
          "; first: " + sequences::spell(example.source) + ", yours \"" + yours + "\", expected \"" + expected + "\"";
    }
  }
  check.that(differ == 0, "your verdicts = the library's log-probabilities' (none / search / model), 200 test examples",
             std::to_string(differ) + " of " + std::to_string(decided) + " differ" + first);
}

// One training: the greedy errors of each kind (by your to_blame), and how many of each your beam of 5 recovers.
void count_errors(exercise::Check& check, std::uint64_t seed) {
  const std::string name = "training " + std::to_string(seed);
  Trained trained = train(seed);
  std::size_t search = 0, model = 0, search_recovered = 0, model_recovered = 0;
  for (const sequences::Example& example : trained.test) {
    const std::string verdict = yours::to_blame(*trained.model, example.source, example.target);
    if (verdict == "none") continue;
    const bool recovered = yours::beam(*trained.model, example.source, 5) == example.target;
    (verdict == "search" ? search : model) += 1;
    (verdict == "search" ? search_recovered : model_recovered) += recovered;
  }
  const std::string counts = std::to_string(search) + " search errors (a beam of 5 recovers " +
                             std::to_string(search_recovered) + "), " + std::to_string(model) +
                             " model errors (it recovers " + std::to_string(model_recovered) + ")";
  check.that(model > search, name + ": most greedy errors are the model's, not the search's", counts);
  const double search_share = search ? static_cast<double>(search_recovered) / static_cast<double>(search) : 0;
  const double model_share = model ? static_cast<double>(model_recovered) / static_cast<double>(model) : 0;
  check.that(search_recovered >= 1 && model_share < search_share,
             name + ": a beam recovers search errors, and a smaller share of the model's errors",
             "recovered " + exercise::number(100 * search_share) + " % of the search errors, " +
                 exercise::number(100 * model_share) + " % of the model errors");
}

}  // namespace

int main() {
  exercise::Check check("3.3", "a beam, and who is to blame: the search or the model");
  Trained trained = train(0);
  Seq2seq<double>& model = *trained.model;
  check.run("log p(y | x), the copy targets", [&] {
    for (std::size_t k = 0; k < 5; ++k) {
      check_log_p(check,
                  "test example " + std::to_string(k + 1) + " (" + sequences::spell(trained.test[k].source) + ")",
                  model, trained.test[k].source, trained.test[k].target);
    }
  });
  check.run("another case: log p(y | x) of a target unlike the source", [&] {
    std::vector<std::int64_t> other(trained.test[0].source.rbegin(), trained.test[0].source.rend());
    other.push_back(sequences::first_symbol);
    other.push_back(sequences::first_symbol + 9);
    check_log_p(check, "another case: the source reversed, then \"aj\"", model, trained.test[0].source, other);
  });
  check.run("another case: log p(y | x) under an untrained model", [&] {
    Seq2seq<double> untrained(model.config());
    check_log_p(check, "another case: an untrained model, a one-letter target", untrained, {4, 5, 6}, {7});
  });
  check.run("the beam", [&] { check_beam(check, model, trained.test); });
  check.run("the verdicts", [&] { check_verdicts(check, model, trained.test); });
  for (const std::uint64_t seed : {0, 1, 2}) {
    check.run("training " + std::to_string(seed) + ": the errors", [&] { count_errors(check, seed); });
  }
  check.run("the reference solution", [&] {
    check.near("log p(y | x) of test example 1 = the reference's",
               yours::log_p(model, trained.test[0].source, trained.test[0].target),
               reference::log_p(model, trained.test[0].source, trained.test[0].target), 1e-12);
  });
  return check.verdict();
}
