// The copy/reverse toy task (models/sequences.hpp): lengths and symbols in range, copy and reverse targets, the same
// examples from the same seed, padded batches, spelling, exact match per length, the float → double copy of a model,
// and the shared training loop (models/train.hpp): it must learn a tiny copy task and repeat itself exactly, stop at
// its limits, report every step and pass, and drop the learning rate after exactly the steps it is told.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <limits>
#include <set>

#include "models/search.hpp"
#include "models/sequences.hpp"
#include "models/train.hpp"
#include "tests/autograd/helpers.hpp"

using namespace attend;
using namespace attend::models;
using attend::testing::message_has;
namespace seq = attend::models::sequences;
using Tokens = std::vector<std::int64_t>;

namespace {

seq::TaskConfig task_of(seq::Task task, std::size_t symbols, std::size_t min_length, std::size_t max_length) {
  seq::TaskConfig config;
  config.task = task;
  config.symbols = symbols;
  config.min_length = min_length;
  config.max_length = max_length;
  return config;
}

Seq2seqConfig tiny_model(const seq::TaskConfig& task, std::size_t hidden_size) {
  Seq2seqConfig config;
  config.source_vocab_size = config.target_vocab_size = seq::vocab_size(task);
  config.set_decoder("vanilla");
  config.embedding_dim = 8;
  config.hidden_size = hidden_size;
  config.max_target_length = task.max_length + 2;
  config.seed = 3;
  return config;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sequences)

BOOST_AUTO_TEST_CASE(lengths_and_symbols_stay_in_range_and_every_length_occurs) {
  const auto config = task_of(seq::Task::copy, 5, 3, 7);
  Rng rng(1);
  const auto examples = seq::generate(config, 500, rng);
  BOOST_TEST(examples.size() == 500u);
  BOOST_TEST(seq::vocab_size(config) == 9u);
  std::set<std::size_t> lengths;
  std::set<std::int64_t> symbols;
  for (const auto& example : examples) {
    BOOST_TEST(example.source.size() >= 3u);
    BOOST_TEST(example.source.size() <= 7u);
    lengths.insert(example.source.size());
    for (const std::int64_t id : example.source) {
      BOOST_TEST(id >= seq::first_symbol);
      BOOST_TEST(id < seq::first_symbol + 5);
      symbols.insert(id);
    }
  }
  BOOST_TEST(lengths.size() == 5u);  // 3, 4, 5, 6 and 7 all drawn
  BOOST_TEST(symbols.size() == 5u);
}

BOOST_AUTO_TEST_CASE(copy_and_reverse_targets) {
  Rng copy_rng(2), reverse_rng(2);
  const auto copies = seq::generate(task_of(seq::Task::copy, 10, 1, 9), 50, copy_rng);
  const auto reversals = seq::generate(task_of(seq::Task::reverse, 10, 1, 9), 50, reverse_rng);
  bool some_differ = false;
  for (std::size_t k = 0; k < 50; ++k) {
    BOOST_TEST(copies[k].target == copies[k].source, boost::test_tools::per_element());
    // the same seed draws the same sources for both tasks; only the targets differ
    BOOST_TEST(reversals[k].source == copies[k].source, boost::test_tools::per_element());
    const Tokens reversed(copies[k].source.rbegin(), copies[k].source.rend());
    BOOST_TEST(reversals[k].target == reversed, boost::test_tools::per_element());
    some_differ = some_differ || reversals[k].target != reversals[k].source;
  }
  BOOST_TEST(some_differ);
  BOOST_TEST(seq::to_string(seq::Task::copy) == "copy");
  BOOST_TEST(seq::to_string(seq::Task::reverse) == "reverse");
}

BOOST_AUTO_TEST_CASE(same_seed_same_examples_other_seed_others) {
  const auto config = task_of(seq::Task::copy, 10, 5, 20);
  Rng a(7), b(7), c(8);
  const auto first = seq::generate(config, 20, a);
  const auto second = seq::generate(config, 20, b);
  const auto third = seq::generate(config, 20, c);
  bool all_equal = true, any_differs = false;
  for (std::size_t k = 0; k < 20; ++k) {
    all_equal = all_equal && first[k].source == second[k].source && first[k].target == second[k].target;
    any_differs = any_differs || first[k].source != third[k].source;
  }
  BOOST_TEST(all_equal);
  BOOST_TEST(any_differs);
}

BOOST_AUTO_TEST_CASE(bad_configurations_are_named) {
  Rng rng(0);
  BOOST_CHECK_EXCEPTION(seq::generate(task_of(seq::Task::copy, 0, 1, 5), 1, rng), std::invalid_argument,
                        message_has({"0 symbols", "1..26"}));
  BOOST_CHECK_EXCEPTION(seq::generate(task_of(seq::Task::copy, 27, 1, 5), 1, rng), std::invalid_argument,
                        message_has({"27 symbols"}));
  BOOST_CHECK_EXCEPTION(seq::generate(task_of(seq::Task::copy, 5, 0, 5), 1, rng), std::invalid_argument,
                        message_has({"lengths 0..5"}));
  BOOST_CHECK_EXCEPTION(seq::generate(task_of(seq::Task::copy, 5, 6, 5), 1, rng), std::invalid_argument,
                        message_has({"lengths 6..5"}));
}

BOOST_AUTO_TEST_CASE(batches_are_padded_with_start_and_end_tokens) {
  const std::vector<seq::Example> examples{{{4, 5, 6}, {6, 5, 4}}, {{7}, {7}}, {{8, 9}, {8, 9}}};
  const Batch batch = seq::batch_of(examples, {2, 0});
  BOOST_TEST(batch.size() == 2u);
  BOOST_TEST((batch.source.shape() == Shape{2, 3}));
  BOOST_TEST(batch.source_lengths == Tokens({2, 3}), boost::test_tools::per_element());
  const Tokens source(batch.source.data(), batch.source.data() + 6);
  BOOST_TEST(source == Tokens({8, 9, 0, 4, 5, 6}), boost::test_tools::per_element());
  // target_in = <sos> y, target_out = y <eos>, padded to the longest target + 1
  const Tokens target_in(batch.target_in.data(), batch.target_in.data() + 8);
  const Tokens target_out(batch.target_out.data(), batch.target_out.data() + 8);
  BOOST_TEST(target_in == Tokens({1, 8, 9, 0, 1, 6, 5, 4}), boost::test_tools::per_element());
  BOOST_TEST(target_out == Tokens({8, 9, 2, 0, 6, 5, 4, 2}), boost::test_tools::per_element());
  BOOST_CHECK_THROW(seq::batch_of(examples, {3}), std::out_of_range);
}

BOOST_AUTO_TEST_CASE(spelling) {
  BOOST_TEST(seq::spell({4, 5, 29}) == "abz");
  BOOST_TEST(seq::spell({1, 4, 2, 0, 3, 30}) == "^a$_??");
  BOOST_TEST(seq::spell({}).empty());
}

BOOST_AUTO_TEST_CASE(exact_match_per_length) {
  const std::vector<seq::Example> examples{
      {{4, 5}, {4, 5}}, {{6, 7}, {6, 7}}, {{4, 4, 4}, {4, 4, 4}}, {{5}, {5}}, {{6, 6, 6}, {6, 6, 6}}};
  const std::vector<Tokens> outputs{{4, 5}, {6, 8}, {4, 4, 4}, {5}, {6, 6}};  // 2nd wrong token, 5th too short
  const auto scores = seq::score_by_length(examples, outputs);
  BOOST_TEST_REQUIRE(scores.size() == 3u);
  BOOST_TEST(scores[0].length == 1u);
  BOOST_TEST(scores[0].count == 1u);
  BOOST_TEST(scores[0].exact == 1u);
  BOOST_TEST(scores[1].length == 2u);
  BOOST_TEST(scores[1].count == 2u);
  BOOST_TEST(scores[1].exact == 1u);
  BOOST_TEST(scores[1].exact_match() == 0.5);
  BOOST_TEST(scores[2].length == 3u);
  BOOST_TEST(scores[2].exact == 1u);
  BOOST_TEST(seq::LengthScore{}.exact_match() == 0.0);
  BOOST_CHECK_EXCEPTION(seq::score_by_length(examples, {{4, 5}}), std::invalid_argument,
                        message_has({"5 examples but 1 outputs"}));
}

BOOST_AUTO_TEST_CASE(the_length_experiment_sets) {
  for (const bool small : {true, false}) {
    const seq::LengthExperiment experiment = seq::bottleneck_experiment(small);
    const auto train = seq::training_set(experiment);
    BOOST_TEST(train.size() == experiment.train_examples);
    const auto test = seq::test_set(experiment);
    BOOST_TEST_REQUIRE(test.size() == experiment.test_lengths.size() * experiment.test_per_length);
    for (std::size_t k = 0; k < test.size(); ++k) {
      BOOST_TEST(test[k].source.size() == experiment.test_lengths[k / experiment.test_per_length]);
      BOOST_TEST(test[k].target == test[k].source, boost::test_tools::per_element());  // the copy task
    }
    // every test length lies inside the training distribution
    BOOST_TEST(experiment.test_lengths.front() >= experiment.task.min_length);
    BOOST_TEST(experiment.test_lengths.back() <= experiment.task.max_length);
    // the same sets every time
    BOOST_TEST(seq::training_set(experiment)[7].source == train[7].source, boost::test_tools::per_element());
    BOOST_TEST(seq::test_set(experiment).back().source == test.back().source, boost::test_tools::per_element());
    const Seq2seqConfig vanilla = seq::model_config(experiment, "vanilla");
    const Seq2seqConfig bahdanau = seq::model_config(experiment, "bahdanau");
    BOOST_TEST(vanilla.decoder_name() == "vanilla");
    BOOST_TEST(bahdanau.decoder_name() == "bahdanau");
    BOOST_TEST(vanilla.hidden_size == experiment.hidden_size);
    BOOST_TEST(bahdanau.embedding_dim == experiment.embedding_dim);
    BOOST_TEST(vanilla.source_vocab_size == seq::vocab_size(experiment.task));
    BOOST_TEST(vanilla.max_target_length > experiment.task.max_length);
  }
  BOOST_TEST(seq::bottleneck_experiment(true).training.steps < seq::bottleneck_experiment(false).training.steps);
}

BOOST_AUTO_TEST_CASE(copy_parameters_converts_every_weight_and_names_a_mismatch) {
  const auto task = task_of(seq::Task::copy, 4, 1, 4);
  Seq2seq<float> from(tiny_model(task, 6));
  Seq2seqConfig other = tiny_model(task, 6);
  other.seed = 99;  // different initial weights, same shapes
  Seq2seq<double> to(other);
  seq::copy_parameters(from, to);
  const auto source = from.parameters();
  const auto destination = to.parameters();
  BOOST_TEST_REQUIRE(source.size() == destination.size());
  for (std::size_t p = 0; p < source.size(); ++p) {
    for (std::size_t k = 0; k < source[p].second->value.size(); ++k) {
      BOOST_TEST(destination[p].second->value.data()[k] == static_cast<double>(source[p].second->value.data()[k]));
    }
  }
  Seq2seq<double> wider(tiny_model(task, 7));
  BOOST_CHECK_EXCEPTION(seq::copy_parameters(from, wider), std::invalid_argument,
                        message_has({"encoder.rnn.layers.0.forward.W_ih (18,8) into", "(21,8)"}));
  Seq2seqConfig attention = tiny_model(task, 6);
  attention.set_decoder("bahdanau");
  Seq2seq<double> more(attention);
  BOOST_CHECK_EXCEPTION(seq::copy_parameters(from, more), std::invalid_argument, message_has({"parameters into"}));
}

BOOST_AUTO_TEST_CASE(training_learns_a_tiny_copy_task_and_repeats_itself) {
  const auto task = task_of(seq::Task::copy, 3, 1, 3);
  Rng rng(5);
  const auto examples = seq::generate(task, 64, rng);
  TrainOptions options;
  options.steps = 300;
  options.batch_size = 16;
  options.lr = 1e-2;
  options.seed = 0;
  Seq2seq<float> model(tiny_model(task, 16));
  const std::vector<double> losses = seq::train(model, examples, options);
  BOOST_TEST_REQUIRE(losses.size() == 300u);
  BOOST_TEST(!model.training());  // left in evaluation mode
  BOOST_TEST(losses.back() < 0.2 * losses.front());
  const auto outputs = seq::predict(model, examples, 10);
  BOOST_TEST_REQUIRE(outputs.size() == examples.size());
  std::size_t exact = 0;
  for (const auto& score : seq::score_by_length(examples, outputs)) exact += score.exact;
  BOOST_TEST(exact >= 60u);  // of 64
  // predict() is greedy_decode batch by batch
  const Batch first = seq::batch_of(examples, {0, 1, 2});
  const auto greedy = greedy_decode(model, first.source, first.source_lengths);
  for (std::size_t k = 0; k < 3; ++k) BOOST_TEST(outputs[k] == greedy[k].tokens, boost::test_tools::per_element());
  // the same model, data and options give the same losses, bit for bit
  Seq2seq<float> again(tiny_model(task, 16));
  const std::vector<double> repeated = seq::train(again, examples, options);
  BOOST_TEST(repeated == losses, boost::test_tools::per_element());
  BOOST_CHECK_EXCEPTION(seq::train(again, {}, options), std::invalid_argument, message_has({"no examples"}));
  BOOST_CHECK_EXCEPTION(seq::predict(again, examples, 0), std::invalid_argument, message_has({"batch size 0"}));
}

// A step whose loss is not finite updates nothing and stops training with an error naming the step: a NaN in the
// output layer's bias gives a NaN loss at the first step; every weight (and the bias's NaN) is as it was, and no step
// was reported.
BOOST_AUTO_TEST_CASE(the_shared_loop_stops_on_a_diverged_step_without_updating) {
  const auto task = task_of(seq::Task::reverse, 4, 1, 5);
  Rng rng(9);
  std::vector<Tokens> sources, targets;
  for (const auto& example : seq::generate(task, 20, rng)) {
    sources.push_back(example.source);
    targets.push_back(example.target);
  }
  Seq2seq<float> model(tiny_model(task, 8));
  model.decoder->output.b.value.data()[3] = std::numeric_limits<float>::quiet_NaN();
  std::vector<Tensor<float>> before;
  for (const auto& [name, p] : model.parameters()) before.push_back(p->value);
  TrainOptions options;
  options.batch_size = 8;
  options.epochs = 1;
  std::size_t reported = 0;
  options.on_step = [&reported](const TrainStep&) { ++reported; };
  BOOST_CHECK_EXCEPTION(train(model, sources, targets, options), std::runtime_error,
                        message_has({"models::train: training diverged at step 1", "nothing was updated"}));
  BOOST_TEST(reported == 0u);
  std::size_t k = 0, same = 0;
  for (const auto& [name, p] : model.parameters()) {
    const Tensor<float>& old = before[k++];
    same += std::memcmp(old.data(), p->value.data(), old.size() * sizeof(float)) == 0;
  }
  BOOST_TEST(same == before.size());
}

// models::train's limits and reports: 40 pairs in batches of 16 are 3 batches a pass (16, 16, 8).
BOOST_AUTO_TEST_CASE(the_shared_loop_stops_at_its_limits_and_reports_each_step_and_pass) {
  const auto task = task_of(seq::Task::reverse, 4, 1, 5);
  Rng rng(9);
  const auto examples = seq::generate(task, 40, rng);
  std::vector<Tokens> sources, targets;
  std::size_t all_tokens = 0;
  for (const auto& example : examples) {
    sources.push_back(example.source);
    targets.push_back(example.target);
    all_tokens += example.target.size() + 1;  // <eos> included
  }
  Seq2seq<float> model(tiny_model(task, 8)), cut(tiny_model(task, 8));
  Seq2seq<float>* training = &model;  // the model the callbacks watch
  TrainOptions options;
  options.batch_size = 16;
  options.epochs = 2;
  std::vector<TrainStep> steps;
  std::vector<std::pair<std::size_t, std::size_t>> passes;  // (epoch, steps so far)
  options.on_step = [&](const TrainStep& done) {
    BOOST_TEST(training->training());
    steps.push_back(done);
  };
  options.on_epoch = [&](std::size_t epoch, std::size_t so_far) {
    BOOST_TEST(!training->training());  // measured in evaluation mode
    passes.emplace_back(epoch, so_far);
  };
  const std::vector<double> losses = train(model, sources, targets, options);
  BOOST_TEST_REQUIRE(losses.size() == 6u);
  BOOST_TEST_REQUIRE(steps.size() == 6u);
  std::size_t first_pass_tokens = 0;
  for (std::size_t k = 0; k < 6; ++k) {
    BOOST_TEST(steps[k].step == k + 1);
    BOOST_TEST(steps[k].epoch == k / 3 + 1);
    BOOST_TEST(steps[k].loss == losses[k]);
    if (k < 3) first_pass_tokens += steps[k].tokens;
  }
  BOOST_TEST(first_pass_tokens == all_tokens);  // a pass trains on every pair once
  const std::vector<std::pair<std::size_t, std::size_t>> expected_passes{{1, 3}, {2, 6}};
  BOOST_TEST((passes == expected_passes));
  BOOST_TEST(!model.training());

  // a step limit cuts the second pass short; its end is still reported
  training = &cut;
  options.steps = 4;
  options.epochs = 0;
  passes.clear();
  steps.clear();
  const std::vector<double> cut_losses = train(cut, sources, targets, options);
  BOOST_TEST(cut_losses.size() == 4u);
  const std::vector<std::pair<std::size_t, std::size_t>> cut_passes{{1, 3}, {2, 4}};
  BOOST_TEST((passes == cut_passes));
  // the same model, pairs and options: the same first steps as the longer run, bit for bit
  for (std::size_t k = 0; k < 4; ++k) BOOST_TEST(cut_losses[k] == losses[k]);

  options.on_step = nullptr;
  options.on_epoch = nullptr;
  BOOST_CHECK_EXCEPTION(train(cut, {}, {}, options), std::invalid_argument, message_has({"models::train", "no"}));
  BOOST_CHECK_EXCEPTION(train(cut, sources, {targets[0]}, options), std::invalid_argument,
                        message_has({"40 sources but 1 targets"}));
  options.batch_size = 0;
  BOOST_CHECK_EXCEPTION(train(cut, sources, targets, options), std::invalid_argument, message_has({"batch size 0"}));
  options.batch_size = 16;
  options.steps = 0;
  BOOST_CHECK_EXCEPTION(train(cut, sources, targets, options), std::invalid_argument, message_has({"no limit"}));
}

// lr_drop_after = k: steps 1..k run at lr, the rest at lr / 10 — so the losses agree with an undropped run up to and
// including step k + 1 (the first step at lr / 10 changes the weights only after its loss) and differ from step k + 2.
BOOST_AUTO_TEST_CASE(the_shared_loop_drops_the_rate_after_exactly_lr_drop_after_steps) {
  const auto task = task_of(seq::Task::copy, 4, 2, 4);
  Rng rng(4);
  const auto examples = seq::generate(task, 48, rng);
  TrainOptions options;
  options.steps = 8;
  options.batch_size = 16;
  options.lr = 1e-2;
  Seq2seq<float> steady(tiny_model(task, 8)), dropped(tiny_model(task, 8)), again(tiny_model(task, 8));
  const std::vector<double> plain = seq::train(steady, examples, options);
  options.lr_drop_after = 5;
  const std::vector<double> drop = seq::train(dropped, examples, options);
  BOOST_TEST_REQUIRE(drop.size() == 8u);
  for (std::size_t k = 0; k < 6; ++k) BOOST_TEST(drop[k] == plain[k]);  // steps 1..6
  BOOST_TEST(drop[6] != plain[6]);  // step 7 reads weights step 6 updated at lr / 10
  BOOST_TEST(seq::train(again, examples, options) == drop, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
