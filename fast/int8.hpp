// Internal to fast/ (not installed): the int8 products of Precision::int8 (precision.hpp), defined in int8.cpp with the
// registry of QuantizedWeights.
#pragma once

#include <cstddef>

namespace attend::int8 {

// blas_gemm's backend for Precision::int8 (autograd/blas.hpp's contract): computes the product and returns true when
// B is the transpose of a registered weight (or of a block of it) and every row of op(A) can be quantized; otherwise
// returns false having written nothing, and the product stays OpenBLAS's. A bias (blas_linear's) is added as the sums
// are turned back into floats. Only in builds with oneDNN.
bool gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
          std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc, const float* bias);

}  // namespace attend::int8
