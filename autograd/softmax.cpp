// softmax, log_softmax (optionally masked) and the negative log-likelihood. Both softmaxes subtract the row maximum
// before exponentiating, so logits of ±1e4 give finite results in float32 (the fused cross-entropy from logits is
// ops/losses.cpp). Formulas: ops.hpp. Chapter: docs/07 (attention
// weights) explains the masked softmax.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "autograd/ops.hpp"

namespace attend {

namespace {

// Shared by softmax and log_softmax: the (outer, n, inner) split around the axis and the mask (expanded to x's
// shape; empty when there is none).
template <class T>
Variable<T> softmax_impl(const char* op, const Variable<T>& x, std::ptrdiff_t axis_arg, const Mask* mask_arg,
                         bool take_log) {
  Tape<T>& tape = tape_of(op, {&x});
  const Shape& shape = x.value().shape();
  const std::size_t axis = normalize_axis(axis_arg, shape.rank(), op);
  const AxisSplit s = split_at(shape, axis);
  Mask mask;
  if (mask_arg != nullptr) {
    if (mask_arg->shape() != shape && broadcast_shapes(mask_arg->shape(), shape, op) != shape) {
      throw std::invalid_argument(std::string(op) + ": mask of shape " + to_string(mask_arg->shape()) +
                                  " cannot be broadcast to the input shape " + to_string(shape));
    }
    mask = mask_arg->shape() == shape ? *mask_arg : broadcast_to(*mask_arg, shape);
  }
  const bool masked = mask_arg != nullptr;
  const std::uint8_t* keep = masked ? mask.data() : nullptr;

  Tensor<T> y(shape);
  const T* in = x.value().data();
  T* out = y.data();
  for (std::size_t o = 0; o < s.outer; ++o)
    for (std::size_t i = 0; i < s.inner; ++i) {
      const std::size_t base = o * s.n * s.inner + i;  // element k of this row is at base + k·inner
      T m = -std::numeric_limits<T>::infinity();
      for (std::size_t k = 0; k < s.n; ++k) {
        const std::size_t at = base + k * s.inner;
        if (!masked || keep[at]) m = std::max(m, in[at]);
      }
      if (m == -std::numeric_limits<T>::infinity()) continue;  // every position masked: the row stays 0
      T total = 0;
      for (std::size_t k = 0; k < s.n; ++k) {
        const std::size_t at = base + k * s.inner;
        if (!masked || keep[at]) total += std::exp(in[at] - m);
      }
      const T log_total = std::log(total);
      for (std::size_t k = 0; k < s.n; ++k) {
        const std::size_t at = base + k * s.inner;
        if (masked && !keep[at]) continue;  // masked: exactly 0
        out[at] = take_log ? in[at] - m - log_total : std::exp(in[at] - m - log_total);
      }
    }

  return tape.record(op, std::move(y), {x}, [s, take_log, mask = std::move(mask)](BackwardContext<T>& c) {
    const std::uint8_t* keep = mask.size() > 0 ? mask.data() : nullptr;
    const T* y = c.y().data();
    const T* dy = c.dy().data();
    T* dx = c.dx(0).data();
    for (std::size_t o = 0; o < s.outer; ++o)
      for (std::size_t i = 0; i < s.inner; ++i) {
        const std::size_t base = o * s.n * s.inner + i;
        // softmax: Σ_l dy_l y_l;  log_softmax: Σ_l dy_l (over the unmasked positions)
        T dot = 0;
        for (std::size_t k = 0; k < s.n; ++k) {
          const std::size_t at = base + k * s.inner;
          if (keep == nullptr || keep[at]) dot += take_log ? dy[at] : dy[at] * y[at];
        }
        for (std::size_t k = 0; k < s.n; ++k) {
          const std::size_t at = base + k * s.inner;
          if (keep != nullptr && !keep[at]) continue;
          dx[at] += take_log ? dy[at] - std::exp(y[at]) * dot : y[at] * (dy[at] - dot);
        }
      }
  });
}

}  // namespace

template <class T>
Variable<T> softmax(const Variable<T>& x, std::ptrdiff_t axis) {
  return softmax_impl<T>("softmax", x, axis, nullptr, false);
}

template <class T>
Variable<T> softmax(const Variable<T>& x, std::ptrdiff_t axis, const Mask& mask) {
  return softmax_impl<T>("softmax", x, axis, &mask, false);
}

template <class T>
Variable<T> log_softmax(const Variable<T>& x, std::ptrdiff_t axis) {
  return softmax_impl<T>("log_softmax", x, axis, nullptr, true);
}

template <class T>
Variable<T> log_softmax(const Variable<T>& x, std::ptrdiff_t axis, const Mask& mask) {
  return softmax_impl<T>("log_softmax", x, axis, &mask, true);
}

std::size_t counted_targets(const char* op, const Shape& shape, const Ids& targets, std::int64_t ignore_id) {
  if (shape.rank() < 1 || shape.with_axis_removed(shape.rank() - 1) != targets.shape()) {
    throw std::invalid_argument(std::string(op) + ": input of shape " + to_string(shape) +
                                " needs targets of shape (all but the last axis), got " + to_string(targets.shape()));
  }
  const std::size_t classes = shape[shape.rank() - 1];
  std::size_t counted = 0;
  for (std::size_t n = 0; n < targets.size(); ++n) {
    const std::int64_t t = targets.data()[n];
    if (t == ignore_id) continue;
    if (t < 0 || static_cast<std::size_t>(t) >= classes) {
      throw std::invalid_argument(std::string(op) + ": target " + std::to_string(t) + " at position " +
                                  std::to_string(n) + " is not a class id in [0, " + std::to_string(classes) +
                                  ") nor the ignore id " + std::to_string(ignore_id));
    }
    ++counted;
  }
  return counted;
}

template <class T>
Variable<T> nll_loss(const Variable<T>& log_probs, const Ids& targets, std::int64_t ignore_id) {
  Tape<T>& tape = tape_of("nll_loss", {&log_probs});
  const Shape& shape = log_probs.value().shape();
  const std::size_t counted = counted_targets("nll_loss", shape, targets, ignore_id);
  const std::size_t classes = shape[shape.rank() - 1];
  T total = 0;
  for (std::size_t n = 0; n < targets.size(); ++n) {
    const std::int64_t t = targets.data()[n];
    if (t != ignore_id) total -= log_probs.value().data()[n * classes + static_cast<std::size_t>(t)];
  }
  const T loss = counted > 0 ? total / static_cast<T>(counted) : T(0);
  return tape.record("nll_loss", Tensor<T>::scalar(loss), {log_probs},
                     [targets, ignore_id, classes, counted](BackwardContext<T>& c) {
                       if (counted == 0) return;
                       const T scale = c.dy().item() / static_cast<T>(counted);
                       T* dx = c.dx(0).data();
                       for (std::size_t n = 0; n < targets.size(); ++n) {
                         const std::int64_t t = targets.data()[n];
                         if (t != ignore_id) dx[n * classes + static_cast<std::size_t>(t)] -= scale;
                       }
                     });
}

#define ATTEND_INSTANTIATE(T)                                                        \
  template Variable<T> softmax(const Variable<T>&, std::ptrdiff_t);                  \
  template Variable<T> softmax(const Variable<T>&, std::ptrdiff_t, const Mask&);     \
  template Variable<T> log_softmax(const Variable<T>&, std::ptrdiff_t);              \
  template Variable<T> log_softmax(const Variable<T>&, std::ptrdiff_t, const Mask&); \
  template Variable<T> nll_loss(const Variable<T>&, const Ids&, std::int64_t);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
