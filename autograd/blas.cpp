// The BLAS matrix product every product of the engine calls, and the fused kernels' when their precision's products
// decline it (blas.hpp): OpenBLAS's gemm, or
// its gemv where gemm would spend its time packing. One of the two files that include OpenBLAS's <cblas.h>
// (runtime/cpu.cpp, for its kernels' name, the other), so it must not include xtensor-blas (whose FLENS headers declare
// the same functions differently; see toolchain notes).
#include "autograd/blas.hpp"

#include <cblas.h>

#include <algorithm>

namespace attend {

int blas_threads() { return openblas_get_num_threads(); }

namespace {

// Products of at most this many rows are done a row at a time by gemv. OpenBLAS's gemm packs both operands on every
// call, so for a few rows it spends most of its time copying the other one (a decoder step's output layer: 80 % of a
// lone sentence's decoding in sgemm_incopy). Measured on Zen 3 (OpenBLAS 0.3.21, one thread), gemm ÷ gemv a row for
// (m, 256)·(256, 8207): 4.8 (m = 1), 2.2 (2), 1.1 (4), 0.8 (8); for (m, 384)·(384, 768): 5.3, 2.8, 1.1, 0.8.
constexpr std::size_t gemv_rows = 4;

// C = alpha · op(A) op(B) + beta · C by gemv: a row of C at a time (m ≤ gemv_rows), or C's one column (n = 1).
void gemv_product(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                  std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
  const auto i = [](std::size_t v) { return static_cast<int>(v); };
  if (beta == 0.0f) {  // C may hold anything (a NaN times 0 is NaN): overwritten, not scaled
    for (std::size_t r = 0; r < m; ++r) std::fill(c + r * ldc, c + r * ldc + n, 0.0f);
  }
  if (n == 1 && m > gemv_rows) {
    // C's column (m) = op(A) (m,k) · op(B)'s column (k): A stored (m,k), or (k,m) when transposed
    cblas_sgemv(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, i(trans_a ? k : m), i(trans_a ? m : k), alpha, a,
                i(lda), b, i(trans_b ? 1 : ldb), beta, c, i(ldc));
    return;
  }
  for (std::size_t r = 0; r < m; ++r) {
    // C's row r (n) = op(A)'s row r (k) · op(B) (k,n): B stored (k,n), or (n,k) when transposed
    const float* a_row = trans_a ? a + r : a + r * lda;
    cblas_sgemv(CblasRowMajor, trans_b ? CblasNoTrans : CblasTrans, i(trans_b ? n : k), i(trans_b ? k : n), alpha, b,
                i(ldb), a_row, i(trans_a ? lda : 1), beta, c + r * ldc, 1);
  }
}

}  // namespace

// C = alpha · op(A) op(B) + beta · C, row-major, with leading dimensions (row strides) lda, ldb, ldc.
void blas_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
               std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
  if (m == 0 || n == 0 || k == 0) return;
  if (m <= gemv_rows || n == 1) return gemv_product(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

template <class T>
void blas_linear(std::size_t m, std::size_t n, std::size_t k, const T* x, const T* w, const T* bias, T* y) {
  if (m == 0 || n == 0) return;
  if (bias != nullptr) {
    for (std::size_t r = 0; r < m; ++r) std::copy(bias, bias + n, y + r * n);
  } else if (k == 0) {
    std::fill(y, y + m * n, T(0));  // gemm writes nothing when k is 0
  }
  blas_gemm(false, true, m, n, k, T(1), x, k, w, k, bias != nullptr ? T(1) : T(0), y, n);
}

void blas_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a,
               std::size_t lda, const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc) {
  if (m == 0 || n == 0 || k == 0) return;
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

template void blas_linear(std::size_t, std::size_t, std::size_t, const float*, const float*, const float*, float*);
template void blas_linear(std::size_t, std::size_t, std::size_t, const double*, const double*, const double*, double*);

}  // namespace attend
