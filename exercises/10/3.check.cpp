// The check of exercise 10.3 (exercises/10/3.hpp): ‖∂h_Tx/∂x_1‖_F and ‖∂c_1/∂x_1‖_F against central differences of h_Tx
// and c_1 computed here from perturbed embeddings, and against the reference solution (one and two directions, one
// symbol, an LSTM); the predicted ratio for untrained models against three of them; and, over three seeds of a
// scaled-down training, the claims that the attention model's influence stays as T_x grows from 5 to 40 while the
// vanilla model's falls.
#include "exercises/10/3.hpp"

#include <cmath>
#define yours reference
#include "exercises/10/3.hpp"
#undef yours
#include "exercises/10/small_experiment.hpp"
#include "exercises/check.hpp"
#include "models/sequences.hpp"

using namespace attend;
using namespace attend::models;

namespace {

constexpr std::size_t kSteps = 300;  // of chapter 10's experiment scaled down (exercises/10/small_experiment.hpp)

Seq2seqConfig configured(const std::string& decoder, std::uint64_t seed) {
  Seq2seqConfig config = sequences::model_config(exercise::small_experiment(kSteps, seed), decoder);
  config.seed = seed;
  return config;
}

std::vector<std::int64_t> source_of(std::size_t length, std::uint64_t seed) {
  sequences::TaskConfig task;
  task.min_length = task.max_length = length;
  Rng rng(seed);
  return sequences::generate(task, 1, rng)[0].source;
}

// h_Tx (vanilla) or c_1 (attention) from given embeddings x (1, T_x, E), without a leaf: the second route.
std::vector<double> output_from(Seq2seq<double>& model, const Tensor<double>& x, bool attention) {
  Tape<double> tape;
  const std::vector<std::int64_t> length{static_cast<std::int64_t>(x.shape()[1])};
  const nn::RecurrentOutput<double> encoded = model.encoder.rnn.forward(tape.constant(x), length);
  if (!attention) {
    const Tensor<double>& h = encoded.h_final[0].value();
    return std::vector<double>(h.data(), h.data() + h.size());
  }
  const SourceMemory<double> memory = model.decoder->memory(encoded, length);
  const Tensor<double>& out =
      model.decoder->step(Ids(Shape{1}, {sos_id}), model.decoder->initial_state(encoded), memory).output.value();
  const std::size_t H = model.config().hidden_size, A = memory.annotations.shape()[2];
  return std::vector<double>(out.data() + H, out.data() + H + A);
}

// ‖∂y/∂x_1‖_F by central differences: each component e of x_1 moved by ±ε, y recomputed.
double by_differences(Seq2seq<double>& model, const std::vector<std::int64_t>& source, bool attention) {
  Tape<double> tape;
  const Tensor<double> x = model.encoder.embedding(tape, make_batch({source}).source).value();
  const double epsilon = 1e-6;
  double sum_of_squares = 0;
  for (std::size_t e = 0; e < x.shape()[2]; ++e) {
    Tensor<double> plus = x, minus = x;
    plus.at({0, 0, e}) += epsilon;
    minus.at({0, 0, e}) -= epsilon;
    const std::vector<double> up = output_from(model, plus, attention), down = output_from(model, minus, attention);
    for (std::size_t k = 0; k < up.size(); ++k) sum_of_squares += std::pow((up[k] - down[k]) / (2 * epsilon), 2);
  }
  return std::sqrt(sum_of_squares);
}

void check_influences(exercise::Check& check) {
  Seq2seqConfig both_ways = configured("bahdanau", 4), lstm = configured("vanilla", 5);
  both_ways.bidirectional = true;
  lstm.cell = nn::CellKind::lstm;
  const struct {
    std::string name;
    Seq2seqConfig config;
    std::size_t length;
  } cases[] = {{"a Bahdanau model, T_x = 12", configured("bahdanau", 2), 12},
               {"a vanilla model, T_x = 12", configured("vanilla", 2), 12},
               {"another case: a bidirectional Bahdanau model (A = 2H), T_x = 9", both_ways, 9},
               {"another case: a Bahdanau model, T_x = 1", configured("bahdanau", 3), 1},
               {"another case: a vanilla model with an LSTM, T_x = 7", lstm, 7}};
  for (const auto& c : cases) {
    check.run(c.name, [&] {
      Seq2seq<double> model(c.config);
      const std::vector<std::int64_t> source = source_of(c.length, c.length);
      const bool attention = c.config.decoder != DecoderKind::vanilla;
      const double yours =
          attention ? yours::context_influence(model, source) : yours::final_state_influence(model, source);
      const double expected =
          attention ? reference::context_influence(model, source) : reference::final_state_influence(model, source);
      const std::string what = attention ? "‖∂c_1/∂x_1‖_F" : "‖∂h_Tx/∂x_1‖_F";
      check.near(c.name + ": " + what + " = central differences", yours, by_differences(model, source, attention),
                 1e-7 * (1 + expected));
      check.near(c.name + ": " + what + " = the reference's", yours, expected, 1e-12 * (1 + expected));
    });
  }
}

// The mean influence over 20 sources of length T_x (drawn from `seed`).
double mean_influence(Seq2seq<double>& model, std::size_t T_x, std::uint64_t seed, bool attention) {
  double sum = 0;
  for (std::uint64_t k = 0; k < 20; ++k) {
    const std::vector<std::int64_t> source = source_of(T_x, seed * 100 + k);
    sum += attention ? yours::context_influence(model, source) : yours::final_state_influence(model, source);
  }
  return sum / 20;
}

void check_prediction(exercise::Check& check) {
  for (const auto& [short_length, long_length] : {std::pair<std::size_t, std::size_t>{5, 40}, {10, 20}}) {
    const std::string name = std::string(short_length == 5 ? "" : "another case: ") +
                             "T_x = " + std::to_string(short_length) + " → " + std::to_string(long_length);
    check.run(name + ": your prediction", [&, short_length = short_length, long_length = long_length] {
      const double predicted = yours::predicted_untrained_ratio(short_length, long_length);
      for (const std::uint64_t seed : {1, 2, 3}) {
        Seq2seq<double> model(configured("bahdanau", seed));
        const double measured =
            mean_influence(model, long_length, seed, true) / mean_influence(model, short_length, seed, true);
        check.near(name + ", untrained model " + std::to_string(seed) +
                       ": your ratio = the measured one, to within a quarter of it",
                   predicted, measured, 0.25 * measured);
      }
    });
  }
}

void check_seed(exercise::Check& check, std::uint64_t seed) {
  const std::string name = "seed " + std::to_string(seed);
  check.run(name + ": both models trained", [&] {
    const sequences::LengthExperiment experiment = exercise::small_experiment(kSteps, seed);
    const std::vector<sequences::Example> train_set = sequences::training_set(experiment);
    double ratio[2];
    std::string detail[2];
    for (const bool attention : {false, true}) {
      Seq2seq<double> model(configured(attention ? "bahdanau" : "vanilla", seed));
      sequences::train(model, train_set, experiment.training);
      const double at_5 = mean_influence(model, 5, seed + 10, attention);
      const double at_40 = mean_influence(model, 40, seed + 10, attention);
      ratio[attention] = at_40 / at_5;
      detail[attention] = "T_x = 5: " + exercise::number(at_5) + ", T_x = 40: " + exercise::number(at_40) + ", ratio " +
                          exercise::number(ratio[attention]);
    }
    check.that(ratio[0] <= 0.3, name + ": the vanilla model's ‖∂h_Tx/∂x_1‖_F at T_x = 40 is at most 0.3 of T_x = 5's",
               detail[0]);
    check.that(ratio[1] >= 0.5, name + ": the attention model's ‖∂c_1/∂x_1‖_F at T_x = 40 is at least 0.5 of T_x = 5's",
               detail[1]);
  });
}

}  // namespace

int main() {
  exercise::Check check("10.3", "the first symbol's influence on c_1, with and without attention");
  check_influences(check);
  check_prediction(check);
  for (const std::uint64_t seed : {1, 2, 3}) check_seed(check, seed);
  return check.verdict();
}
