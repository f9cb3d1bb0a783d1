// The check of exercise 8.3 (exercises/08/3.hpp): the per-field losses against the library's loss (8.6) — the fields,
// the dashes and <eos> together must give it back — and against the reference solution, on an untrained and a trained
// model; then the experiment, scaled down (E = 12, H = 24, 300 steps of 32 dates, 2,500 pairs against 250, seeds 1–3),
// against the two predictions. The claims are measured on the mean of the three seeds, with the margins printed.
#include "exercises/08/3.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#define yours reference
#include "exercises/08/3.hpp"
#undef yours
#include "exercises/check.hpp"
#include "exercises/dates_data.hpp"
#include "models/train.hpp"

using namespace attend;
using Sequence = std::vector<std::int64_t>;

namespace {

constexpr std::size_t kSteps = 300, kPairs = 2500, kFewPairs = 250;

models::Seq2seqConfig scaled_down(std::uint64_t seed) { return exercise::date_model_config("bahdanau", 12, 24, seed); }

// The first `count` dates of the test batch, as a batch of their own.
models::Batch first_dates(const exercise::DatesData& data, std::size_t count) {
  std::vector<Sequence> sources, targets;
  const std::size_t S = data.test.source.shape()[1], T = data.test.target_out.shape()[1];
  for (std::size_t b = 0; b < count; ++b) {
    const auto length = static_cast<std::size_t>(data.test.source_lengths[b]);
    sources.emplace_back(data.test.source.data() + b * S, data.test.source.data() + b * S + length);
    targets.emplace_back(data.test.target_out.data() + b * T, data.test.target_out.data() + b * T + T - 1);
  }
  return models::make_batch(sources, targets);
}

// −log p(y_j | y_<j, x) at target position j (from 0), averaged over the batch, from the logits: for the dashes and
// <eos>, which belong to no field.
double position_loss(const Tensor<float>& logits, const models::Batch& batch, std::size_t j) {
  const std::size_t B = logits.shape()[0], T = logits.shape()[1], V = logits.shape()[2];
  double sum = 0;
  for (std::size_t b = 0; b < B; ++b) {
    const float* l = logits.data() + (b * T + j) * V;
    double l_max = l[0], Z = 0;
    for (std::size_t v = 0; v < V; ++v) l_max = std::max<double>(l_max, l[v]);
    for (std::size_t v = 0; v < V; ++v) Z += std::exp(l[v] - l_max);
    sum -= l[static_cast<std::size_t>(batch.target_out.at({b, j}))] - l_max - std::log(Z);
  }
  return sum / static_cast<double>(B);
}

void check_fields(exercise::Check& check, const std::string& name, models::Seq2seq<float>& model,
                  const models::Batch& batch) {
  Tape<float> tape;
  const Tensor<float> logits = model.forward(tape, batch).logits.value();
  const double loss = model.loss(tape, batch).value().item();
  const std::array<double, 3> mine = yours::field_losses(logits, batch);
  const std::array<double, 3> expected = reference::field_losses(logits, batch);
  // every target is "YYYY-MM-DD" then <eos>: 11 positions, 4 + 2 + 2 in the fields, dashes at 5 and 8, <eos> at 11
  const double others =
      position_loss(logits, batch, 4) + position_loss(logits, batch, 7) + position_loss(logits, batch, 10);
  check.near(name + ": (4 L_year + 2 L_month + 2 L_day + the 2 dashes' and <eos>'s) / 11 = the loss (8.6)",
             (4 * mine[0] + 2 * mine[1] + 2 * mine[2] + others) / 11, loss, 1e-5);
  check.near(name + ": {L_year, L_month, L_day} as the reference solution's", {mine[0], mine[1], mine[2]},
             {expected[0], expected[1], expected[2]}, 1e-5);
}

struct Run {
  double training_loss = 0;          // the mean of the last 30 steps' losses
  std::array<double, 3> held_out{};  // the reference's field losses on the test dates
};

// One training of the scaled-down model on the first `pairs` pairs; `after`, if given, is called with the trained
// model.
Run train_one(const exercise::DatesData& data, std::size_t pairs, std::uint64_t seed,
              const std::function<void(models::Seq2seq<float>&)>& after = nullptr) {
  models::Seq2seq<float> model(scaled_down(seed));
  const std::vector<Sequence> sources(data.sources.begin(), data.sources.begin() + static_cast<std::ptrdiff_t>(pairs));
  const std::vector<Sequence> targets(data.targets.begin(), data.targets.begin() + static_cast<std::ptrdiff_t>(pairs));
  const std::vector<double> losses = models::train(model, sources, targets, exercise::dates_training(kSteps, seed));
  Run run;
  for (std::size_t k = losses.size() - 30; k < losses.size(); ++k) run.training_loss += losses[k] / 30;
  Tape<float> tape;
  NoGradGuard<float> no_grad(tape);
  run.held_out = reference::field_losses(model.forward(tape, data.test).logits.value(), data.test);
  if (after) after(model);
  return run;
}

double mean_of(const std::vector<double>& runs) {
  double mean = 0;
  for (const double r : runs) mean += r / static_cast<double>(runs.size());
  return mean;
}

std::string mean_and_runs(const std::vector<double>& runs) {
  return exercise::numbers(runs) + " (mean " + exercise::number(mean_of(runs)) + ")";
}

}  // namespace

int main() {
  exercise::Check check("8.3", "ten times fewer pairs, the same number of steps");
  // the dates task: 2,500 training pairs (the first 250 of them are the small set) and 200 test dates
  const exercise::DatesData data = exercise::dates_data(kPairs, 200, true);
  check.run("an untrained model, 8 test dates", [&] {
    models::Seq2seq<float> model(scaled_down(5));
    check_fields(check, "an untrained model, 8 test dates", model, first_dates(data, 8));
  });
  check.run("another case: an untrained model, one date", [&] {
    models::Seq2seq<float> model(scaled_down(6));
    check_fields(check, "another case: an untrained model, one date", model, first_dates(data, 1));
  });
  // The predictions first: the trainings take seconds, and are run only when there is something to check.
  bool lower = false, predicted = false;
  std::string least;
  check.run("your predictions", [&] {
    lower = yours::fewer_pairs_lower_training_loss();
    least = yours::least_hurt_field();
    predicted = least == "year" || least == "month" || least == "day";
    check.that(predicted, "your least hurt field is \"year\", \"month\" or \"day\"", "\"" + least + "\"");
  });
  if (!predicted) return check.verdict();
  std::vector<Run> many, few;  // 2,500 pairs, 250 pairs; seeds 1, 2, 3
  check.run("the experiment (2,500 and 250 pairs, seeds 1–3)", [&] {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const std::string trained = "another case: trained on 2,500 pairs (seed 1), the 200 test dates";
      many.push_back(train_one(data, kPairs, seed, [&](models::Seq2seq<float>& model) {
        if (seed == 1) check.run(trained, [&] { check_fields(check, trained, model, data.test); });
      }));
      few.push_back(train_one(data, kFewPairs, seed));
    }
  });
  if (many.size() != 3 || few.size() != 3) return check.verdict();
  check.run("the training losses", [&] {
    std::vector<double> loss_many, loss_few;
    for (std::size_t s = 0; s < 3; ++s) {
      loss_many.push_back(many[s].training_loss);
      loss_few.push_back(few[s].training_loss);
    }
    const bool measured = mean_of(loss_few) < mean_of(loss_many);
    check.that(lower == measured,
               "the 250-pair model ends with the lower training loss: yours " + std::string(lower ? "yes" : "no") +
                   ", measured " + (measured ? "yes" : "no"),
               "the mean of the last 30 steps, seeds 1–3: 250 pairs " + mean_and_runs(loss_few) + ", 2,500 pairs " +
                   mean_and_runs(loss_many));
  });
  check.run("the field hurt least", [&] {
    const char* names[] = {"year", "month", "day"};
    std::array<double, 3> growth{0, 0, 0};
    std::string detail = "held-out loss, 2,500 → 250 pairs, mean of seeds 1–3:";
    for (std::size_t f = 0; f < 3; ++f) {
      for (std::size_t s = 0; s < 3; ++s) growth[f] += (few[s].held_out[f] - many[s].held_out[f]) / 3;
      detail += std::string(f ? "," : "") + " L_" + names[f] + " +" + exercise::number(growth[f]);
    }
    const auto smallest = static_cast<std::size_t>(std::min_element(growth.begin(), growth.end()) - growth.begin());
    check.that(
        least == names[smallest],
        "the field whose held-out loss grows least: yours \"" + least + "\", measured \"" + names[smallest] + "\"",
        detail);
  });
  return check.verdict();
}
