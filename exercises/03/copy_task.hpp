// Chapter 3's copy (or reverse) task and its vanilla encoder-decoder, scaled down as the checks of chapter 3's
// exercises train them: sources of 3 to 10 letters of a..j, E = 16 and H = 32 (the chapter's 64), 400 steps (the
// chapter's 700).
#pragma once

#include <cstdint>
#include <vector>

#include "models/sequences.hpp"

namespace attend::exercise {

// Sources of 3 to 10 letters of a..j, their targets the source copied (or reversed).
inline models::sequences::TaskConfig small_task(models::sequences::Task kind = models::sequences::Task::copy) {
  models::sequences::TaskConfig task;
  task.task = kind;
  task.symbols = 10;
  task.min_length = 3;
  task.max_length = 10;
  return task;
}

// The vanilla model of that task: E = 16, H = 32, outputs of at most 15 tokens, its weights drawn from `seed`.
inline models::Seq2seqConfig small_vanilla_config(std::uint64_t seed) {
  models::Seq2seqConfig config;
  config.source_vocab_size = config.target_vocab_size = models::sequences::vocab_size(small_task());
  config.set_decoder("vanilla");
  config.embedding_dim = 16;
  config.hidden_size = 32;
  config.max_target_length = small_task().max_length + 5;
  config.seed = seed;
  return config;
}

// 400 steps of 32 examples, Adam at 3e-3, the batches drawn from `seed`.
inline void train_small(models::Seq2seq<float>& model, const std::vector<models::sequences::Example>& examples,
                        std::uint64_t seed) {
  models::TrainOptions options;
  options.steps = 400;
  options.batch_size = 32;
  options.lr = 3e-3;
  options.seed = seed;
  models::sequences::train(model, examples, options);
}

}  // namespace attend::exercise
