// Shape ops: reshape, transpose/permute, concat/stack, slice/select. They move elements without arithmetic; each
// backward moves the gradient back the same way. Formulas: ops.hpp.
#include <algorithm>
#include <numeric>

#include "autograd/ops.hpp"

namespace attend {

namespace {

// y = x with axis k of y being axis perm[k] of x: a gather whose step along axis k is x's stride of axis perm[k].
template <class T>
Tensor<T> permuted(const Tensor<T>& x, const std::vector<std::size_t>& perm) {
  const Shape& in = x.shape();
  std::array<std::size_t, max_rank> in_stride{}, stride{};
  std::size_t step = 1;
  for (std::size_t a = in.rank(); a-- > 0;) {
    in_stride[a] = step;
    step *= in[a];
  }
  std::vector<std::size_t> out_shape(in.rank());
  for (std::size_t k = 0; k < in.rank(); ++k) {
    out_shape[k] = in[perm[k]];
    stride[k] = in_stride[perm[k]];
  }
  return strided_gather(x, Shape(out_shape), stride);
}

// Copies positions [begin, begin + count) along the middle axis of `from` (split sf) to positions
// [to_begin, to_begin + count) of `to` (split st), adding when `add` is set. Slice, select and concat use it both ways.
template <class T>
void copy_block(const T* from, const AxisSplit& sf, std::size_t begin, T* to, const AxisSplit& st, std::size_t to_begin,
                std::size_t count, bool add) {
  for (std::size_t o = 0; o < sf.outer; ++o) {
    const T* src = from + (o * sf.n + begin) * sf.inner;
    T* dst = to + (o * st.n + to_begin) * st.inner;
    const std::size_t len = count * sf.inner;
    if (add) {
      for (std::size_t i = 0; i < len; ++i) dst[i] += src[i];
    } else {
      std::copy(src, src + len, dst);
    }
  }
}

template <class T>
Variable<T> slice_impl(const char* op, const Variable<T>& x, std::size_t axis, std::size_t begin, std::size_t end,
                       const Shape& out_shape) {
  Tape<T>& tape = tape_of(op, {&x});
  const AxisSplit sx = split_at(x.value().shape(), axis);
  const AxisSplit sy{sx.outer, end - begin, sx.inner};
  Tensor<T> y(out_shape, uninitialized);
  copy_block(x.value().data(), sx, begin, y.data(), sy, 0, end - begin, false);
  return tape.record(op, std::move(y), {x}, [sx, sy, begin](BackwardContext<T>& c) {
    copy_block(c.dy().data(), sy, 0, c.dx(0).data(), sx, begin, sy.n, true);
  });
}

}  // namespace

template <class T>
Variable<T> reshape(const Variable<T>& x, const std::vector<std::int64_t>& shape) {
  Tape<T>& tape = tape_of("reshape", {&x});
  const Shape& in = x.value().shape();
  std::vector<std::size_t> dims(shape.size());
  std::size_t known = 1, inferred = shape.size();
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] == -1 && inferred == shape.size()) {
      inferred = a;
    } else if (shape[a] < 0) {
      throw std::invalid_argument("reshape: bad target dimension " + std::to_string(shape[a]) + " for input shape " +
                                  to_string(in) + " (only one -1 is allowed)");
    } else {
      dims[a] = static_cast<std::size_t>(shape[a]);
      known *= dims[a];
    }
  }
  if (inferred < shape.size()) dims[inferred] = known == 0 ? 0 : in.size() / known;
  const Shape out(dims);
  if (out.size() != in.size()) {
    throw std::invalid_argument("reshape: cannot view shape " + to_string(in) + " (" + std::to_string(in.size()) +
                                " elements) as " + to_string(out));
  }
  return tape.record("reshape", x.value().reshaped(out), {x},
                     [](BackwardContext<T>& c) { c.dx(0).flat() += c.dy().flat(); });
}

template <class T>
Variable<T> permute(const Variable<T>& x, const std::vector<std::size_t>& perm) {
  Tape<T>& tape = tape_of("permute", {&x});
  const std::size_t rank = x.value().rank();
  std::vector<std::size_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (!std::is_permutation(perm.begin(), perm.end(), identity.begin(), identity.end())) {
    std::string p;
    for (auto a : perm) p += (p.empty() ? "" : ",") + std::to_string(a);
    throw std::invalid_argument("permute: (" + p + ") is not a permutation of the axes of shape " +
                                to_string(x.value().shape()));
  }
  std::vector<std::size_t> inverse(rank);
  for (std::size_t k = 0; k < rank; ++k) inverse[perm[k]] = k;
  return tape.record("permute", permuted(x.value(), perm), {x},
                     [inverse](BackwardContext<T>& c) { c.dx(0).flat() += permuted(c.dy(), inverse).flat(); });
}

template <class T>
Variable<T> transpose(const Variable<T>& x, std::ptrdiff_t a0, std::ptrdiff_t a1) {
  tape_of("transpose", {&x});
  const std::size_t rank = x.value().rank();
  std::vector<std::size_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[normalize_axis(a0, rank, "transpose")], perm[normalize_axis(a1, rank, "transpose")]);
  return permute(x, perm);
}

template <class T>
Variable<T> concat(const std::vector<Variable<T>>& xs, std::ptrdiff_t axis_arg) {
  if (xs.empty()) throw std::invalid_argument("concat: no inputs");
  Tape<T>& tape = tape_of("concat", {&xs[0]});
  const Shape& first = xs[0].value().shape();
  const std::size_t axis = normalize_axis(axis_arg, first.rank(), "concat");
  Shape out = first;
  out[axis] = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    tape.check(xs[k], "concat");
    const Shape& s = xs[k].value().shape();
    bool ok = s.rank() == first.rank();
    for (std::size_t a = 0; ok && a < s.rank(); ++a) ok = a == axis || s[a] == first[a];
    if (!ok) {
      throw std::invalid_argument("concat: input " + std::to_string(k) + " has shape " + to_string(s) +
                                  ", which does not match input 0's shape " + to_string(first) + " outside axis " +
                                  std::to_string(axis));
    }
    out[axis] += s[axis];
  }
  const AxisSplit sy = split_at(out, axis);
  Tensor<T> y(out, uninitialized);   // every position is written by one input's block
  std::vector<std::size_t> offsets;  // where each input starts along the axis
  std::size_t offset = 0;
  for (const auto& x : xs) {
    const AxisSplit sx = split_at(x.value().shape(), axis);
    copy_block(x.value().data(), sx, 0, y.data(), sy, offset, sx.n, false);
    offsets.push_back(offset);
    offset += sx.n;
  }
  return tape.record("concat", std::move(y), xs, [sy, axis, offsets](BackwardContext<T>& c) {
    for (std::size_t k = 0; k < c.input_count(); ++k) {
      if (!c.wants(k)) continue;
      const AxisSplit sx = split_at(c.x(k).shape(), axis);
      copy_block(c.dy().data(), sy, offsets[k], c.dx(k).data(), sx, 0, sx.n, true);
    }
  });
}

// Stacking is concatenation of the inputs each given a new axis of size 1: composed from reshape and concat.
template <class T>
Variable<T> stack(const std::vector<Variable<T>>& xs, std::ptrdiff_t axis_arg) {
  if (xs.empty()) throw std::invalid_argument("stack: no inputs");
  tape_of("stack", {&xs[0]});
  // A copy, not a reference into the tape: the reshape nodes recorded below may reallocate the tape's node storage.
  const Shape first = xs[0].value().shape();
  const std::size_t axis = normalize_axis(axis_arg, first.rank() + 1, "stack");
  const Shape lifted = first.with_axis_inserted(axis, 1);
  std::vector<std::int64_t> dims(lifted.begin(), lifted.end());
  std::vector<Variable<T>> parts;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    if (xs[k].value().shape() != first) {
      throw std::invalid_argument("stack: input " + std::to_string(k) + " has shape " + to_string(xs[k].shape()) +
                                  ", input 0 has " + to_string(first) + "; stacked tensors must have equal shapes");
    }
    parts.push_back(reshape(xs[k], dims));
  }
  return concat(parts, static_cast<std::ptrdiff_t>(axis));
}

template <class T>
Variable<T> slice(const Variable<T>& x, std::ptrdiff_t axis_arg, std::size_t begin, std::size_t end) {
  tape_of("slice", {&x});
  const Shape& in = x.value().shape();
  const std::size_t axis = normalize_axis(axis_arg, in.rank(), "slice");
  if (begin > end || end > in[axis]) {
    throw std::invalid_argument("slice: range [" + std::to_string(begin) + ", " + std::to_string(end) +
                                ") is not inside axis " + std::to_string(axis) + " of shape " + to_string(in));
  }
  Shape out = in;
  out[axis] = end - begin;
  return slice_impl("slice", x, axis, begin, end, out);
}

template <class T>
Variable<T> select(const Variable<T>& x, std::ptrdiff_t axis_arg, std::size_t index) {
  tape_of("select", {&x});
  const Shape& in = x.value().shape();
  const std::size_t axis = normalize_axis(axis_arg, in.rank(), "select");
  if (index >= in[axis]) {
    throw std::invalid_argument("select: index " + std::to_string(index) + " is out of range for axis " +
                                std::to_string(axis) + " of shape " + to_string(in));
  }
  return slice_impl("select", x, axis, index, index + 1, in.with_axis_removed(axis));
}

#define ATTEND_INSTANTIATE(T)                                                               \
  template Variable<T> reshape(const Variable<T>&, const std::vector<std::int64_t>&);       \
  template Variable<T> permute(const Variable<T>&, const std::vector<std::size_t>&);        \
  template Variable<T> transpose(const Variable<T>&, std::ptrdiff_t, std::ptrdiff_t);       \
  template Variable<T> concat(const std::vector<Variable<T>>&, std::ptrdiff_t);             \
  template Variable<T> stack(const std::vector<Variable<T>>&, std::ptrdiff_t);              \
  template Variable<T> slice(const Variable<T>&, std::ptrdiff_t, std::size_t, std::size_t); \
  template Variable<T> select(const Variable<T>&, std::ptrdiff_t, std::size_t);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
