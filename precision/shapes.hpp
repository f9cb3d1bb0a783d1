// Internal to precision/ (not installed): how the products built on oneDNN (bf16.cpp, int8.cpp) get their matmul
// primitives — one for every size, or one made for each shape — and the makers that choose it instead of the machine,
// for tests and bench/onednn_shapes.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "precision/precision.hpp"

namespace attend {

enum class Shapes {
  runtime,  // one primitive for every size, sizes and strides given when it runs (oneDNN's runtime dimensions): no
            // primitive to make for a new batch, but oneDNN then runs its gemm kernels (gemm:jit), never its brgemm or
            // AMX ones
  fixed,    // a primitive made for each shape — the rows, and bf16's terms of a sum, rounded up to a bucket
            // (row_bucket), operands padded with zeros — kept in a bounded cache (onednn::MatmulCache): what oneDNN's
            // brgemm and AMX kernels need
};

// "runtime" or "fixed".
const char* shapes_name(Shapes shapes);

// The rows a product of m ≥ 1 rows is made for under Shapes::fixed: m itself up to 8, then four buckets an octave —
// 10, 12, 14, 16, 20, 24, 28, 32, 40, …, 64, 80, 96, 112, 128, 160, … — so at most a quarter more rows than asked.
std::size_t row_bucket(std::size_t m);

// What the fixed-shape primitives of a model's products did so far (onednn::MatmulCache).
struct KernelCacheStats {
  std::size_t runs = 0;     // products that asked for a primitive
  std::size_t made = 0;     // primitives made (the others found theirs made)
  std::size_t dropped = 0;  // made and dropped again, the least recently used, to stay within the capacity
  double making_seconds = 0.0;
};

// How many fixed-shape primitives a model's products keep by default.
constexpr std::size_t default_kernel_capacity = 128;

// int8 products (precision.hpp) whose primitives have the shapes asked, not those the machine prefers, keeping at
// most `capacity` fixed-shape ones. Throws std::runtime_error where int8 is unavailable.
std::unique_ptr<Products> make_int8_products(const Matrices& weights, Shapes shapes,
                                             std::size_t capacity = default_kernel_capacity);

// bf16 products likewise.
std::unique_ptr<Products> make_bf16_products(const Matrices& weights, Shapes shapes,
                                             std::size_t capacity = default_kernel_capacity);

namespace onednn {
class MatmulCache;
}

// Products that may keep fixed-shape primitives (bf16's and int8's) are also one of these: their cache (none under
// Shapes::runtime), what it did, and the phrase Products::report gives of it.
class KeepsKernels {
 public:
  virtual ~KeepsKernels() = default;
  KernelCacheStats kernel_cache_stats() const;
  std::string kernel_report() const;  // "" without a cache

 protected:
  std::shared_ptr<onednn::MatmulCache> fixed_;  // the fixed-shape primitives (Shapes::fixed), else nullptr
};

// What the fixed-shape primitives of `products` did so far: all 0 for products without them (runtime shapes, or
// another precision's).
KernelCacheStats kernel_cache_stats(const Products& products);

}  // namespace attend
