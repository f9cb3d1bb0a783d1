// The training step and its strategies (trainer.hpp).
#include "nn/trainer.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace attend::nn {

template <class T>
T OneTape<T>::loss_and_gradient(std::int64_t /*step*/, std::size_t rows, const RowsLoss<T>& loss,
                                const NamedParameters<T>& parameters, double* squares) {
  // [docs:one-tape]
  tape_.clear();          // a new graph for every step
  zero_grad(parameters);  // backward adds into p.grad
  const Variable<T> L = loss(tape_, 0, rows).loss;
  tape_.backward(L);                                                // p.grad = ∂L/∂p for every parameter p
  if (squares != nullptr) *squares = gradient_squares(parameters);  // Σ g², for clipping
  return L.value().item();
  // [docs:end]
}

std::uint64_t step_seed(std::uint64_t seed, std::int64_t step) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(step);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

template <class T>
T ThreadShards<T>::loss_and_gradient(std::int64_t step, std::size_t rows, const RowsLoss<T>& loss,
                                     const NamedParameters<T>& parameters, double* squares) {
  if (parallel_.threads() > 1) parallel_.seed_shards(step_seed(seed_, step));
  // the gradients are set, not added to (no zero_grad needed), and Σ g² is taken as they are summed
  return parallel_.step(rows, loss, {}, &parameters, squares);
}

template <class T>
Trainer<T>::Trainer(Optimizer<T>& optimizer, GradientStrategy<T>& gradients, double max_grad_norm)
    : optimizer_(optimizer), gradients_(gradients), max_grad_norm_(max_grad_norm) {
  if (!std::isfinite(max_grad_norm) || max_grad_norm < 0) {
    throw std::invalid_argument("nn::Trainer: max_grad_norm must be finite and >= 0, got " +
                                std::to_string(max_grad_norm));
  }
}

template <class T>
std::function<void(std::size_t, std::size_t, std::size_t)> Trainer<T>::copies_to_update() const {
  if constexpr (std::is_same_v<T, float>) {
    // the products' copies of the weights (bf16's, rounded) made again where the update wrote, while it is in cache
    if (const Products* products = gradients_.products(); products != nullptr && products->copies_weights()) {
      return [products, &parameters = optimizer_.parameters()](std::size_t i, std::size_t begin, std::size_t end) {
        products->updated(*parameters[i].second, begin, end);
      };
    }
  }
  return {};
}

template <class T>
StepReport<T> Trainer<T>::step(std::size_t rows, const RowsLoss<T>& loss) {
  // [docs:step]
  const bool clip = max_grad_norm_ > 0;
  double squares = 0;  // Σ g² over every parameter's gradient: n² (clip_grad_norm's n)
  StepReport<T> report;
  // clear, zero, loss, backward: on one tape, on threads or on processes, as the strategy does it
  report.loss = gradients_.loss_and_gradient(optimizer_.step_count(), rows, loss, optimizer_.parameters(),
                                             clip ? &squares : nullptr);
  report.norm = static_cast<T>(std::sqrt(squares));
  if (!std::isfinite(report.loss) || !std::isfinite(report.norm)) return report;  // no weight may become NaN
  StepExtras extras;
  // clip: the update reads g · max_norm / (n + 1e-6) when that factor is < 1 — the numbers clip_grad_norm followed by
  // step() gives, without a pass over the gradients of its own
  if (clip) extras.gradient_factor = clip_factor<T>(std::sqrt(squares), max_grad_norm_);
  extras.updated = copies_to_update();  // a precision that keeps copies of the weights (bf16) hears of the update
  optimizer_.step(gradients_.executor(), extras);  // update: w ← w − η · (Adam's, SGD's … direction)
  for (const auto& schedule : schedules_) schedule();
  report.updated = true;
  return report;
  // [docs:end]
}

template class OneTape<float>;
template class OneTape<double>;
template class ThreadShards<float>;
template class ThreadShards<double>;
template class Trainer<float>;
template class Trainer<double>;

}  // namespace attend::nn
