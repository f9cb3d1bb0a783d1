// Internal (not installed): the BLAS matrix product with row strides, for ops that multiply rows of a larger tensor
// in place (a recurrence reads the state of step t from (batch, time, H) without copying it out). Defined in
// blas.cpp, the one file that includes <cblas.h> (see the toolchain notes on xtensor-blas).
#pragma once

#include <cstddef>

namespace attend {

// C = alpha · op(A) op(B) + beta · C, row-major; op(X) is X or Xᵀ. A is (m,k) after op, B (k,n), C (m,n); lda, ldb and
// ldc are the row strides of A, B and C as stored. Nothing happens when m, n or k is 0. In float, products of at most
// 4 rows or of one column are done by gemv (OpenBLAS's gemm packs both operands each call, most of the cost for a few
// rows); with beta = 0, C is overwritten whatever it held. The products of another precision (bf16, int8) are not
// the engine's: precision/products.hpp asks them first and falls back to these.
void blas_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
               std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc);
void blas_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a,
               std::size_t lda, const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc);

// y = x·Wᵀ + bias, the bias (n values, or nullptr for none) added to every row: what a linear layer computes, with x
// (m, k), W (n, k) and y (m, n) contiguous. The bias is copied into each row of y and blas_gemm adds x·Wᵀ to it
// (beta = 1).
// For float and double.
template <class T>
void blas_linear(std::size_t m, std::size_t n, std::size_t k, const T* x, const T* w, const T* bias, T* y);

// How many threads OpenBLAS runs one product on (openblas_set_num_threads); another precision's products run on as
// many.
int blas_threads();

}  // namespace attend
