// Internal to precision/ (not installed): how the bf16 products (bf16.cpp) cut their work, for tests and diagnostics.
#pragma once

#include <cstddef>

namespace attend {

// How a bfloat16 product is cut into blocks (bf16.cpp says why): the rows of C (or columns) a block takes along a side
// of `extent` ≥ 1, for sums of k terms, when that side's operand is read where it lies — a weight's copy, or given in
// bfloat16 — or rounded into a buffer of the product's own: that side in the fewest near-equal parts whose blocks hold
// at most 2²⁰ or 2¹⁸ numbers. Defined in builds without oneDNN too.
std::size_t bfloat16_block_extent(std::size_t extent, std::size_t k, bool read_in_place);

// How many oneDNN primitives the calling thread holds for its bfloat16 products: one for each transposition of A and
// B, beta, and whether alpha is 1 (any other alpha is given when the product runs), made when first needed and kept.
// 0 without oneDNN.
std::size_t bfloat16_primitives();

class Products;
// The bytes of the bfloat16 copies that bf16 products (make_products("bf16", …)) have made of their weights so far
// (a copy is made when a product first reads its weight); 0 for other products.
std::size_t bfloat16_copy_bytes(const Products& products);

}  // namespace attend
