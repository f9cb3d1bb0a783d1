// Internal to precision/ (not installed), compiled only with oneDNN (ATTEND_ONEDNN): what the bfloat16 products
// (precision.cpp) and the int8 products (int8.cpp) share.
#pragma once

#include <cstddef>
#include <dnnl.hpp>

namespace attend::onednn {

dnnl::engine& cpu_engine();

// oneDNN runs a product on as many OpenMP threads as the calling thread's OpenMP setting says; a thread of attend's
// (a batch shard's, a server's worker) has never set it, so it would be every core, on top of the other shards. Sets
// the calling thread's to OpenBLAS's thread count (blas_threads) when that changed since the thread's last call.
void match_blas_threads();

// oneDNN's runtime dimension: a size or stride given when the primitive runs.
constexpr dnnl::memory::dim runtime = DNNL_RUNTIME_DIM_VAL;

// A matrix stored row-major with row stride ld, seen as (rows, cols) — or, when transposed, stored (cols, rows).
dnnl::memory::desc matrix(bool transposed, dnnl::memory::dim rows, dnnl::memory::dim cols, dnnl::memory::dim ld,
                          dnnl::memory::data_type type);

inline dnnl::memory::dim dim(std::size_t v) { return static_cast<dnnl::memory::dim>(v); }

// "oneDNN's matmul, IMPLEMENTATION" for a product described by `product`: the kernel oneDNN chose for it here.
std::string kernel_of(const dnnl::matmul::primitive_desc& product);

}  // namespace attend::onednn
