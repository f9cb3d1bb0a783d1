// The training loop of every chapter that trains a models::Seq2seq on a task (docs/03-encoder-decoder.md teaches it;
// chapters 4, 8, 9, 10 and 12 call it): Adam on the teacher-forced mean cross-entropy, gradients clipped to a global
// norm, batches of similar source lengths (bucketed_batch_order) drawn pass after pass over the pairs, and optionally
// the learning rate divided by 10 for the last steps (nn::MultiStepLR). What a chapter adds — progress lines, a
// validation after each pass — it adds through the two callbacks, so the loop itself is written once.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/seq2seq.hpp"

namespace attend::models {

// What a step reports to TrainOptions::on_step.
struct TrainStep {
  std::size_t epoch = 0;   // the pass over the pairs it belongs to, from 1
  std::size_t step = 0;    // optimizer steps so far, this one included (from 1)
  double loss = 0;         // the batch's mean cross-entropy, before the update
  std::size_t tokens = 0;  // the target tokens the batch trained on, <eos> included
};

struct TrainOptions {
  // When training stops: after `steps` optimizer steps, or after `epochs` passes over the pairs, whichever comes
  // first; 0 leaves that limit out (at least one of the two must be set).
  std::size_t steps = 0;
  std::size_t epochs = 0;
  std::size_t batch_size = 64;
  double lr = 2e-3;            // Adam's learning rate
  double max_grad_norm = 1.0;  // nn::clip_grad_norm's; 0: no clipping
  std::uint64_t seed = 7;      // the order of the batches
  // The steps after this many run at lr / 10, to settle what was learned; 0: never.
  std::size_t lr_drop_after = 0;
  // Called after every step; may be empty.
  std::function<void(const TrainStep&)> on_step;
  // Called after every pass over the pairs (and after the last, cut short by `steps`), with the model in evaluation
  // mode, e.g. to measure it on held-out pairs; may be empty.
  std::function<void(std::size_t epoch, std::size_t steps_so_far)> on_epoch;
};

// Trains model on the pairs (sources[k], targets[k]) — token ids without <sos>/<eos>, which make_batch adds — and
// leaves it in evaluation mode. Returns the loss of every step, in order. Every step is nn::Trainer's (nn/trainer.hpp)
// on one tape. Throws std::invalid_argument when there are no pairs, the two lists differ in length, the batch size is
// 0, or neither limit is set (or max_grad_norm is negative), and std::runtime_error when a step's loss or gradient is
// not finite (training diverged; that step updated nothing).
template <class T>
std::vector<double> train(Seq2seq<T>& model, const std::vector<std::vector<std::int64_t>>& sources,
                          const std::vector<std::vector<std::int64_t>>& targets, const TrainOptions& options);

}  // namespace attend::models
