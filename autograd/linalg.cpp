// The matrix product op. Forward and backward call BLAS gemm (blas.hpp) directly on the tensors' memory (no
// temporaries): the backward products accumulate into the gradients with beta = 1.
// Formulas: ops.hpp. Chapter: docs/01-autograd.md.
#include "autograd/blas.hpp"
#include "autograd/ops.hpp"

namespace attend {

namespace {

// The same for contiguous matrices: A is (m,k) after op, B is (k,n), C is (m,n).
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, T alpha, const T* a, const T* b,
          T beta, T* c) {
  blas_gemm(trans_a, trans_b, m, n, k, alpha, a, trans_a ? m : k, b, trans_b ? k : n, beta, c, n);
}

// The shapes of one product: `batch` independent (m,k)·(k,n) products; b_batched is false when one b serves all.
struct Product {
  std::size_t batch = 1, m = 0, k = 0, n = 0;
  bool b_batched = false;
};

Product product_of(const Shape& a, const Shape& b) {
  auto fail = [&](const std::string& why) {
    return std::invalid_argument("matmul: shapes " + to_string(a) + " and " + to_string(b) + ": " + why);
  };
  Product p;
  if (a.rank() == 2 && b.rank() == 2) {
    p.m = a[0], p.k = a[1], p.n = b[1];
    if (b[0] != p.k) throw fail("inner dimensions " + std::to_string(p.k) + " and " + std::to_string(b[0]) + " differ");
  } else if (a.rank() == 3 && b.rank() == 3) {
    p.batch = a[0], p.m = a[1], p.k = a[2], p.n = b[2], p.b_batched = true;
    if (b[0] != p.batch) throw fail("batch sizes " + std::to_string(a[0]) + " and " + std::to_string(b[0]) + " differ");
    if (b[1] != p.k) throw fail("inner dimensions " + std::to_string(p.k) + " and " + std::to_string(b[1]) + " differ");
  } else if (a.rank() == 3 && b.rank() == 2) {
    // (B,m,k)·(k,n): one product with B·m rows, since a is contiguous
    p.m = a[0] * a[1], p.k = a[2], p.n = b[1];
    if (b[0] != p.k) throw fail("inner dimensions " + std::to_string(p.k) + " and " + std::to_string(b[0]) + " differ");
  } else {
    throw fail("expected (m,k)·(k,n), (B,m,k)·(B,k,n) or (B,m,k)·(k,n)");
  }
  return p;
}

}  // namespace

template <class T>
Variable<T> matmul(const Variable<T>& a, const Variable<T>& b) {
  Tape<T>& tape = tape_of("matmul", {&a, &b});
  const Product p = product_of(a.value().shape(), b.value().shape());
  Shape out_shape = a.value().shape();
  out_shape[out_shape.rank() - 1] = p.n;
  // gemm with beta = 0 overwrites every element; only an empty inner dimension (k = 0) needs the zeros
  Tensor<T> y = p.k == 0 ? Tensor<T>(out_shape) : Tensor<T>(out_shape, uninitialized);
  const std::size_t a_step = p.m * p.k, b_step = p.b_batched ? p.k * p.n : 0, y_step = p.m * p.n;
  for (std::size_t i = 0; i < p.batch; ++i) {
    gemm(false, false, p.m, p.n, p.k, T(1), a.value().data() + i * a_step, b.value().data() + i * b_step, T(0),
         y.data() + i * y_step);
  }
  return tape.record("matmul", std::move(y), {a, b}, [p, a_step, b_step, y_step](BackwardContext<T>& c) {
    const T* dy = c.dy().data();
    // a gradient slot that is still empty is assigned (beta = 0) instead of being zero-filled and added to; the
    // zeros are only needed when a product's inner dimension is 0 (gemm then writes nothing) or there is no batch
    // (in this order: when a and b are the same node, b's slot is a's, already taken, and is added to)
    const bool add_a = c.wants(0) && (c.has_dx(0) || p.n == 0);
    T* da = !c.wants(0) ? nullptr : add_a ? c.dx(0).data() : c.dx_for_overwrite(0).data();
    const bool add_b = c.wants(1) && (c.has_dx(1) || p.m == 0 || p.batch == 0);
    T* db = !c.wants(1) ? nullptr : add_b ? c.dx(1).data() : c.dx_for_overwrite(1).data();
    for (std::size_t i = 0; i < p.batch; ++i) {
      // da (m,k) += dy (m,n) · bᵀ (n,k)
      if (da)
        gemm(false, true, p.m, p.k, p.n, T(1), dy + i * y_step, c.x(1).data() + i * b_step, add_a ? T(1) : T(0),
             da + i * a_step);
      // db (k,n) += aᵀ (k,m) · dy (m,n)   (summed over the batch when b is shared: assigned once, then added)
      if (db)
        gemm(true, false, p.k, p.n, p.m, T(1), c.x(0).data() + i * a_step, dy + i * y_step,
             add_b || (i > 0 && !p.b_batched) ? T(1) : T(0), db + i * b_step);
    }
  });
}

template <class T>
Variable<T> linear(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b) {
  Tape<T>& tape = b.empty() ? tape_of("linear", {&x, &W}) : tape_of("linear", {&x, &W, &b});
  const Shape& xs = x.value().shape();
  const Shape& ws = W.value().shape();
  if ((xs.rank() != 2 && xs.rank() != 3) || ws.rank() != 2 || xs[xs.rank() - 1] != ws[1] ||
      (!b.empty() && (b.value().rank() != 1 || b.value().shape()[0] != ws[0]))) {
    throw std::invalid_argument("linear: input " + to_string(xs) + ", weight " + to_string(ws) + ", bias " +
                                (b.empty() ? std::string("none") : to_string(b.value().shape())) +
                                ": expected input (..., in) of rank 2 or 3, weight (out, in), bias (out,)");
  }
  const std::size_t rows = xs.size() / ws[1], in = ws[1], out = ws[0];
  Shape y_shape = xs;
  y_shape[xs.rank() - 1] = out;
  Tensor<T> y(y_shape, uninitialized);
  // y = x Wᵀ + b on every row: b copied into each row, then x Wᵀ added to it (blas.hpp)
  blas_linear(rows, out, in, x.value().data(), W.value().data(), b.empty() ? nullptr : b.value().data(), y.data());
  std::vector<Variable<T>> inputs{x, W};
  if (!b.empty()) inputs.push_back(b);
  return tape.record("linear", std::move(y), inputs, [rows, in, out](BackwardContext<T>& c) {
    const T* dy = c.dy().data();
    // an empty gradient slot is assigned by gemm (beta = 0) instead of zero-filled and added to, except when the
    // product is empty (out = 0 or rows = 0: gemm writes nothing)
    // dx (rows, in) += dy (rows, out) · W (out, in)
    if (c.wants(0)) {
      const bool add = c.has_dx(0) || out == 0;
      gemm(false, false, rows, in, out, T(1), dy, c.x(1).data(), add ? T(1) : T(0),
           add ? c.dx(0).data() : c.dx_for_overwrite(0).data());
    }
    // dW (out, in) += dyᵀ (out, rows) · x (rows, in)
    if (c.wants(1)) {
      const bool add = c.has_dx(1) || rows == 0;
      gemm(true, false, out, in, rows, T(1), dy, c.x(0).data(), add ? T(1) : T(0),
           add ? c.dx(1).data() : c.dx_for_overwrite(1).data());
    }
    // db (out) += Σ_rows dy
    if (c.input_count() == 3 && c.wants(2)) {
      T* db = c.dx(2).data();
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t o = 0; o < out; ++o) db[o] += dy[r * out + o];
    }
  });
}

template Variable<float> matmul(const Variable<float>&, const Variable<float>&);
template Variable<float> linear(const Variable<float>&, const Variable<float>&, const Variable<float>&);
template Variable<double> linear(const Variable<double>&, const Variable<double>&, const Variable<double>&);
template Variable<double> matmul(const Variable<double>&, const Variable<double>&);

}  // namespace attend
