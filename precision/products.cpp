// The products of a tape's precision (products.hpp): the fallback to OpenBLAS, and `dense`, linear with its products
// asked of the context.
#include "precision/products.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "autograd/blas.hpp"

namespace attend {

void Products::gemm_bfloat16_a(bool, bool, std::size_t, std::size_t, std::size_t, float, const std::uint16_t*,
                               std::size_t, const float*, std::size_t, float, float*, std::size_t,
                               const Parameter<float>*) const {
  throw std::logic_error("gemm_bfloat16_a: an operand in bfloat16 while the products are " + name());
}

void gemm(const Products* products, bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k,
          float alpha, const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
          std::size_t ldc, const WeightOperands& weights) {
  if (m == 0 || n == 0 || k == 0) return;
  if (products != nullptr &&
      products->gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nullptr, weights)) {
    return;
  }
  blas_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(const Products*, bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, double alpha,
          const double* a, std::size_t lda, const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc,
          const WeightOperands&) {
  blas_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

namespace {

// blas_linear's bits, with the product asked of `products`: the bias copied into each row of y, then x·Wᵀ added.
template <class T>
void linear_by_gemm(const Products* products, std::size_t m, std::size_t n, std::size_t k, const T* x, const T* w,
                    const T* bias, T* y, const Parameter<float>* w_weight) {
  if (bias != nullptr) {
    for (std::size_t r = 0; r < m; ++r) std::copy(bias, bias + n, y + r * n);
  } else if (k == 0) {
    std::fill(y, y + m * n, T(0));  // gemm writes nothing when k is 0
  }
  gemm(products, false, true, m, n, k, T(1), x, k, w, k, bias != nullptr ? T(1) : T(0), y, n, {nullptr, w_weight});
}

}  // namespace

void linear_product(const Products* products, std::size_t m, std::size_t n, std::size_t k, const float* x,
                    const float* w, const float* bias, float* y, const Parameter<float>* w_weight) {
  if (m == 0 || n == 0) return;
  if (products != nullptr && bias != nullptr && k != 0 &&
      products->gemm(false, true, m, n, k, 1.0f, x, k, w, k, 0.0f, y, n, bias, {nullptr, w_weight})) {
    return;
  }
  linear_by_gemm(products, m, n, k, x, w, bias, y, w_weight);
}

void linear_product(const Products*, std::size_t m, std::size_t n, std::size_t k, const double* x, const double* w,
                    const double* bias, double* y, const Parameter<float>*) {
  blas_linear(m, n, k, x, w, bias, y);
}

template <class T>
Variable<T> dense(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b) {
  Tape<T>& tape = b.empty() ? tape_of("linear", {&x, &W}) : tape_of("linear", {&x, &W, &b});
  const Shape& xs = x.value().shape();
  const Shape& ws = W.value().shape();
  const bool fits = (xs.rank() == 2 || xs.rank() == 3) && ws.rank() == 2 && xs[xs.rank() - 1] == ws[1] &&
                    (b.empty() || (b.value().rank() == 1 && b.value().shape()[0] == ws[0]));
  if (!fits) return linear(x, W, b);  // which throws its error, naming the shapes
  const Products* products = products_of(tape);
  const std::size_t rows = xs.size() / ws[1], in = ws[1], out = ws[0];
  Shape y_shape = xs;
  y_shape[xs.rank() - 1] = out;
  Tensor<T> y(y_shape, uninitialized);
  const Parameter<float>* weight = weight_of(W);
  linear_product(products, rows, out, in, x.value().data(), W.value().data(), b.empty() ? nullptr : b.value().data(),
                 y.data(), weight);
  std::vector<Variable<T>> inputs{x, W};
  if (!b.empty()) inputs.push_back(b);
  return tape.record("linear", std::move(y), inputs, [products, weight, rows, in, out](BackwardContext<T>& c) {
    const T* dy = c.dy().data();
    // as linear's backward (autograd/linalg.cpp): an empty slot assigned (beta = 0) unless the product is empty
    if (c.wants(0)) {  // dx (rows, in) += dy (rows, out) · W (out, in)
      const bool add = c.has_dx(0) || out == 0;
      gemm(products, false, false, rows, in, out, T(1), dy, out, c.x(1).data(), in, add ? T(1) : T(0),
           add ? c.dx(0).data() : c.dx_for_overwrite(0).data(), in, {nullptr, weight});
    }
    if (c.wants(1)) {  // dW (out, in) += dyᵀ (out, rows) · x (rows, in)
      const bool add = c.has_dx(1) || rows == 0;
      gemm(products, true, false, out, in, rows, T(1), dy, out, c.x(0).data(), in, add ? T(1) : T(0),
           add ? c.dx(1).data() : c.dx_for_overwrite(1).data(), in);
    }
    if (c.input_count() == 3 && c.wants(2)) {  // db (out) += Σ_rows dy
      T* db = c.dx(2).data();
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t o = 0; o < out; ++o) db[o] += dy[r * out + o];
    }
  });
}

template Variable<float> dense(const Variable<float>&, const Variable<float>&, const Variable<float>&);
template Variable<double> dense(const Variable<double>&, const Variable<double>&, const Variable<double>&);

}  // namespace attend
