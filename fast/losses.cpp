// The cross-entropy from logits (fused.hpp): log softmax and the negative log-likelihood in one node, with the row's
// maximum and log-sum-exp from the kernels of kernels.hpp. Equal to nll_loss(log_softmax(x)) (cross_entropy_composed,
// tests/fast/test_equals.cpp).
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "fast/fused.hpp"
#include "fast/kernels.hpp"

namespace attend {

template <class T>
Variable<T> cross_entropy(const Variable<T>& logits, const Ids& targets, std::int64_t ignore_id,
                          double label_smoothing) {
  Tape<T>& tape = tape_of("cross_entropy", {&logits});
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    throw std::invalid_argument("cross_entropy: label_smoothing " + std::to_string(label_smoothing) +
                                " is outside [0, 1]");
  }
  const Shape& shape = logits.value().shape();
  const std::size_t counted = counted_targets("cross_entropy", shape, targets, ignore_id);
  const std::size_t classes = shape[shape.rank() - 1];
  const T eps = static_cast<T>(label_smoothing), on_target = T(1) - eps, spread = eps / static_cast<T>(classes);
  // loss_n = (1 - ε)(lse_n - x_t) + (ε/C) Σ_c (lse_n - x_c),  lse_n = m_n + l_n, l_n = ln Σ_c exp(x_c - m_n); m_n and
  // l_n are kept for backward (two numbers a row), so that backward takes one pass of exps over the logits
  const T* x = logits.value().data();
  std::vector<T> pieces(2 * targets.size());  // m_n, l_n
  T total = 0;
  for (std::size_t n = 0; n < targets.size(); ++n) {
    const std::int64_t t = targets.data()[n];
    if (t == ignore_id) continue;
    const T* row = x + n * classes;
    const T m = kernels::max_of(row, classes), l = std::log(kernels::exp_shifted_sum(row, m, classes));
    pieces[2 * n] = m;
    pieces[2 * n + 1] = l;
    const T lse = m + l;
    total += on_target * (lse - row[t]);
    if (eps > T(0)) {
      T all = 0;
      for (std::size_t k = 0; k < classes; ++k) all += lse - row[k];
      total += spread * all;
    }
  }
  const T loss = counted > 0 ? total / static_cast<T>(counted) : T(0);
  return tape.record(
      "cross_entropy", Tensor<T>::scalar(loss), {logits},
      [targets, ignore_id, classes, counted, on_target, spread, pieces = std::move(pieces)](BackwardContext<T>& c) {
        if (counted == 0) return;
        const T scale = c.dy().item() / static_cast<T>(counted);
        const T* x = c.x(0).data();
        // the first gradient of the logits is written, not added to a zero-filled one
        const bool accumulate = c.has_dx(0);
        T* dx = accumulate ? c.dx(0).data() : c.dx_for_overwrite(0).data();
        for (std::size_t n = 0; n < targets.size(); ++n) {
          const std::int64_t t = targets.data()[n];
          T* row_dx = dx + n * classes;
          if (t == ignore_id) {
            if (!accumulate) std::fill(row_dx, row_dx + classes, T(0));
            continue;
          }
          // dx_n = scale · (softmax(x_n) - (1 - ε) onehot(t) - ε/C), softmax_k = exp((x_k - m_n) - l_n)
          kernels::scaled_exp_minus(x + n * classes, pieces[2 * n], pieces[2 * n + 1], scale, spread, row_dx, classes,
                                    accumulate);
          row_dx[static_cast<std::size_t>(t)] -= scale * on_target;
        }
      });
}

template Variable<float> cross_entropy(const Variable<float>&, const Ids&, std::int64_t, double);
template Variable<double> cross_entropy(const Variable<double>&, const Ids&, std::int64_t, double);

}  // namespace attend
