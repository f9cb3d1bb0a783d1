// The seq2seq training loop (train.hpp).
#include "models/train.hpp"

#include <stdexcept>
#include <string>

#include "models/batch.hpp"
#include "nn/optim.hpp"

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
  std::vector<std::int64_t> drops;
  if (options.lr_drop_after != 0) drops.push_back(static_cast<std::int64_t>(options.lr_drop_after));
  nn::MultiStepLR schedule(adam, drops, 0.1);  // lr / 10 once lr_drop_after steps are done
  Rng order(options.seed);                     // the order of the batches
  Tape<T> tape;
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
      tape.clear();  // a new graph for every step
      adam.zero_grad();
      // L = -(1/N) Σ_b Σ_j log p(y_j | y_<j, x): teacher forcing, step j reads the true y_{j-1}; padding left out
      const Variable<T> L = model.loss(tape, batch);
      tape.backward(L);                                               // ∂L/∂θ for every parameter θ
      nn::clip_grad_norm(model.parameters(), options.max_grad_norm);  // a rare large gradient must not undo the rest
      adam.step();
      schedule.step();
      losses.push_back(static_cast<double>(L.value().item()));
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
