// Chapter 10's experiment scaled down as the checks of exercises 10.1 and 10.3 train it: sources of 5 to 10 symbols,
// 2,000 training examples, H = 16, `steps` steps of 32 with the learning rate a tenth for the last 30 %, in double.
#pragma once

#include <cstdint>

#include "models/sequences.hpp"

namespace attend::exercise {

inline models::sequences::LengthExperiment small_experiment(std::size_t steps, std::uint64_t seed) {
  models::sequences::LengthExperiment experiment = models::sequences::bottleneck_experiment(true);
  experiment.task.max_length = 10;
  experiment.train_examples = 2000;
  experiment.hidden_size = 16;
  experiment.training.steps = steps;
  experiment.training.lr_drop_after = steps * 7 / 10;
  experiment.training.seed = seed;
  return experiment;
}

}  // namespace attend::exercise
