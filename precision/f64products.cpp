// The f64products precision (precision.hpp): float32 weights and activations, every product computed in double — the
// operands widened exactly, OpenBLAS's dgemm, the result rounded to float once (with β·C or the bias added in double
// first). A tool to see how much a model's outputs depend on the rounding of its float32 sums: decode or train with
// it and compare with float32 (`attend eval --precision f64products`). About 2× float32's time on the products.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "autograd/blas.hpp"
#include "precision/precision.hpp"
#include "runtime/cpu.hpp"

namespace attend {

namespace {

// op(X) (rows × cols, X stored with row stride ld, transposed when `trans`) widened into `out`, contiguous rows × cols.
void widen(const float* x, std::size_t ld, bool trans, std::size_t rows, std::size_t cols, std::vector<double>& out) {
  out.resize(rows * cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) out[r * cols + c] = trans ? x[c * ld + r] : x[r * ld + c];
}

class F64Products final : public Products {
 public:
  std::string name() const override { return "f64products"; }
  bool gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
            std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc, const float* bias,
            const WeightOperands&) const override {
    thread_local std::vector<double> wide_a, wide_b, wide_c;  // scratch, reused by the thread's products
    widen(a, lda, trans_a, m, k, wide_a);
    widen(b, ldb, trans_b, k, n, wide_b);
    wide_c.resize(m * n);
    blas_gemm(false, false, m, n, k, double(alpha), wide_a.data(), k, wide_b.data(), n, 0.0, wide_c.data(), n);
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        const double sum = wide_c[i * n + j];
        float& out = c[i * ldc + j];
        // with a bias, or β = 0: C's old value unread (it may be anything, a NaN included)
        out = static_cast<float>(bias != nullptr ? sum + double(bias[j])
                                 : beta == 0.0f  ? sum
                                                 : sum + double(beta) * out);
      }
    }
    return true;
  }
};

std::unique_ptr<Products> make_f64products(const Matrices&) { return std::make_unique<F64Products>(); }

}  // namespace

PrecisionBackend f64products_precision() {
  return {"f64products",
          "float32 weights, each product in double, rounded to float32 once: to see what rounding does",
          true,
          [] { return std::string(); },
          make_f64products,
          [] { return blas_routine_kernels("dgemm"); }};
}

}  // namespace attend
