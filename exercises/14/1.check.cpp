// The check of exercise 14.1 (exercises/14/1.hpp): mean_over_heads against the mean the library's decoder records
// (AttentionView, head −1) and against the reference on a padded batch, its rows summing to 1; then the dates model
// trained with one head and with four, three seeds each: the peak weight of the single head against the mean of four,
// against your prediction, and the exact match of both.
#include "exercises/14/1.hpp"

#include <cmath>
#define yours reference
#include "exercises/14/1.hpp"
#undef yours
#include "exercises/check.hpp"
#include "exercises/dates_data.hpp"
#include "models/transformer.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"

using namespace attend;
namespace dates = attend::data::dates;

namespace {

// The dates model, small: D = 32, 1 + 1 post-norm layers, feed-forward 128, no dropout.
models::TransformerConfig dates_config(std::size_t heads, std::uint64_t seed) {
  models::TransformerConfig config;
  config.source_vocab_size = exercise::date_vocabularies().source.size();
  config.target_vocab_size = exercise::date_vocabularies().target.size();
  config.d_model = 32, config.heads = heads, config.ff = 128;
  config.encoder_layers = config.decoder_layers = 1;
  config.dropout = 0.0;
  config.max_target_length = 12;
  config.seed = seed;
  return config;
}

double worst(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  double w = a.size() == b.size() ? 0.0 : INFINITY;
  for (std::size_t t = 0; t < a.size() && t < b.size(); ++t) {
    if (a[t].size() != b[t].size()) return INFINITY;
    for (std::size_t q = 0; q < a[t].size(); ++q) w = std::max(w, std::abs(a[t][q] - b[t][q]));
  }
  return w;
}

// Your mean over the heads of a 4-head model's cross-attention, teacher-forced on its own greedy output, against the
// rows the greedy decoder records with AttentionView{layer −1, head −1} (the mean of the last layer's heads).
void against_the_decoder(exercise::Check& check) {
  models::TransformerModel<float> model(dates_config(4, 7));
  model.eval();
  const std::string text = "Saturday 09 May 2018";
  const models::Batch source = models::make_batch({exercise::date_source_ids(text)});
  const models::Hypothesis h =
      models::decode(model, source.source, source.source_lengths, {}, models::AttentionView{-1, -1}).front();
  const models::Batch batch = models::make_batch({exercise::date_source_ids(text)}, {h.tokens});
  Tape<float> tape;
  nn::AttentionWeights<float> weights;
  model.forward(tape, batch, &weights);
  const std::size_t rows = h.attention.size(), S = exercise::date_source_ids(text).size();
  std::vector<std::vector<double>> recorded;
  for (const std::vector<float>& row : h.attention) recorded.emplace_back(row.begin(), row.end());
  check.that(
      worst(yours::mean_over_heads(weights.cross.back(), 0, rows, S), recorded) <= 1e-5,
      "\"" + text + "\", 4 heads: your mean over the heads = the decoder's recorded mean (AttentionView head −1)",
      "largest difference " +
          exercise::number(worst(yours::mean_over_heads(weights.cross.back(), 0, rows, S), recorded)) + " over " +
          std::to_string(rows) + " rows of " + std::to_string(S) + " (tolerance 1e-5)");
}

// A batch of two sources of different lengths: sequence 0 is padded; your rows over its real positions.
void padded(exercise::Check& check) {
  models::TransformerModel<float> model(dates_config(4, 8));
  model.eval();
  const models::Batch batch =
      models::make_batch({exercise::date_source_ids("9 May 2018"), exercise::date_source_ids("Saturday 09 May 2018")},
                         {exercise::date_target_ids("2018-05-09"), exercise::date_target_ids("2018-05-09")});
  Tape<float> tape;
  nn::AttentionWeights<float> weights;
  model.forward(tape, batch, &weights);
  const std::size_t rows = 11, S = exercise::date_source_ids("9 May 2018").size();  // 10 characters and the end token
  const std::vector<std::vector<double>> yours = yours::mean_over_heads(weights.cross.back(), 0, rows, S);
  check.that(worst(yours, reference::mean_over_heads(weights.cross.back(), 0, rows, S)) <= 1e-12,
             "another case: the padded sequence of a batch of two (S = " + std::to_string(S) + " of " +
                 std::to_string(weights.cross.back().shape()[3]) + "): = the reference's",
             "largest difference " +
                 exercise::number(worst(yours, reference::mean_over_heads(weights.cross.back(), 0, rows, S))));
  double off = yours.size() == rows ? 0.0 : INFINITY;
  for (const std::vector<double>& row : yours) {
    double sum = 0;
    for (const double a : row) sum += a;
    off = std::max(off, std::abs(sum - 1));
  }
  check.that(off <= 1e-5, "another case: every row of the mean sums to 1 over the real positions",
             "largest |Σ_q − 1| " + exercise::number(off));
  const std::vector<std::vector<double>> two = {{0.5, 0.25, 0.25}, {0.1, 0.1, 0.8}};
  check.near("another case: peak_weight of {0.5, 0.25, 0.25}, {0.1, 0.1, 0.8} = (0.5 + 0.8)/2", yours::peak_weight(two),
             0.65, 1e-15);
}

struct Trained {
  double exact_match = 0, peak = 0;
};

const dates::Splits& splits() {
  static const dates::Splits made = dates::make_splits(/*seed=*/1, /*train=*/160 * 32, 0, /*test=*/200);
  return made;
}

// 160 steps of 32 training dates, Adam with the warm-up (14.9) to 3e-3 over 32 steps; then the greedy exact match of
// the 200 test dates, and the peak weight of your mean over the heads, teacher-forced on the test dates.
Trained train(std::size_t heads, std::uint64_t seed) {
  models::TransformerModel<float> model(dates_config(heads, seed));
  nn::Adam<float> adam(model.parameters(), {1e-3});
  nn::NoamLR schedule(adam, 1, 32, 3e-3 * std::sqrt(32.0));
  nn::OneTape<float> one_tape;
  nn::Trainer<float> trainer(adam, one_tape);
  trainer.add_schedule(schedule);
  for (std::size_t step = 0; step < 160; ++step) {
    std::vector<std::vector<std::int64_t>> sources, targets;
    for (std::size_t b = 0; b < 32; ++b) {
      sources.push_back(exercise::date_source_ids(splits().train[step * 32 + b].source));
      targets.push_back(exercise::date_target_ids(splits().train[step * 32 + b].target));
    }
    const models::Batch batch = models::make_batch(sources, targets);
    trainer.step(
        32, [&](Tape<float>& tape, std::size_t, std::size_t) { return nn::ShardLoss<float>{model.loss(tape, batch)}; });
  }
  model.eval();
  std::vector<std::vector<std::int64_t>> sources, targets;
  for (const dates::Example& e : splits().test) {
    sources.push_back(exercise::date_source_ids(e.source));
    targets.push_back(exercise::date_target_ids(e.target));
  }
  Trained trained;
  const models::Batch batch = models::make_batch(sources, targets);
  std::size_t n = 0;
  for (const models::Hypothesis& h : models::decode(model, batch.source, batch.source_lengths)) {
    trained.exact_match += (h.tokens == targets[n++]) / double(sources.size());
  }
  Tape<float> tape;
  nn::AttentionWeights<float> weights;
  model.forward(tape, batch, &weights);
  for (std::size_t b = 0; b < sources.size(); ++b) {
    const std::vector<std::vector<double>> rows =
        yours::mean_over_heads(weights.cross.back(), b, targets[b].size() + 1, sources[b].size());
    trained.peak += yours::peak_weight(rows) / double(sources.size());
  }
  return trained;
}

}  // namespace

int main() {
  exercise::Check check("14.1", "one head or four");
  check.run("the mean over the heads", [&] { against_the_decoder(check); });
  check.run("a padded batch", [&] { padded(check); });
  double one = 0, four = 0;
  std::size_t seeds = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    check.run("seed " + std::to_string(seed), [&] {
      const Trained single = train(1, seed), several = train(4, seed);
      check.that(single.peak > several.peak,
                 "seed " + std::to_string(seed) + ": the single head's peak weight is above the mean of four heads'",
                 "one head " + exercise::number(single.peak) + ", the mean of four " + exercise::number(several.peak) +
                     "; exact match of the 200 test dates: one head " + exercise::number(single.exact_match) +
                     ", four " + exercise::number(several.exact_match));
      one += single.peak, four += several.peak, ++seeds;
    });
  }
  check.run("your prediction", [&] {
    if (seeds < 3) throw std::runtime_error("the trainings did not all run");
    const std::string measured = one > four ? "one head" : "the mean of four heads";
    check.that(yours::sharper() == measured, "which is sharper: one head or the mean of four",
               "you say \"" + yours::sharper() + "\"; peak weight over the seeds: one head " +
                   exercise::number(one / 3) + ", the mean of four " + exercise::number(four / 3));
  });
  return check.verdict();
}
