// Internal (not installed): the BLAS matrix product with row strides, for ops that multiply rows of a larger tensor
// in place (a recurrence reads the state of step t from (batch, time, H) without copying it out). Defined in
// blas.cpp, the one file that includes <cblas.h> (see the toolchain notes on xtensor-blas).
#pragma once

#include <cstddef>

namespace attend {

// C = alpha · op(A) op(B) + beta · C, row-major; op(X) is X or Xᵀ. A is (m,k) after op, B (k,n), C (m,n); lda, ldb and
// ldc are the row strides of A, B and C as stored. Nothing happens when m, n or k is 0. In float, products of at most
// 4 rows or of one column are done by gemv (OpenBLAS's gemm packs both operands each call, most of the cost for a few
// rows) — unless a gemm backend is installed (below), which then takes every float product; with beta = 0, C is
// overwritten whatever it held.
void blas_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
               std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc);
void blas_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a,
               std::size_t lda, const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc);

// y = x·Wᵀ + bias, the bias (n values, or nullptr for none) added to every row: what a linear layer computes, with x
// (m, k), W (n, k) and y (m, n) contiguous. Without a backend that takes it (below), the bias is copied into each row
// of y and blas_gemm adds x·Wᵀ to it (beta = 1): the bits of that pair, always, in double.
void blas_linear(std::size_t m, std::size_t n, std::size_t k, const float* x, const float* w, const float* bias,
                 float* y);
void blas_linear(std::size_t m, std::size_t n, std::size_t k, const double* x, const double* w, const double* bias,
                 double* y);

// The float products' one hook: a function that computes blas_gemm's float products in OpenBLAS's place (same
// contract, called after the empty-shape check and the observer) and returns true, or returns false having written
// nothing to leave that product to OpenBLAS; nullptr (the default) for OpenBLAS. blas_linear asks it first with its
// bias (beta then 0: C = alpha·op(A)·op(B) + bias on every row, C's old values unread); a backend that declines that
// is asked again for the product alone, once the bias is in C. blas_gemm's own calls pass bias = nullptr. fast/
// installs oneDNN's bfloat16 and int8 products through it (fast/precision.hpp, `use_precision`); the reference engine
// itself never sets it, and double products never go through it. Changed between products, not while one runs.
using GemmBackend = bool (*)(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
                             const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
                             std::size_t ldc, const float* bias);
void set_gemm_backend(GemmBackend backend);
GemmBackend gemm_backend();

// How many threads OpenBLAS runs one product on (openblas_set_num_threads); a backend runs its products on as many.
int blas_threads();

// For benchmarks (bench/translate_floor): a function told the shape and the operands of every float product blas_gemm
// is about to run, on any thread (it must be thread-safe); nullptr (the default) for none. Not for use while training.
using GemmObserver = void (*)(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, const float* a,
                              const float* b);
void set_gemm_observer(GemmObserver observer);

}  // namespace attend
