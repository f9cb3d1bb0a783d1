// The reference engine's operations, each declared with its two formula lines: the forward formula and the derivative
// (dX is ∂loss/∂X; backward always adds into the inputs' gradients). Implementations live in one file per family:
// elementwise.cpp, linalg.cpp, reduce.cpp, shape.cpp, softmax.cpp, index.cpp. The image ops (conv2d, max_pool2d)
// are beside the fused ones, in ops/images.hpp. The fused ops — one node for
// what these would compute in many, each equal to its composition of these — are in ops/fused.hpp. The op table is
// docs/reference/ops.md; how to add one is docs/reference/adding-an-op.md.
//
// Shapes are checked on entry: a mismatch throws std::invalid_argument naming the op and the shapes. Binary
// elementwise ops broadcast like NumPy; the gradient is summed back to each input's shape.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/tape.hpp"
#include "autograd/tensor.hpp"

namespace attend {

// The scalar argument of an op on Variable<T>: written so that T is deduced from the Variable alone, and a literal
// like 0.5 works with Variable<float>.
template <class T>
struct scalar_of {
  using type = T;
};
template <class T>
using scalar_t = typename scalar_of<T>::type;

// A mask for softmax/log_softmax: 1 where a position takes part, 0 where it is masked out (e.g. source padding).
using Mask = Tensor<std::uint8_t>;

// ---- elementwise, binary (broadcasting) ------------------------------------------------------------------------

// y = a + b
// da += dy, db += dy (each summed over the axes it was broadcast along)
template <class T>
Variable<T> add(const Variable<T>& a, const Variable<T>& b);
// y = a - b
// da += dy, db -= dy
template <class T>
Variable<T> sub(const Variable<T>& a, const Variable<T>& b);
// y = a ⊙ b
// da += dy ⊙ b, db += dy ⊙ a
template <class T>
Variable<T> mul(const Variable<T>& a, const Variable<T>& b);
// y = a / b
// da += dy / b, db -= dy ⊙ a / b²
template <class T>
Variable<T> div(const Variable<T>& a, const Variable<T>& b);

// ---- elementwise, with a scalar --------------------------------------------------------------------------------

// y = x + s
// dx += dy
template <class T>
Variable<T> add(const Variable<T>& x, scalar_t<T> s);
// y = s · x
// dx += s · dy
template <class T>
Variable<T> mul(const Variable<T>& x, scalar_t<T> s);

// ---- elementwise, unary ----------------------------------------------------------------------------------------

// y = -x
// dx -= dy
template <class T>
Variable<T> neg(const Variable<T>& x);
// [docs:tanh-declaration]
// y = tanh(x)
// dx += dy ⊙ (1 - y²)
template <class T>
Variable<T> tanh(const Variable<T>& x);
// [docs:end]
// y = σ(x) = 1 / (1 + e^(-x))
// dx += dy ⊙ y ⊙ (1 - y)
template <class T>
Variable<T> sigmoid(const Variable<T>& x);
// y = max(x, 0)
// dx += dy ⊙ [x > 0]
template <class T>
Variable<T> relu(const Variable<T>& x);
// y = e^x
// dx += dy ⊙ y
template <class T>
Variable<T> exp(const Variable<T>& x);
// y = ln x
// dx += dy / x
template <class T>
Variable<T> log(const Variable<T>& x);
// y = √x
// dx += dy / (2y)
template <class T>
Variable<T> sqrt(const Variable<T>& x);
// y = x^p (p a constant)
// dx += dy ⊙ p · x^(p-1)
template <class T>
Variable<T> pow(const Variable<T>& x, scalar_t<T> p);

// ---- matrix products -------------------------------------------------------------------------------------------

// y = a b, through BLAS gemm. (m,k)·(k,n) → (m,n); batched (B,m,k)·(B,k,n) → (B,m,n); (B,m,k)·(k,n) → (B,m,n).
// da += dy bᵀ, db += aᵀ dy (for (B,m,k)·(k,n), db sums over the batch)
template <class T>
Variable<T> matmul(const Variable<T>& a, const Variable<T>& b);

// y = x Wᵀ + b for x (..., in) of rank 2 or 3, W (out, in) in PyTorch's layout, b (out) or no bias (empty Variable)
// dx += dy W, dW += dyᵀ x (over all rows), db += Σ_rows dy
template <class T>
Variable<T> linear(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b = {});

// ---- shape -----------------------------------------------------------------------------------------------------

// y = x viewed with another shape of the same size; one dimension may be -1 (inferred)
// dx += dy viewed with x's shape
template <class T>
Variable<T> reshape(const Variable<T>& x, const std::vector<std::int64_t>& shape);
// y = x with axes a0 and a1 swapped (by default the last two: a matrix transpose)
// dx += dy with axes a0 and a1 swapped back
template <class T>
Variable<T> transpose(const Variable<T>& x, std::ptrdiff_t a0 = -2, std::ptrdiff_t a1 = -1);
// y[i_perm[0], ..., i_perm[r-1]] = x[i_0, ..., i_{r-1}], i.e. axis k of y is axis perm[k] of x
// dx += dy permuted by the inverse of perm
template <class T>
Variable<T> permute(const Variable<T>& x, const std::vector<std::size_t>& perm);
// y = [x_0; x_1; ...] joined along an existing axis (the other dimensions must agree)
// dx_k += the slice of dy that x_k occupies
template <class T>
Variable<T> concat(const std::vector<Variable<T>>& xs, std::ptrdiff_t axis);
// y = [x_0, x_1, ...] along a new axis (all shapes must be equal)
// dx_k += dy selected at position k of the new axis
template <class T>
Variable<T> stack(const std::vector<Variable<T>>& xs, std::ptrdiff_t axis);
// y = x[..., begin:end, ...] along one axis
// dx[..., begin:end, ...] += dy
template <class T>
Variable<T> slice(const Variable<T>& x, std::ptrdiff_t axis, std::size_t begin, std::size_t end);
// y = x[..., index, ...] along one axis, which disappears (time step j of a (batch, time, feature) tensor)
// dx[..., index, ...] += dy
template <class T>
Variable<T> select(const Variable<T>& x, std::ptrdiff_t axis, std::size_t index);

// ---- reductions ------------------------------------------------------------------------------------------------

// y = Σ_i x_i (a scalar)
// dx += dy (broadcast to every element)
template <class T>
Variable<T> sum(const Variable<T>& x);
// y = Σ_k x[..., k, ...] along one axis (kept as size 1 when keepdims)
// dx[..., k, ...] += dy for every k
template <class T>
Variable<T> sum(const Variable<T>& x, std::ptrdiff_t axis, bool keepdims = false);
// y = (1/N) Σ_i x_i
// dx += dy / N
template <class T>
Variable<T> mean(const Variable<T>& x);
// y = (1/n) Σ_k x[..., k, ...] along one axis
// dx[..., k, ...] += dy / n
template <class T>
Variable<T> mean(const Variable<T>& x, std::ptrdiff_t axis, bool keepdims = false);
// y = max_k x[..., k, ...] along one axis
// dx[..., k*, ...] += dy, where k* is the first position of the maximum
template <class T>
Variable<T> max(const Variable<T>& x, std::ptrdiff_t axis, bool keepdims = false);

// ---- softmax and losses ----------------------------------------------------------------------------------------

// y_k = exp(x_k - m) / Σ_j exp(x_j - m) along one axis, m = max_j x_j (so logits of ±1e4 stay finite)
// dx_k += y_k (dy_k - Σ_l dy_l y_l)
template <class T>
Variable<T> softmax(const Variable<T>& x, std::ptrdiff_t axis = -1);
// The same with a mask (x's shape, or broadcastable to it): masked positions get exactly y = 0 and no gradient, and
// the others are normalised among themselves. A row masked everywhere gives all zeros.
template <class T>
Variable<T> softmax(const Variable<T>& x, std::ptrdiff_t axis, const Mask& mask);
// y_k = x_k - m - ln Σ_j exp(x_j - m) along one axis
// dx_k += dy_k - softmax(x)_k Σ_l dy_l
template <class T>
Variable<T> log_softmax(const Variable<T>& x, std::ptrdiff_t axis = -1);
// The same with a mask: masked positions are outside the distribution; their output is 0 (a filler, not ln 0) and
// they get no gradient.
template <class T>
Variable<T> log_softmax(const Variable<T>& x, std::ptrdiff_t axis, const Mask& mask);
// Checks class-id targets (...) against an input of shape (..., C) and returns N, the number of targets that are not
// ignore_id (nll_loss's and cross_entropy's divisor); std::invalid_argument naming `op` for a wrong shape or id.
std::size_t counted_targets(const char* op, const Shape& shape, const Ids& targets, std::int64_t ignore_id);
// y = -(1/N) Σ_{n: t_n ≠ ignore} logp_n[t_n]   for log-probabilities (..., C) (e.g. from log_softmax)
// dlogp_n[t_n] -= dy / N for non-ignored n. All rows ignored: y = 0.
template <class T>
Variable<T> nll_loss(const Variable<T>& log_probs, const Ids& targets, std::int64_t ignore_id = -100);

// ---- indexing and randomness -----------------------------------------------------------------------------------

// y[..., :] = W[ids[...], :] for a table W (V, E) and ids of any shape (rank ≤ 3) → (ids..., E)
// dW[ids[...], :] += dy[..., :] (scatter-add: a repeated id accumulates), except for ids equal to padding_id (if ≥ 0)
template <class T>
Variable<T> embedding(const Variable<T>& weight, const Ids& ids, std::int64_t padding_id = -1);

// ---- operators: the same ops, written as arithmetic ------------------------------------------------------------

template <class T>
Variable<T> operator+(const Variable<T>& a, const Variable<T>& b) {
  return add(a, b);
}
template <class T>
Variable<T> operator-(const Variable<T>& a, const Variable<T>& b) {
  return sub(a, b);
}
template <class T>
Variable<T> operator*(const Variable<T>& a, const Variable<T>& b) {
  return mul(a, b);
}
template <class T>
Variable<T> operator/(const Variable<T>& a, const Variable<T>& b) {
  return div(a, b);
}
template <class T>
Variable<T> operator-(const Variable<T>& x) {
  return neg(x);
}
template <class T>
Variable<T> operator+(const Variable<T>& x, scalar_t<T> s) {
  return add(x, s);
}
template <class T>
Variable<T> operator+(scalar_t<T> s, const Variable<T>& x) {
  return add(x, s);
}
template <class T>
Variable<T> operator-(const Variable<T>& x, scalar_t<T> s) {
  return add(x, -s);
}
template <class T>
Variable<T> operator-(scalar_t<T> s, const Variable<T>& x) {
  return add(neg(x), s);
}
template <class T>
Variable<T> operator*(const Variable<T>& x, scalar_t<T> s) {
  return mul(x, s);
}
template <class T>
Variable<T> operator*(scalar_t<T> s, const Variable<T>& x) {
  return mul(x, s);
}
template <class T>
Variable<T> operator/(const Variable<T>& x, scalar_t<T> s) {
  return mul(x, T(1) / s);
}
template <class T>
Variable<T> operator/(scalar_t<T> s, const Variable<T>& x) {
  return mul(pow(x, T(-1)), s);
}

}  // namespace attend
