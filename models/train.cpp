// The seq2seq training loop (train.hpp).
#include "models/train.hpp"

#include <stdexcept>
#include <string>

#include "models/batch.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"

namespace attend::models {

namespace {

void check(std::size_t sources, std::size_t targets, const TrainOptions& options) {
  const std::string who = "models::train: ";
  if (sources == 0) throw std::invalid_argument(who + "no training pairs");
  if (sources != targets) {
    throw std::invalid_argument(who + std::to_string(sources) + " sources but " + std::to_string(targets) + " targets");
  }
  if (options.batch_size == 0) throw std::invalid_argument(who + "batch size 0");
  if (options.steps == 0 && options.epochs == 0) {
    throw std::invalid_argument(who + "no limit: set steps, epochs or both");
  }
}

// Why training stops at step `step`: its loss or gradient norm is not finite.
std::string diverged(std::size_t step, double loss, double norm) {
  return "models::train: training diverged at step " + std::to_string(step) + " (loss " + std::to_string(loss) +
         ", gradient norm " + std::to_string(norm) + "); nothing was updated: try a lower lr or max_grad_norm";
}

}  // namespace

template <class T>
std::vector<double> train(Seq2seq<T>& model, const std::vector<std::vector<std::int64_t>>& sources,
                          const std::vector<std::vector<std::int64_t>>& targets, const TrainOptions& options) {
  check(sources.size(), targets.size(), options);
  std::vector<std::size_t> lengths;
  for (const auto& source : sources) lengths.push_back(source.size());
  const auto out_of_steps = [&](std::size_t step) { return options.steps != 0 && step == options.steps; };
  // [docs:train]
  nn::Adam<T> adam(model.parameters(), {options.lr});
  nn::OneTape<T> one_tape;                                        // the whole batch on one tape (nn/trainer.hpp)
  nn::Trainer<T> trainer(adam, one_tape, options.max_grad_norm);  // a rare large gradient must not undo the rest
  std::vector<std::int64_t> drops;
  if (options.lr_drop_after != 0) drops.push_back(static_cast<std::int64_t>(options.lr_drop_after));
  nn::MultiStepLR schedule(adam, drops, 0.1);  // lr / 10 once lr_drop_after steps are done
  trainer.add_schedule(schedule);
  Rng order(options.seed);  // the order of the batches
  std::vector<double> losses;
  for (std::size_t epoch = 1; options.epochs == 0 || epoch <= options.epochs; ++epoch) {
    if (out_of_steps(losses.size())) break;
    model.train();
    for (const std::vector<std::size_t>& indices : bucketed_batch_order(lengths, options.batch_size, order)) {
      if (out_of_steps(losses.size())) break;
      // A padded batch of pairs of similar source lengths: source (B, T_x), target_in = <sos> y_1 … y_n (the
      // y_{j-1} that teacher forcing feeds in), target_out = y_1 … y_n <eos> (the y_j to predict).
      std::vector<std::vector<std::int64_t>> batch_sources, batch_targets;
      std::size_t tokens = 0;
      for (const std::size_t k : indices) {
        batch_sources.push_back(sources[k]);
        batch_targets.push_back(targets[k]);
        tokens += targets[k].size() + 1;
      }
      const Batch batch = make_batch(batch_sources, batch_targets);
      // L = -(1/N) Σ_b Σ_j log p(y_j | y_<j, x): teacher forcing, step j reads the true y_{j-1}; padding left out
      const auto loss = [&](Tape<T>& tape, std::size_t, std::size_t) {
        return nn::ShardLoss<T>{model.loss(tape, batch)};
      };
      const nn::StepReport<T> step = trainer.step(batch.size(), loss);
      if (!step.updated) throw std::runtime_error(diverged(losses.size() + 1, step.loss, step.norm));
      losses.push_back(static_cast<double>(step.loss));
      if (options.on_step) options.on_step({epoch, losses.size(), losses.back(), tokens});
    }
    model.eval();  // decoding, and any measuring between passes, is done in evaluation mode
    if (options.on_epoch) options.on_epoch(epoch, losses.size());
  }
  // [docs:end]
  return losses;
}

template std::vector<double> train<float>(Seq2seq<float>&, const std::vector<std::vector<std::int64_t>>&,
                                          const std::vector<std::vector<std::int64_t>>&, const TrainOptions&);
template std::vector<double> train<double>(Seq2seq<double>&, const std::vector<std::vector<std::int64_t>>&,
                                           const std::vector<std::vector<std::int64_t>>&, const TrainOptions&);

}  // namespace attend::models
