// Internal to precision/ (not installed), compiled only with oneDNN (ATTEND_ONEDNN): what the bfloat16 products
// (precision.cpp) and the int8 products (int8.cpp) share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <dnnl.hpp>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

#include "precision/shapes.hpp"

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

// The shapes this machine's products of one kind should use, given the primitive oneDNN makes here for one fixed
// shape of that kind (64 × 256 · 256 × 768, the translation model's gate product): fixed where it runs an AMX kernel
// (its implementation name holds "amx": 1.5–2.1× runtime dimensions on half the translation model's shapes and equal on
// the rest, Intel Emerald Rapids, docs/performance.md), runtime elsewhere — on AVX512-BF16 without AMX its brgemm
// kernel took 1.12× the time of runtime dimensions' gemm:jit (Zen 5), and on AVX2 both are gemm:jit (Zen 3).
Shapes preferred_shapes(const dnnl::matmul::primitive_desc& fixed_example);

// One fixed-shape product: everything its primitive is made for. `kind` tells the caller's products apart (data
// types, post-ops), alpha_scaled whether alpha is given when it runs, beta_bits the bits of a sum post-op's beta.
struct MatmulShape {
  int kind = 0;
  bool trans_a = false, trans_b = false, alpha_scaled = false;
  std::uint32_t beta_bits = 0;
  std::size_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  bool operator<(const MatmulShape& o) const {
    return std::tie(kind, trans_a, trans_b, alpha_scaled, beta_bits, m, n, k, lda, ldb, ldc) <
           std::tie(o.kind, o.trans_a, o.trans_b, o.alpha_scaled, o.beta_bits, o.m, o.n, o.k, o.lda, o.ldb, o.ldc);
  }
};

// The fixed-shape primitives of one model's products, made when a shape is first run and kept, at most `capacity` of
// them (about a millisecond to make and 0.1–0.5 MB each); beyond that the least recently used is dropped. Any thread,
// several at once: a primitive is made with a user scratchpad, which each running thread gives from its own buffer
// (run), so that threads may run one primitive side by side.
class MatmulCache {
 public:
  using Describe = std::function<dnnl::matmul::primitive_desc(const MatmulShape&, const dnnl::primitive_attr&)>;
  // `describe` makes the primitive descriptor of a shape, with the attributes it is given (a user scratchpad) added to
  // its own.
  MatmulCache(Describe describe, std::size_t capacity);
  // Runs the primitive of `shape` on these operands (its sizes and strides are the shape's), on the calling thread.
  void run(const MatmulShape& shape, std::unordered_map<int, dnnl::memory> args);
  KernelCacheStats stats() const;
  std::size_t capacity() const { return capacity_; }

 private:
  struct Entry {
    std::shared_ptr<const dnnl::matmul> product;
    std::size_t scratch_bytes = 0;
    std::list<MatmulShape>::iterator use;  // its place in uses_
  };
  Entry find(const MatmulShape& shape);

  const Describe describe_;
  const std::size_t capacity_;
  mutable std::mutex mutex_;  // guards what follows
  std::map<MatmulShape, Entry> entries_;
  std::list<MatmulShape> uses_;  // most recently used first
  KernelCacheStats stats_;
};

// One line on what a cache did, for --timings and the programs' reports: "12 kernels made for their shapes in 14 ms
// (none dropped, at most 128 kept); 97.5 % of 480 products found theirs made".
std::string describe(const KernelCacheStats& stats, std::size_t capacity);

}  // namespace attend::onednn
