// Reductions: sum and mean (of everything, or along one axis), max along one axis. An axis reduction treats the
// tensor as (outer, n, inner) around that axis and reduces the middle index. Formulas: ops.hpp.
#include <xtensor/xmath.hpp>

#include "autograd/ops.hpp"

namespace attend {

namespace {

// The output shape of a reduction along `axis`: the axis removed, or kept with size 1.
Shape reduced_shape(const Shape& shape, std::size_t axis, bool keepdims) {
  if (!keepdims) return shape.with_axis_removed(axis);
  Shape s = shape;
  s[axis] = 1;
  return s;
}

}  // namespace

template <class T>
Variable<T> sum(const Variable<T>& x) {
  Tape<T>& tape = tape_of("sum", {&x});
  return tape.record("sum", Tensor<T>::scalar(xt::sum(x.value().flat())()), {x},
                     [](BackwardContext<T>& c) { c.dx(0).flat() += c.dy().item(); });
}

template <class T>
Variable<T> sum(const Variable<T>& x, std::ptrdiff_t axis_arg, bool keepdims) {
  Tape<T>& tape = tape_of("sum", {&x});
  const std::size_t axis = normalize_axis(axis_arg, x.value().rank(), "sum");
  const AxisSplit s = split_at(x.value().shape(), axis);
  Tensor<T> y(reduced_shape(x.value().shape(), axis, keepdims));
  const T* in = x.value().data();
  T* out = y.data();
  for (std::size_t o = 0; o < s.outer; ++o)
    for (std::size_t k = 0; k < s.n; ++k)
      for (std::size_t i = 0; i < s.inner; ++i) out[o * s.inner + i] += in[(o * s.n + k) * s.inner + i];
  return tape.record("sum", std::move(y), {x}, [s](BackwardContext<T>& c) {
    const T* dy = c.dy().data();
    T* dx = c.dx(0).data();
    for (std::size_t o = 0; o < s.outer; ++o)
      for (std::size_t k = 0; k < s.n; ++k)
        for (std::size_t i = 0; i < s.inner; ++i) dx[(o * s.n + k) * s.inner + i] += dy[o * s.inner + i];
  });
}

// The means are the sums scaled by 1/N: composed from two recorded ops, so their gradient needs no code of its own.
template <class T>
Variable<T> mean(const Variable<T>& x) {
  tape_of("mean", {&x});
  if (x.value().size() == 0) throw std::invalid_argument("mean: tensor of shape " + to_string(x.shape()) + " is empty");
  return mul(sum(x), T(1) / static_cast<T>(x.value().size()));
}

template <class T>
Variable<T> mean(const Variable<T>& x, std::ptrdiff_t axis_arg, bool keepdims) {
  tape_of("mean", {&x});
  const std::size_t axis = normalize_axis(axis_arg, x.value().rank(), "mean");
  const std::size_t n = x.value().shape()[axis];
  if (n == 0)
    throw std::invalid_argument("mean: axis " + std::to_string(axis) + " of shape " + to_string(x.shape()) +
                                " is empty");
  return mul(sum(x, axis_arg, keepdims), T(1) / static_cast<T>(n));
}

template <class T>
Variable<T> max(const Variable<T>& x, std::ptrdiff_t axis_arg, bool keepdims) {
  Tape<T>& tape = tape_of("max", {&x});
  const std::size_t axis = normalize_axis(axis_arg, x.value().rank(), "max");
  const AxisSplit s = split_at(x.value().shape(), axis);
  if (s.n == 0)
    throw std::invalid_argument("max: axis " + std::to_string(axis) + " of shape " + to_string(x.shape()) +
                                " is empty");
  // argmax (the first position of the maximum) is kept for backward: (outer·inner) indices
  std::vector<std::uint32_t> argmax(s.outer * s.inner, 0);
  Tensor<T> y(reduced_shape(x.value().shape(), axis, keepdims), uninitialized);
  const T* in = x.value().data();
  for (std::size_t o = 0; o < s.outer; ++o)
    for (std::size_t i = 0; i < s.inner; ++i) {
      std::uint32_t best = 0;
      for (std::size_t k = 1; k < s.n; ++k) {
        if (in[(o * s.n + k) * s.inner + i] > in[(o * s.n + best) * s.inner + i]) best = static_cast<std::uint32_t>(k);
      }
      argmax[o * s.inner + i] = best;
      y.data()[o * s.inner + i] = in[(o * s.n + best) * s.inner + i];
    }
  return tape.record("max", std::move(y), {x}, [s, argmax = std::move(argmax)](BackwardContext<T>& c) {
    const T* dy = c.dy().data();
    T* dx = c.dx(0).data();
    for (std::size_t o = 0; o < s.outer; ++o)
      for (std::size_t i = 0; i < s.inner; ++i)
        dx[(o * s.n + argmax[o * s.inner + i]) * s.inner + i] += dy[o * s.inner + i];
  });
}

#define ATTEND_INSTANTIATE(T)                                          \
  template Variable<T> sum(const Variable<T>&);                        \
  template Variable<T> sum(const Variable<T>&, std::ptrdiff_t, bool);  \
  template Variable<T> mean(const Variable<T>&);                       \
  template Variable<T> mean(const Variable<T>&, std::ptrdiff_t, bool); \
  template Variable<T> max(const Variable<T>&, std::ptrdiff_t, bool);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
