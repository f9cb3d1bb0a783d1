// The check of exercise 10.1 (exercises/10/1.hpp): the bidirectional configuration against the one it was made from;
// c = [h→_Tx; h←_1] (or h_Tx) against the vanilla decoder's own SourceMemory::context, on one source and on padded
// batches; the first-symbol accuracy against the reference solution and against the decoder's first step alone; and the
// claim, over three seeds of a scaled-down training, that c = [h→_Tx; h←_1] gets y_1 = x_1 right more often than
// c = h_Tx.
#include "exercises/10/1.hpp"

#include <algorithm>
#define yours reference
#include "exercises/10/1.hpp"
#undef yours
#include "exercises/10/small_experiment.hpp"
#include "exercises/check.hpp"

using namespace attend;
using namespace attend::models;

namespace {

constexpr std::size_t kSteps = 400;  // of chapter 10's experiment scaled down (exercises/10/small_experiment.hpp)

std::vector<sequences::Example> sources(std::size_t count, std::size_t shortest, std::size_t longest,
                                        std::uint64_t seed) {
  sequences::TaskConfig task;
  task.min_length = shortest;
  task.max_length = longest;
  Rng rng(seed);
  return sequences::generate(task, count, rng);
}

std::vector<double> flat(const Tensor<double>& t) { return std::vector<double>(t.data(), t.data() + t.size()); }

void check_config(exercise::Check& check) {
  Seq2seqConfig config = sequences::model_config(exercise::small_experiment(kSteps, 1), "vanilla");
  Seq2seqConfig luong = config;
  luong.set_decoder("luong-general");
  luong.cell = nn::CellKind::lstm;
  for (const auto& [name, base] : {std::pair<std::string, Seq2seqConfig>{"the vanilla model's configuration", config},
                                   {"another case: an LSTM Luong-general configuration", luong}}) {
    check.run(name, [&, name = name, base = base] {
      Seq2seqConfig expected = base;
      expected.bidirectional = true;
      const Seq2seqConfig got = yours::bidirectional(base);
      Seq2seqConfig rest = got;
      rest.bidirectional = true;
      check.that(got.to_json() == expected.to_json(), name + ": bidirectional = true, every other field as it was",
                 std::string("yours: bidirectional = ") + (got.bidirectional ? "true" : "false") +
                     ", the other fields " +
                     (rest.to_json() == expected.to_json() ? "as they were" : "changed: " + got.to_json().dump()));
    });
  }
}

// c from your fixed_context against the vanilla decoder's, for the sources given.
void check_context(exercise::Check& check, const std::string& name, const std::vector<sequences::Example>& examples,
                   bool both_ways) {
  check.run(name, [&] {
    Seq2seqConfig config = sequences::model_config(exercise::small_experiment(kSteps, 1), "vanilla");
    config.bidirectional = both_ways;
    config.seed = 5;
    Seq2seq<double> model(config);
    std::vector<std::size_t> all(examples.size());
    for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
    const Batch batch = sequences::batch_of(examples, all);
    Tape<double> tape;
    const Encoded<double> encoded = model.encode(tape, batch.source, batch.source_lengths);
    const Tensor<double> c =
        yours::fixed_context(encoded.memory.annotations.value(), batch.source_lengths, both_ways ? 2 : 1);
    check.near(name + (both_ways ? ": c = [h→_Tx; h←_1]" : ": c = h_Tx") + " = the vanilla decoder's context", flat(c),
               flat(encoded.memory.context.value()), 0.0);
  });
}

// The share of first symbols right by a second route: the decoder's first step alone, from encode(), then the
// output layer on its features.
double first_step_route(Seq2seq<double>& model, const std::vector<sequences::Example>& examples) {
  std::vector<std::size_t> all(examples.size());
  for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
  const Batch batch = sequences::batch_of(examples, all);
  Tape<double> tape;
  const Encoded<double> encoded = model.encode(tape, batch.source, batch.source_lengths);
  Ids sos(Shape{examples.size()});
  for (std::size_t b = 0; b < examples.size(); ++b) sos.data()[b] = sos_id;
  const Tensor<double>& logits =
      model.decoder->logits(model.decoder->step(sos, encoded.state, encoded.memory).output).value();  // (B, V)
  const std::size_t V = logits.shape()[1];
  std::size_t right = 0;
  for (std::size_t b = 0; b < examples.size(); ++b) {
    const double* row = logits.data() + b * V;
    right += std::max_element(row, row + V) - row == examples[b].target[0];
  }
  return static_cast<double>(right) / static_cast<double>(examples.size());
}

void check_accuracy(exercise::Check& check) {
  Seq2seqConfig config = sequences::model_config(exercise::small_experiment(kSteps, 1), "bahdanau");
  config.seed = 3;
  Seq2seq<double> trained(config);
  sequences::LengthExperiment experiment = exercise::small_experiment(kSteps, 3);
  experiment.training.steps = 100;
  sequences::train(trained, sequences::training_set(experiment), experiment.training);
  const std::vector<sequences::Example> mixed = sources(60, 1, 12, 77);
  check.run("another case: first_symbol_accuracy of a Bahdanau model", [&] {
    const double yours = yours::first_symbol_accuracy(trained, mixed);
    const std::string name = "another case: a Bahdanau model after 100 steps, 60 sources of 1 to 12 symbols: ";
    check.near(name + "your accuracy = the decoder's first step alone", yours, first_step_route(trained, mixed), 0.0);
    check.near(name + "your accuracy = the reference's", yours, reference::first_symbol_accuracy(trained, mixed), 0.0);
  });
}

// One seed of the experiment: the first-symbol accuracy of the vanilla model with c = h_Tx and with
// c = [h→_Tx; h←_1], measured by your function on 200 test sources.
void check_seed(exercise::Check& check, std::uint64_t seed) {
  const std::string name = "seed " + std::to_string(seed);
  check.run(name + ": the vanilla model, one direction and two", [&] {
    const sequences::LengthExperiment experiment = exercise::small_experiment(kSteps, seed);
    const std::vector<sequences::Example> train_set = sequences::training_set(experiment);
    const std::vector<sequences::Example> test_set = sources(200, 5, 10, 1000 + seed);
    double accuracy[2];
    for (const bool both : {false, true}) {
      Seq2seqConfig config = sequences::model_config(experiment, "vanilla");
      config.seed = seed;
      if (both) config = yours::bidirectional(config);
      Seq2seq<double> model(config);
      sequences::train(model, train_set, experiment.training);
      accuracy[both] = yours::first_symbol_accuracy(model, test_set);
    }
    check.that(accuracy[1] >= accuracy[0] + 0.15,
               name + ": y_1 = x_1 right with c = [h→_Tx; h←_1] at least 0.15 more often than with c = h_Tx",
               "one direction " + exercise::number(accuracy[0]) + ", two " + exercise::number(accuracy[1]));
  });
}

}  // namespace

int main() {
  exercise::Check check("10.1", "a bidirectional encoder: c = [h→_Tx; h←_1] holds both ends");
  check_config(check);
  check_context(check, "one source of 12 symbols, two directions", sources(1, 12, 12, 5), true);
  check_context(check, "another case: a padded batch of 3, 9, 1 and 12 symbols, two directions",
                {sources(1, 3, 3, 6)[0], sources(1, 9, 9, 7)[0], sources(1, 1, 1, 8)[0], sources(1, 12, 12, 9)[0]},
                true);
  check_context(check, "another case: a padded batch of 2 to 11 symbols, one direction", sources(6, 2, 11, 10), false);
  check_accuracy(check);
  for (const std::uint64_t seed : {1, 2, 3}) check_seed(check, seed);
  return check.verdict();
}
