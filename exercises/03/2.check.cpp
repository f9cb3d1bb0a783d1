// The check of exercise 3.2 (exercises/03/2.hpp): the scheduled-sampling loss and its gradient against model.loss at
// p = 0, against the reference solution at p = 1, on padded batches of a trained model and of an untrained one; then
// small vanilla models trained on the chapter's copy task with p = 0 and with p rising from 0 to ½ (three seeds): does
// free running come closer to teacher forcing?
#include "exercises/03/2.hpp"

#include <cmath>
#include <memory>
#include <string>
#define yours reference
#include "exercises/03/2.hpp"
#undef yours
#include "exercises/03/copy_task.hpp"
#include "exercises/check.hpp"
#include "models/sequences.hpp"
#include "nn/trainer.hpp"

using namespace attend;
using namespace attend::models;

namespace {

Batch first(const std::vector<sequences::Example>& examples, std::size_t count) {
  std::vector<std::size_t> indices(count);
  for (std::size_t k = 0; k < count; ++k) indices[k] = k;
  return sequences::batch_of(examples, indices);
}

// Every parameter's gradient after one backward of `loss`, one after the other.
std::vector<double> gradient(Seq2seq<float>& model, const std::function<Variable<float>(Tape<float>&)>& loss) {
  model.zero_grad();
  Tape<float> tape;
  tape.backward(loss(tape));
  std::vector<double> g;
  for (const auto& [name, p] : model.parameters()) g.insert(g.end(), p->grad.data(), p->grad.data() + p->grad.size());
  model.zero_grad();
  return g;
}

double largest(const std::vector<double>& g) {
  double m = 0;
  for (const double x : g) m = std::max(m, std::abs(x));
  return m;
}

void check_values(exercise::Check& check, const std::string& name, Seq2seq<float>& model, const Batch& batch) {
  Rng coin(1);
  Tape<float> tape;
  const double L = model.loss(tape, batch).value().item();
  check.near(name + ": p = 0: your L = model.loss (teacher forcing)",
             yours::scheduled_sampling_loss(model, tape, batch, 0.0, coin).value().item(), L, 1e-5 * L);
  const std::vector<double> yours_g =
      gradient(model, [&](Tape<float>& t) { return yours::scheduled_sampling_loss(model, t, batch, 0.0, coin); });
  const std::vector<double> expected_g = gradient(model, [&](Tape<float>& t) { return model.loss(t, batch); });
  check.near(name + ": p = 0: your ∂L/∂θ = model.loss's, every parameter", yours_g, expected_g,
             1e-4 * largest(expected_g));
  Rng coin_1(2), coin_2(3);
  const double free_running = reference::scheduled_sampling_loss(model, tape, batch, 1.0, coin_2).value().item();
  check.near(name + ": p = 1: your L (every step reads ŷ_{j−1}) = the reference's",
             yours::scheduled_sampling_loss(model, tape, batch, 1.0, coin_1).value().item(), free_running,
             1e-5 * free_running);
}

// A model trained for 400 steps with the learner's loss, p rising linearly from 0 to p_max.
std::unique_ptr<Seq2seq<float>> train(std::uint64_t seed, double p_max, const std::vector<sequences::Example>& data) {
  auto model = std::make_unique<Seq2seq<float>>(exercise::small_vanilla_config(seed));
  nn::Adam<float> adam(model->parameters(), {3e-3});
  nn::OneTape<float> one_tape;
  nn::Trainer<float> trainer(adam, one_tape, 1.0);
  Rng order(seed), coin(seed + 50);
  const std::size_t steps = 400;
  std::size_t done = 0;
  while (done < steps) {
    for (const std::vector<std::size_t>& indices : batch_order(data.size(), 32, &order)) {
      if (done == steps) break;
      const Batch batch = sequences::batch_of(data, indices);
      const double p = p_max * static_cast<double>(++done) / static_cast<double>(steps);
      trainer.step(batch.size(), [&](Tape<float>& tape, std::size_t, std::size_t) {
        return nn::ShardLoss<float>{yours::scheduled_sampling_loss(*model, tape, batch, p, coin)};
      });
    }
  }
  model->eval();
  return model;
}

// Teacher forcing's and free running's share of right tokens (<eos> included), and the loss at p = 1.
struct Measured {
  double teacher_forcing = 0, free_running = 0, free_running_loss = 0;
};

Measured measure(Seq2seq<float>& model, const std::vector<sequences::Example>& test) {
  const Batch batch = first(test, test.size());
  Tape<float> tape;
  NoGradGuard<float> no_grad(tape);
  const Tensor<float> logits = model.forward(tape, batch).logits.value();  // (B, T, V)
  const std::vector<std::vector<std::int64_t>> outputs = sequences::predict(model, test);
  const std::size_t T = logits.shape()[1], V = logits.shape()[2];
  double right_tf = 0, right_fr = 0, tokens = 0;
  for (std::size_t b = 0; b < test.size(); ++b) {
    std::vector<std::int64_t> free = outputs[b];
    free.push_back(eos_id);
    for (std::size_t j = 0; j <= test[b].target.size(); ++j) {
      const float* z = logits.data() + (b * T + j) * V;
      std::size_t best = static_cast<std::size_t>(eos_id);
      for (std::size_t v = best; v < V; ++v) best = z[v] > z[best] ? v : best;
      const std::int64_t truth = batch.target_out.data()[b * T + j];
      right_tf += static_cast<std::int64_t>(best) == truth;
      right_fr += j < free.size() && free[j] == truth;
      tokens += 1;
    }
  }
  Rng coin(0);
  const double loss = yours::scheduled_sampling_loss(model, tape, batch, 1.0, coin).value().item();
  return {right_tf / tokens, right_fr / tokens, loss};
}

void compare(exercise::Check& check, std::uint64_t seed) {
  Rng data(100 + seed);
  const std::vector<sequences::Example> train_set = sequences::generate(exercise::small_task(), 2000, data);
  const std::vector<sequences::Example> test = sequences::generate(exercise::small_task(), 300, data);
  const Measured forced = measure(*train(seed, 0.0, train_set), test);
  const Measured sampled = measure(*train(seed, 0.5, train_set), test);
  const std::string name = "seed " + std::to_string(seed);
  auto percent = [](double share) { return exercise::number(std::round(1000 * share) / 10) + " %"; };
  check.that(sampled.teacher_forcing - sampled.free_running < forced.teacher_forcing - forced.free_running,
             name + ": trained with p → ½, free running comes closer to teacher forcing (tokens right)",
             "p = 0: teacher forcing " + percent(forced.teacher_forcing) + ", free running " +
                 percent(forced.free_running) + "; p → ½: " + percent(sampled.teacher_forcing) + ", " +
                 percent(sampled.free_running));
  check.that(sampled.free_running_loss < forced.free_running_loss,
             name + ": trained with p → ½, the loss at p = 1 (free running's) is lower",
             "p = 0: " + exercise::number(forced.free_running_loss) +
                 ", p → ½: " + exercise::number(sampled.free_running_loss));
}

}  // namespace

int main() {
  exercise::Check check("3.2", "scheduled sampling");
  Rng data(7);
  const std::vector<sequences::Example> examples = sequences::generate(exercise::small_task(), 2000, data);
  Seq2seq<float> trained(exercise::small_vanilla_config(0));
  TrainOptions options;
  options.steps = 300;
  options.batch_size = 32;
  options.lr = 3e-3;
  sequences::train(trained, examples, options);
  check.run("a trained model, a padded batch of 16",
            [&] { check_values(check, "a trained model, 16 targets of 3 to 10", trained, first(examples, 16)); });
  check.run("another case: one example", [&] {
    check_values(check, "another case: a trained model, one target", trained, sequences::batch_of(examples, {5}));
  });
  check.run("another case: an untrained model", [&] {
    Seq2seq<float> untrained(exercise::small_vanilla_config(3));
    check_values(check, "another case: an untrained model, 8 targets", untrained, first(examples, 8));
  });
  check.run("another case: <pad> and <sos> given the largest logits", [&] {
    // A decoder never outputs <pad> or <sos>: with their logits made the largest, p = 1 must still feed other tokens.
    Seq2seq<float> masked(exercise::small_vanilla_config(0));
    sequences::copy_parameters(trained, masked);
    masked.decoder->output.b.value.data()[pad_id] = 50;
    masked.decoder->output.b.value.data()[sos_id] = 50;
    const Batch batch = first(examples, 8);
    Rng coin_1(2), coin_2(3);
    Tape<float> tape;
    const double expected = reference::scheduled_sampling_loss(masked, tape, batch, 1.0, coin_2).value().item();
    check.near("another case: <pad> and <sos> with the largest logits: p = 1: your L = the reference's",
               yours::scheduled_sampling_loss(masked, tape, batch, 1.0, coin_1).value().item(), expected,
               1e-5 * expected);
  });
  for (const std::uint64_t seed : {0, 1, 2}) {
    check.run("seed " + std::to_string(seed) + ": p = 0 against p → ½", [&] { compare(check, seed); });
  }
  return check.verdict();
}
