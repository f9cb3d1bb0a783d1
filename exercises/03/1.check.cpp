// The check of exercise 3.1 (exercises/03/1.hpp): the step count against the states of the library's encoder that
// change when one source token changes; the per-position accuracy against the reference solution and against a model
// whose <pad> and <sos> logits are made the largest; then vanilla models trained on copy and on reverse (scaled down,
// three seeds each): where does reversing help?
#include "exercises/03/1.hpp"

#include <cmath>
#include <memory>
#include <string>
#define yours reference
#include "exercises/03/1.hpp"
#undef yours
#include "exercises/03/copy_task.hpp"
#include "exercises/check.hpp"

using namespace attend;
using namespace attend::models;

namespace {

using sequences::Task;

// How many of the encoder's states h_1 … h_Tx change when the token at position i (1-based) changes: measured.
std::size_t states_that_change(nn::Encoder<double>& encoder, std::vector<std::int64_t> source, std::size_t i) {
  Tape<double> tape;
  const std::size_t T_x = source.size();
  const Tensor<double> before =
      encoder(tape, Ids(Shape{1, T_x}, source), {static_cast<std::int64_t>(T_x)}).outputs.value();
  source[i - 1] = sequences::first_symbol + (source[i - 1] - sequences::first_symbol + 1) % 10;
  const Tensor<double> after =
      encoder(tape, Ids(Shape{1, T_x}, source), {static_cast<std::int64_t>(T_x)}).outputs.value();
  const std::size_t H = before.shape()[2];
  std::size_t changed = 0;
  for (std::size_t t = 0; t < T_x; ++t) {
    bool differs = false;
    for (std::size_t k = 0; k < H; ++k) differs = differs || before.at({0, t, k}) != after.at({0, t, k});
    changed += differs;
  }
  return changed;
}

void check_steps(exercise::Check& check, const std::string& name, std::size_t T_x) {
  nn::EncoderConfig config;
  config.vocab_size = 14;
  config.embedding_dim = 16;
  config.rnn.hidden_size = 32;
  Rng weights(3), data(4);
  nn::Encoder<double> encoder(config, weights);
  std::vector<std::int64_t> source;
  for (std::size_t i = 0; i < T_x; ++i)
    source.push_back(sequences::first_symbol + static_cast<std::int64_t>(data.below(10)));
  std::size_t wrong = 0;
  std::string first;
  for (const Task task : {Task::copy, Task::reverse}) {
    for (std::size_t j = 1; j <= T_x; ++j) {
      const std::size_t i = task == Task::copy ? j : T_x + 1 - j;
      const std::size_t measured = states_that_change(encoder, source, i),
                        predicted = yours::encoder_steps(task, T_x, j);
      if (measured != predicted && wrong++ == 0) {
        first = "; first: " + sequences::to_string(task) + ", j = " + std::to_string(j) + ": yours " +
                std::to_string(predicted) + ", measured " + std::to_string(measured);
      }
    }
  }
  check.that(wrong == 0, name + ": your encoder steps = the states that change when x_i changes, both tasks, every j",
             std::to_string(wrong) + " of " + std::to_string(2 * T_x) + " differ" + first);
}

// The chapter's copy or reverse task, scaled down, trained: 2000 examples of 3 to 10 letters, H = 32, 400 steps.
struct Trained {
  std::unique_ptr<Seq2seq<float>> model;
  std::vector<sequences::Example> test;  // 200 sources of 10 letters
};

Trained train(Task kind, std::uint64_t seed) {
  sequences::TaskConfig task = exercise::small_task(kind);
  Rng data(100 + seed);
  const std::vector<sequences::Example> train_set = sequences::generate(task, 2000, data);
  task.min_length = 10;
  Trained trained{nullptr, sequences::generate(task, 200, data)};
  trained.model = std::make_unique<Seq2seq<float>>(exercise::small_vanilla_config(seed));
  exercise::train_small(*trained.model, train_set, seed);
  return trained;
}

std::string percentages(const std::vector<double>& shares) {
  std::string s;
  for (const double share : shares)
    s += (s.empty() ? "" : " ") + std::to_string(static_cast<int>(std::lround(100 * share)));
  return s + " %";
}

double mean_over_letters(const std::vector<double>& shares) {  // positions 1 … T_x, the end token left out
  double mean = 0;
  for (std::size_t j = 0; j + 1 < shares.size(); ++j) mean += shares[j] / static_cast<double>(shares.size() - 1);
  return mean;
}

void check_accuracy(exercise::Check& check, Trained& copy) {
  const std::vector<double> yours = yours::accuracy_by_position(*copy.model, copy.test);
  check.near("a copy model, 200 sources of 10: your accuracy at j = 1 … 11 = the reference's", yours,
             reference::accuracy_by_position(*copy.model, copy.test), 0.02);
  // The same model with <pad> and <sos> given the largest logit of every step: a decoder never outputs them.
  Seq2seq<float> masked(copy.model->config());
  sequences::copy_parameters(*copy.model, masked);
  masked.eval();
  masked.decoder->output.b.value.data()[pad_id] = 1000;
  masked.decoder->output.b.value.data()[sos_id] = 1000;
  check.near("another case: <pad> and <sos> given the largest logits: your accuracy is unchanged",
             yours::accuracy_by_position(masked, copy.test), yours, 0.0);
  // Sources of another length, from the same model.
  sequences::TaskConfig seven;
  seven.min_length = seven.max_length = 7;
  Rng data(77);
  const std::vector<sequences::Example> examples = sequences::generate(seven, 60, data);
  check.near("another case: 60 sources of 7: your accuracy at j = 1 … 8 = the reference's",
             yours::accuracy_by_position(*copy.model, examples), reference::accuracy_by_position(*copy.model, examples),
             0.02);
}

}  // namespace

int main() {
  exercise::Check check("3.1", "reversing the source");
  check.run("the encoder steps, T_x = 10", [&] { check_steps(check, "T_x = 10", 10); });
  check.run("another case: the encoder steps, T_x = 7", [&] { check_steps(check, "another case: T_x = 7", 7); });
  check.run("another case: the encoder steps, T_x = 1", [&] { check_steps(check, "another case: T_x = 1", 1); });
  std::vector<Trained> copies, reverses;
  for (const std::uint64_t seed : {0, 1, 2}) {
    copies.push_back(train(Task::copy, seed));
    reverses.push_back(train(Task::reverse, seed));
  }
  check.run("the accuracy by position", [&] { check_accuracy(check, copies[0]); });
  double gain = 0;  // the mean over the seeds of (reverse − copy), positions 1 … T_x
  for (std::size_t s = 0; s < 3; ++s) {
    check.run("seed " + std::to_string(s) + ": copy against reverse", [&] {
      const std::vector<double> copy = yours::accuracy_by_position(*copies[s].model, copies[s].test);
      const std::vector<double> reverse = yours::accuracy_by_position(*reverses[s].model, reverses[s].test);
      check.that(
          reverse.at(0) > copy.at(0),
          "seed " + std::to_string(s) + ": y_1 is right more often under reverse (1 encoder step from c, not 10)",
          "right at j = 1 … 11: copy " + percentages(copy) + ", reverse " + percentages(reverse));
      gain += (mean_over_letters(reverse) - mean_over_letters(copy)) / 3;
    });
  }
  check.run("over the three seeds", [&] {
    check.that(gain > 0, "over the three seeds, the mean accuracy over the 10 letters is higher under reverse",
               "reverse − copy = " + exercise::number(100 * gain) + " points");
  });
  return check.verdict();
}
