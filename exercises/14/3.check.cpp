// The check of exercise 14.3 (exercises/14/3.hpp): train_constant's rates are 1e-4 at every step and its losses the
// reference's on the same model and batches; then 4 + 4-layer models of the reversal task, post-norm and pre-norm,
// three seeds each, trained by it: each learns (the loss falls well below where it started), and which learns faster
// (the lower mean loss over the run, summed over the seeds) against your prediction.
#include "exercises/14/3.hpp"

#include <algorithm>
#include <cmath>
#define yours reference
#include "exercises/14/3.hpp"
#undef yours
#include "exercises/check.hpp"

using namespace attend;

namespace {

constexpr std::size_t steps = 240, V = 10;  // vocabulary: the four specials and 6 tokens

// A batch of the reversal task: 16 sources of 3 … 5 random tokens (ids 4 … V − 1), targets the same tokens reversed.
models::Batch reversal_batch(Rng& rng) {
  std::vector<std::vector<std::int64_t>> sources(16), targets(16);
  for (std::size_t b = 0; b < 16; ++b) {
    const std::size_t n = 3 + rng.next() % 3;
    for (std::size_t i = 0; i < n; ++i) sources[b].push_back(static_cast<std::int64_t>(4 + rng.next() % (V - 4)));
    targets[b].assign(sources[b].rbegin(), sources[b].rend());
  }
  return models::make_batch(sources, targets);
}

std::vector<models::Batch> batches(std::uint64_t seed) {
  Rng rng(seed + 100);
  std::vector<models::Batch> all;
  for (std::size_t s = 0; s < steps; ++s) all.push_back(reversal_batch(rng));
  return all;
}

models::TransformerConfig deep_config(bool norm_first, std::uint64_t seed) {
  models::TransformerConfig config;
  config.source_vocab_size = config.target_vocab_size = V;
  config.d_model = 32, config.heads = 4, config.ff = 64;
  config.encoder_layers = config.decoder_layers = 4;
  config.dropout = 0.0;
  config.norm_first = norm_first;
  config.seed = seed;
  return config;
}

double mean(const std::vector<double>& v, std::size_t first, std::size_t last) {
  double sum = 0;
  for (std::size_t k = first; k < last; ++k) sum += v[k];
  return sum / double(last - first);
}

// Trains a model of (norm_first, seed) with your train_constant; checks its rates; returns the losses.
std::vector<double> trained(exercise::Check& check, const std::string& name, bool norm_first, std::uint64_t seed,
                            std::size_t count = steps) {
  models::TransformerModel<float> model(deep_config(norm_first, seed));
  const std::vector<models::Batch> all = batches(seed);
  std::vector<double> rates;
  const std::vector<double> losses = yours::train_constant(
      model, [&](std::size_t s) { return all.at(s); }, count, rates);
  double worst = rates.size() == count ? 0.0 : INFINITY;
  std::size_t at = 0;
  for (std::size_t s = 0; s < rates.size(); ++s) {
    if (std::abs(rates[s] - 1e-4) > worst) worst = std::abs(rates[s] - 1e-4), at = s;
  }
  check.that(worst <= 1e-15 && losses.size() == count,
             name + ": η = 1e-4 at every one of the " + std::to_string(count) + " steps",
             rates.size() != count || losses.size() != count
                 ? std::to_string(rates.size()) + " rates and " + std::to_string(losses.size()) + " losses"
                 : "largest |η − 1e-4| " + exercise::number(worst) +
                       (worst <= 1e-15
                            ? ""
                            : " (yours at step " + std::to_string(at + 1) + ": " + exercise::number(rates[at]) + ")"));
  if (losses.size() != count) throw std::runtime_error("train_constant did not return one loss a step");
  return losses;
}

}  // namespace

int main() {
  exercise::Check check("14.3", "a deep Transformer without warm-up, at a lower rate");
  check.run("another case: 5 steps", [&] { trained(check, "another case: post-norm, seed 9, 5 steps", false, 9, 5); });
  double post = 0, pre = 0;  // the mean loss over the run, summed over the seeds
  std::size_t runs = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    for (const bool norm_first : {false, true}) {
      const std::string name = std::string(norm_first ? "pre-norm" : "post-norm") + ", seed " + std::to_string(seed);
      check.run(name, [&] {
        const std::vector<double> losses = trained(check, name, norm_first, seed);
        if (seed == 1 && !norm_first) {  // the same model and batches through the reference solution
          models::TransformerModel<float> model(deep_config(false, 1));
          const std::vector<models::Batch> all = batches(1);
          std::vector<double> rates;
          const std::vector<double> expected = reference::train_constant(
              model, [&](std::size_t s) { return all.at(s); }, 50, rates);
          check.near(name + ": the loss of the first 50 steps = the reference's (Adam, no clipping)",
                     std::vector<double>(losses.begin(), losses.begin() + 50),
                     std::vector<double>(expected.begin(), expected.begin() + 50), 1e-4);
        }
        const double first = mean(losses, 0, 20), last = mean(losses, steps - 20, steps);
        check.that(last < 1.5 && first - last > 0.7,
                   name +
                       ": it learns without warm-up: the mean loss of the last 20 steps is below 1.5, and 0.7 or "
                       "more below that of the first 20",
                   exercise::number(first) + " → " + exercise::number(last));
        (norm_first ? pre : post) += mean(losses, 0, steps);
        ++runs;
      });
    }
  }
  check.run("your prediction", [&] {
    if (runs < 6) throw std::runtime_error("the trainings did not all run");
    const std::string measured = post < pre ? "post-norm" : "pre-norm";
    check.that(yours::learns_faster() == measured, "which learns faster at η = 1e-4 (the lower mean loss over the run)",
               "you say \"" + yours::learns_faster() + "\"; mean loss over the " + std::to_string(steps) +
                   " steps, averaged over the seeds: " + "post-norm " + exercise::number(post / 3) + ", pre-norm " +
                   exercise::number(pre / 3));
  });
  return check.verdict();
}
