// Exercise 14.3 — your answer (the task: exercises/14/3.hpp). Check it with `scripts/exercise 14.3`.
// train_constant holds the chapter's training with warm-up (tutorials/14-transformer.cpp, train_reversal): make it
// train at a constant η = 1e-4.
#include "exercises/14/3.hpp"

#include <cmath>

#include "exercises/check.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"

namespace yours {

using namespace attend;

std::vector<double> train_constant(models::TransformerModel<float>& model,
                                   const std::function<models::Batch(std::size_t)>& batch_at, std::size_t steps,
                                   std::vector<double>& rates) {
  nn::Adam<float> adam(model.parameters(), {1e-3});
  nn::OneTape<float> one_tape;
  nn::Trainer<float> trainer(adam, one_tape);  // chapter 3's step, without clipping
  // η(s) = 1e-3 · min(s/w, √(w/s)) with w = steps/5: the schedule of (14.9) with its peak at 1e-3
  const auto w = static_cast<std::int64_t>(steps / 5);
  nn::NoamLR schedule(adam, 1, w, 1e-3 * std::sqrt(double(w)));
  trainer.add_schedule(schedule);
  std::vector<double> losses;
  rates.clear();
  for (std::size_t s = 0; s < steps; ++s) {
    const models::Batch batch = batch_at(s);
    rates.push_back(adam.lr);
    const auto loss = [&](Tape<float>& tape, std::size_t, std::size_t) {
      return nn::ShardLoss<float>{model.loss(tape, batch)};
    };
    losses.push_back(trainer.step(batch.size(), loss).loss);
  }
  return losses;
}

std::string learns_faster() { throw exercise::Todo("your prediction: \"post-norm\" or \"pre-norm\""); }

}  // namespace yours
