// The bf16 precision (precision.hpp): oneDNN's bfloat16 matmul, each operand rounded to bfloat16 — a weight read from
// the copy its products keep, rounded when first read and again where the optimizer writes it — float32 sums.
#include "precision/bf16.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "precision/bfloat16.hpp"
#include "precision/precision.hpp"
#include "precision/shapes.hpp"
#include "runtime/kernels.hpp"

#if ATTEND_ONEDNN
#include <cstring>
#include <dnnl.hpp>
#include <map>
#include <tuple>

#include "precision/onednn.hpp"
#endif

namespace attend {

namespace {

// A weight's bfloat16 copy: made when a product first reads it, rounded again where Products::updated says.
struct Copy {
  Copy(std::string name, const Parameter<float>& weight)
      : name(std::move(name)), weight(weight), count(weight.value.size()) {}
  const std::string name;
  const Parameter<float>& weight;
  const std::size_t count;            // the weight's numbers, when the products were made
  std::vector<std::uint16_t> values;  // empty until first read
  std::atomic<bool> made{false};      // values hold the weight's numbers
  std::mutex mutex;                   // held while the copy is made

  // The copy of the weight's numbers [first, last), made now if it is not yet; any thread. Throws std::logic_error
  // when they are not the weight's: a caller named the wrong weight, or the weight changed shape.
  const std::uint16_t* at(const float* first, const float* last) {
    const float* source = weight.value.data();
    if (weight.value.size() != count || first < source || last > source + count) {
      throw std::logic_error("bf16 products: an operand named as weight " + name + " (" + std::to_string(count) +
                             " numbers when the products were made, " + std::to_string(weight.value.size()) +
                             " now) is not in its numbers");
    }
    if (!made.load(std::memory_order_acquire)) {
      const std::lock_guard lock(mutex);
      if (!made.load(std::memory_order_relaxed)) {
        values.resize(count);
        bf16::from_float(source, values.data(), count);
        made.store(true, std::memory_order_release);
      }
    }
    return values.data() + (first - source);
  }
};

// The copies of a model's weights, one for each parameter, found by the parameter a product names.
using Copies = std::unordered_map<const Parameter<float>*, std::unique_ptr<Copy>>;

// The packed operands are bounded: a product is cut into blocks of at most sum_block(k) terms a sum (k ≤ 1024 stays
// whole) and tile_elements / sum_block(k) rows of C and columns, so that each bfloat16 copy holds at most
// tile_elements numbers (512 KiB); the blocks of a sum add into C in order. Without the cut, the output layer's weight
// and gradient copies (17 MB a thread) raised the translation run's peak memory above float32's. An operand read where
// it lies (a registered copy, or one given in bfloat16) is packed by oneDNN alone, into buffers of its own for each
// product, so its side is cut at copy_tile_elements / sum_block(k) instead: fewer, larger products — each 63-row block
// of the output layer's logits in 6 products instead of 21, its dx without a 128-column remainder, its dW's 8,207 rows
// in 2 instead of 8 — for 1–8 MiB more peak (docs/performance.md). Each side is cut into near-equal parts, so that no
// thin product is left over (the logits' last was 27 columns).
constexpr std::size_t tile_elements = std::size_t{1} << 18;
constexpr std::size_t copy_tile_elements = std::size_t{1} << 20;

std::size_t sum_block(std::size_t k) { return k <= 1024 ? k : 512; }

}  // namespace

std::size_t bfloat16_block_extent(std::size_t extent, std::size_t k, bool read_in_place) {
  const std::size_t largest = (read_in_place ? copy_tile_elements : tile_elements) / sum_block(k);
  const std::size_t parts = (extent + largest - 1) / largest;  // extent ≥ 1, so parts ≥ 1
  return (extent + parts - 1) / parts;
}

namespace {

#if ATTEND_ONEDNN

using dnnl::memory;
using onednn::cpu_engine;
using onednn::dim;
using onednn::matrix;
using onednn::runtime;

// One primitive for every product of a transposition, a beta and whether alpha is 1: its sizes and row strides are
// given when it runs (oneDNN's runtime dimensions), and so is an alpha other than 1 (a runtime output scale; the loss's
// dy/N, which linear_cross_entropy passes, changes with every batch). Measured on the translation benchmark's 170
// shapes (Zen 5, one thread), that runs them in 0.89 of the time of primitives made for each shape (oneDNN's gemm:jit
// kernel against its brgemm one), and it keeps a run from making a primitive — about a millisecond and 0.4 MB each —
// for every new sentence length or batch size.
struct ProductKey {
  bool trans_a, trans_b;
  bool scaled;  // alpha ≠ 1, given when the product runs
  float beta;
  bool operator<(const ProductKey& o) const {  // by beta's bits: a NaN beta still orders
    return std::make_tuple(trans_a, trans_b, scaled, bits(beta)) <
           std::make_tuple(o.trans_a, o.trans_b, o.scaled, bits(o.beta));
  }
  static std::uint32_t bits(float x) {
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
  }
};

// The primitive of a product of `key`'s kind, sizes and row strides given (each `runtime` or a number), with `attr`'s
// attributes besides its own.
dnnl::matmul::primitive_desc describe_product(const ProductKey& key, memory::dim m, memory::dim n, memory::dim k,
                                              memory::dim lda, memory::dim ldb, memory::dim ldc,
                                              dnnl::primitive_attr attr = {}) {
  if (key.scaled) attr.set_output_scales(0, {DNNL_RUNTIME_F32_VAL});
  if (key.beta != 0.0f) {
    dnnl::post_ops sum;
    sum.append_sum(key.beta);
    attr.set_post_ops(sum);
  }
  const auto bf16 = memory::data_type::bf16;
  const dnnl::matmul::desc desc(matrix(key.trans_a, m, k, lda, bf16), matrix(key.trans_b, k, n, ldb, bf16),
                                matrix(false, m, n, ldc, memory::data_type::f32));
  return dnnl::matmul::primitive_desc(desc, attr, cpu_engine());
}

dnnl::matmul::primitive_desc describe_product(const ProductKey& key) {
  return describe_product(key, runtime, runtime, runtime, runtime, runtime, runtime);
}

// The primitive of a fixed shape (onednn::MatmulCache).
dnnl::matmul::primitive_desc describe_fixed(const onednn::MatmulShape& shape, const dnnl::primitive_attr& attr) {
  float beta;
  std::memcpy(&beta, &shape.beta_bits, sizeof beta);
  return describe_product(ProductKey{shape.trans_a, shape.trans_b, shape.alpha_scaled, beta}, dim(shape.m),
                          dim(shape.n), dim(shape.k), dim(shape.lda), dim(shape.ldb), dim(shape.ldc), attr);
}

// The shapes bf16 products use on this machine (onednn::preferred_shapes), judged by the translation model's gate
// product (64 × 256 · 256 × 768, B a weight's transpose) made for its shape.
Shapes preferred_shapes() {
  static const Shapes shapes =
      onednn::preferred_shapes(describe_product(ProductKey{false, true, false, 0.0f}, 64, 768, 256, 256, 256, 768));
  return shapes;
}

dnnl::matmul make_product(const ProductKey& key) { return dnnl::matmul(describe_product(key)); }

// Copies the stored rows × cols matrix (row stride ld) into `out` packed, rounded to bfloat16.
void pack(const float* x, std::size_t rows, std::size_t cols, std::size_t ld, std::vector<std::uint16_t>& out) {
  out.resize(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) bf16::from_float(x + r * ld, out.data() + r * cols, cols);
}

struct ThreadState {
  std::map<ProductKey, dnnl::matmul> products;
  dnnl::stream stream{cpu_engine()};
  std::vector<std::uint16_t> a, b;  // the operands, packed and rounded
  std::vector<float> c;             // C's rows of a fixed-shape product whose rows were rounded up to their bucket
};

// An operand of a product, op(X): X stored with row stride ld, and the numbers of its bfloat16 copy at the place of x —
// a weight's copy, or the operand itself when it comes in bfloat16 — (nullptr when X lies in no weight: its blocks are
// rounded as they are read).
struct Operand {
  const float* x;
  std::size_t ld;
  bool trans;
  const std::uint16_t* copy;

  // An operand already in bfloat16 (row stride ld as stored): read where it lies, as a registered copy is.
  Operand(const std::uint16_t* rounded, std::size_t ld, bool trans) : x(nullptr), ld(ld), trans(trans), copy(rounded) {}
  // The operand whose op(X) is rows × cols, read from the copy of `weight` (one of `copies`; nullptr: no weight).
  Operand(const Copies& copies, const Parameter<float>* weight, const float* x, std::size_t ld, bool trans,
          std::size_t rows, std::size_t cols)
      : x(x), ld(ld), trans(trans), copy(nullptr) {
    if (weight == nullptr) return;
    const auto found = copies.find(weight);
    if (found == copies.end()) return;  // another model's weight, or one with no copy: rounded as it is read
    const std::size_t stored_rows = trans ? cols : rows, stored_cols = trans ? rows : cols;
    copy = found->second->at(x, x + (stored_rows - 1) * ld + stored_cols);
  }
  // op(X)'s block at rows r0 …, columns c0 … (rows × cols) in bfloat16: in the copy, or packed into `buffer`; sets
  // block_ld to its row stride as stored.
  const std::uint16_t* block(std::size_t r0, std::size_t c0, std::size_t rows, std::size_t cols,
                             std::vector<std::uint16_t>& buffer, std::size_t& block_ld) const {
    const std::size_t offset = trans ? c0 * ld + r0 : r0 * ld + c0;
    if (copy != nullptr) {
      block_ld = ld;
      return copy + offset;
    }
    pack(x + offset, trans ? cols : rows, trans ? rows : cols, ld, buffer);
    block_ld = trans ? rows : cols;
    return buffer.data();
  }
  // The same block as op(X)'s padded_rows × padded_cols (≥ rows × cols) with zeros beyond it, packed into `buffer`
  // (stored whole: block_ld its stored width).
  const std::uint16_t* padded_block(std::size_t r0, std::size_t c0, std::size_t rows, std::size_t cols,
                                    std::size_t padded_rows, std::size_t padded_cols,
                                    std::vector<std::uint16_t>& buffer, std::size_t& block_ld) const {
    const std::size_t offset = trans ? c0 * ld + r0 : r0 * ld + c0;
    const std::size_t stored_rows = trans ? cols : rows, stored_cols = trans ? rows : cols;
    block_ld = trans ? padded_rows : padded_cols;
    buffer.assign((trans ? padded_cols : padded_rows) * block_ld, 0);  // bfloat16's 0 is all bits 0
    for (std::size_t r = 0; r < stored_rows; ++r) {
      std::uint16_t* to = buffer.data() + r * block_ld;
      if (copy != nullptr) {
        std::copy(copy + offset + r * ld, copy + offset + r * ld + stored_cols, to);
      } else {
        bf16::from_float(x + offset + r * ld, to, stored_cols);
      }
    }
    return buffer.data();
  }
};

// C[m0:m1, n0:n1] (+)= alpha · op(A)[m0:m1, k0:k1] op(B)[k0:k1, n0:n1], from bfloat16 blocks a and b (row strides lda
// and ldb as stored).
void block_product(ThreadState& state, bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k,
                   float alpha, float beta, const std::uint16_t* a, std::size_t lda, const std::uint16_t* b,
                   std::size_t ldb, float* c, std::size_t ldc) {
  const ProductKey key{trans_a, trans_b, alpha != 1.0f, beta};
  auto found = state.products.find(key);
  if (found == state.products.end()) found = state.products.emplace(key, make_product(key)).first;
  const auto bf16 = memory::data_type::bf16;
  const memory a_mem(matrix(trans_a, dim(m), dim(k), dim(lda), bf16), cpu_engine(), const_cast<std::uint16_t*>(a));
  const memory b_mem(matrix(trans_b, dim(k), dim(n), dim(ldb), bf16), cpu_engine(), const_cast<std::uint16_t*>(b));
  const memory c_mem(matrix(false, dim(m), dim(n), dim(ldc), memory::data_type::f32), cpu_engine(), c);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}};
  if (key.scaled) {
    args.emplace(DNNL_ARG_ATTR_OUTPUT_SCALES,
                 memory({{1}, memory::data_type::f32, memory::format_tag::x}, cpu_engine(), &alpha));
  }
  found->second.execute(state.stream, args);
  state.stream.wait();
}

// The calling thread's primitives, stream and packing buffers.
ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

// C = alpha · op_a · op_b + beta · C, op_a m × k, op_b k × n, cut into blocks (above).
void bfloat16_blocks(const Operand& op_a, const Operand& op_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
                     float beta, float* c, std::size_t ldc) {
  ThreadState& state = thread_state();
  onednn::match_blas_threads();
  const bool trans_a = op_a.trans, trans_b = op_b.trans;
  const std::size_t tile_k = sum_block(k);
  const std::size_t tile_m = bfloat16_block_extent(m, k, op_a.copy != nullptr);
  const std::size_t tile_n = bfloat16_block_extent(n, k, op_b.copy != nullptr);
  for (std::size_t k0 = 0; k0 < k; k0 += tile_k) {
    const std::size_t kb = std::min(k, k0 + tile_k) - k0;
    const float block_beta = k0 == 0 ? beta : 1.0f;  // the later blocks of a sum add to the first
    for (std::size_t m0 = 0; m0 < m; m0 += tile_m) {
      const std::size_t mb = std::min(m, m0 + tile_m) - m0;
      std::size_t lda_block = 0, ldb_block = 0;
      const std::uint16_t* a_block = op_a.block(m0, k0, mb, kb, state.a, lda_block);  // once for all the columns
      for (std::size_t n0 = 0; n0 < n; n0 += tile_n) {
        const std::size_t nb = std::min(n, n0 + tile_n) - n0;
        const std::uint16_t* b_block = op_b.block(k0, n0, kb, nb, state.b, ldb_block);
        block_product(state, trans_a, trans_b, mb, nb, kb, alpha, block_beta, a_block, lda_block, b_block, ldb_block,
                      c + m0 * ldc + n0, ldc);
      }
    }
  }
}

// C[:mb, :nb] (+)= alpha · a · b by the primitive made for mb rounded up to its bucket (mp rows; a holds them, zeros
// beyond mb), kp terms and B's columns, as `shape` says (its m, n, k and A's and B's strides): into C where mp = mb,
// else through a buffer of mp rows (C's rows copied in first when beta ≠ 0, for the sum).
void fixed_block_product(onednn::MatmulCache& cache, onednn::MatmulShape shape, std::size_t mb, float alpha,
                         const std::uint16_t* a, const std::uint16_t* b, float* c, std::size_t ldc) {
  ThreadState& state = thread_state();
  const std::size_t mp = shape.m, nb = shape.n;
  float* dst = c;
  shape.ldc = ldc;
  if (mp != mb) {
    state.c.assign(mp * nb, 0.0f);
    if (shape.beta_bits != 0) {
      for (std::size_t r = 0; r < mb; ++r) std::copy(c + r * ldc, c + r * ldc + nb, state.c.data() + r * nb);
    }
    dst = state.c.data(), shape.ldc = nb;
  }
  const auto bf16 = memory::data_type::bf16;
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, memory(matrix(shape.trans_a, dim(mp), dim(shape.k), dim(shape.lda), bf16), cpu_engine(),
                            const_cast<std::uint16_t*>(a))},
      {DNNL_ARG_WEIGHTS, memory(matrix(shape.trans_b, dim(shape.k), dim(nb), dim(shape.ldb), bf16), cpu_engine(),
                                const_cast<std::uint16_t*>(b))},
      {DNNL_ARG_DST,
       memory(matrix(false, dim(mp), dim(nb), dim(shape.ldc), memory::data_type::f32), cpu_engine(), dst)}};
  if (shape.alpha_scaled) {
    args.emplace(DNNL_ARG_ATTR_OUTPUT_SCALES,
                 memory({{1}, memory::data_type::f32, memory::format_tag::x}, cpu_engine(), &alpha));
  }
  cache.run(shape, std::move(args));
  if (mp != mb) {
    for (std::size_t r = 0; r < mb; ++r) std::copy(dst + r * nb, dst + r * nb + nb, c + r * ldc);
  }
}

// C = alpha · op_a · op_b + beta · C as bfloat16_blocks cuts it, each block by the primitive made for its shape
// (`cache`): its rows and its terms rounded up to their buckets (row_bucket), operands padded with zeros there.
void fixed_blocks(onednn::MatmulCache& cache, const Operand& op_a, const Operand& op_b, std::size_t m, std::size_t n,
                  std::size_t k, float alpha, float beta, float* c, std::size_t ldc) {
  ThreadState& state = thread_state();
  onednn::match_blas_threads();
  const std::size_t tile_k = sum_block(k);
  const std::size_t tile_m = bfloat16_block_extent(m, k, op_a.copy != nullptr);
  const std::size_t tile_n = bfloat16_block_extent(n, k, op_b.copy != nullptr);
  onednn::MatmulShape shape;
  shape.trans_a = op_a.trans, shape.trans_b = op_b.trans, shape.alpha_scaled = alpha != 1.0f;
  for (std::size_t k0 = 0; k0 < k; k0 += tile_k) {
    const std::size_t kb = std::min(k, k0 + tile_k) - k0, kp = row_bucket(kb);
    shape.beta_bits = ProductKey::bits(k0 == 0 ? beta : 1.0f), shape.k = kp;
    for (std::size_t m0 = 0; m0 < m; m0 += tile_m) {
      const std::size_t mb = std::min(m, m0 + tile_m) - m0, mp = row_bucket(mb);
      const std::uint16_t* a_block = mp == mb && kp == kb
                                         ? op_a.block(m0, k0, mb, kb, state.a, shape.lda)
                                         : op_a.padded_block(m0, k0, mb, kb, mp, kp, state.a, shape.lda);
      shape.m = mp;
      for (std::size_t n0 = 0; n0 < n; n0 += tile_n) {
        shape.n = std::min(n, n0 + tile_n) - n0;
        const std::uint16_t* b_block = kp == kb
                                           ? op_b.block(k0, n0, kb, shape.n, state.b, shape.ldb)
                                           : op_b.padded_block(k0, n0, kb, shape.n, kp, shape.n, state.b, shape.ldb);
        fixed_block_product(cache, shape, mb, alpha, a_block, b_block, c + m0 * ldc + n0, ldc);
      }
    }
  }
}

#endif

// Rounds a copy's numbers again: past the cache when the copies are too large to be found in it at the next step's
// products (kernels::streaming_bytes), whose lines a plain store would first read in.
void round_copy(const float* x, std::uint16_t* y, std::size_t n, bool stream) {
  if (stream) {
    bf16::from_float_streamed(x, y, n);
  } else {
    bf16::from_float(x, y, n);
  }
}

class BFloat16Products final : public Products, public KeepsKernels {
 public:
  BFloat16Products(const Matrices& weights, Shapes shapes, std::size_t capacity) {
    for (const auto& [name, weight] : weights) {
      if (weight->value.size() == 0) continue;  // no product reads it
      // a weight shared by two layers: once
      if (copies_.try_emplace(weight, std::make_unique<Copy>(name, *weight)).second) numbers_ += weight->value.size();
    }
#if ATTEND_ONEDNN
    if (shapes == Shapes::fixed) fixed_ = std::make_shared<onednn::MatmulCache>(describe_fixed, capacity);
#else
    (void)shapes, (void)capacity;
#endif
  }
  std::string report() const override { return kernel_report(); }
  std::string name() const override { return "bf16"; }
  bool rounds_to_bfloat16() const override { return true; }
  bool copies_weights() const override { return true; }

  // (A product with a bias is declined: it is asked again without, once the bias is in C.)
  bool gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
            std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc, const float* bias,
            const WeightOperands& weights) const override {
    if (bias != nullptr) return false;
#if ATTEND_ONEDNN
    blocks(Operand(copies_, weights.a, a, lda, trans_a, m, k), Operand(copies_, weights.b, b, ldb, trans_b, k, n), m, n,
           k, alpha, beta, c, ldc);
    return true;
#else
    (void)trans_a, (void)trans_b, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb;
    (void)beta, (void)c, (void)ldc, (void)weights;
    return false;  // unreachable: bf16 is unavailable without oneDNN
#endif
  }

  void gemm_bfloat16_a(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
                       const std::uint16_t* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
                       std::size_t ldc, const Parameter<float>* b_weight) const override {
    if (m == 0 || n == 0 || k == 0) return;
#if ATTEND_ONEDNN
    blocks(Operand(a, lda, trans_a), Operand(copies_, b_weight, b, ldb, trans_b, k, n), m, n, k, alpha, beta, c, ldc);
#else
    (void)trans_a, (void)trans_b, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
    (void)b_weight;
#endif
  }

  // Rounds the copy again where its weight changed, if it has been made (one not made yet is made when first read).
  void updated(const Parameter<float>& weight, std::size_t first, std::size_t last) const override {
    const auto found = copies_.find(&weight);
    if (first >= last || found == copies_.end()) return;
    Copy& copy = *found->second;
    if (!copy.made.load(std::memory_order_acquire)) return;
    if (last > copy.count || weight.value.size() != copy.count) {
      throw std::logic_error("bf16 products: numbers " + std::to_string(first) + " to " + std::to_string(last) +
                             " of weight " + copy.name + " updated, which had " + std::to_string(copy.count) +
                             " when the products were made and has " + std::to_string(weight.value.size()) + " now");
    }
    round_copy(weight.value.data() + first, copy.values.data() + first, last - first,
               numbers_ * sizeof(std::uint16_t) > kernels::streaming_bytes);
  }

  // The bytes of the copies made so far.
  std::size_t made_bytes() const {
    std::size_t total = 0;
    for (const auto& entry : copies_) {
      if (entry.second->made.load(std::memory_order_acquire))
        total += entry.second->values.size() * sizeof(std::uint16_t);
    }
    return total;
  }

 private:
#if ATTEND_ONEDNN
  // The product in blocks, by the primitives of this machine's shapes.
  void blocks(const Operand& op_a, const Operand& op_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
              float beta, float* c, std::size_t ldc) const {
    if (fixed_) {
      fixed_blocks(*fixed_, op_a, op_b, m, n, k, alpha, beta, c, ldc);
    } else {
      bfloat16_blocks(op_a, op_b, m, n, k, alpha, beta, c, ldc);
    }
  }
#endif
  Copies copies_;            // filled when made, then only read
  std::size_t numbers_ = 0;  // of all the copies, when made
};

std::string bfloat16_unavailable() {
#if ATTEND_ONEDNN
  if (!bf16::cpu_has_instructions()) {
    return "this CPU has no AVX512-BF16 instructions (see /proc/cpuinfo: avx512_bf16), and oneDNN's emulation of "
           "them takes 2.5 times float32's time";
  }
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  if (isa != dnnl::cpu_isa::avx512_core_bf16 && isa != dnnl::cpu_isa::avx512_core_amx) {
    const char* limit = std::getenv("ONEDNN_MAX_CPU_ISA");
    return std::string("oneDNN may not use this CPU's AVX512-BF16 instructions (ONEDNN_MAX_CPU_ISA=") +
           (limit ? limit : "") + ")";
  }
  return "";
#else
  return "this attend was built without oneDNN, which its bfloat16 products need (Debian: apt-get install "
         "libdnnl-dev, then configure again; meson option onednn)";
#endif
}

std::unique_ptr<Products> make_bfloat16(const Matrices& weights) {
#if ATTEND_ONEDNN
  return std::make_unique<BFloat16Products>(weights, preferred_shapes(), default_kernel_capacity);
#else
  return std::make_unique<BFloat16Products>(weights, Shapes::runtime, default_kernel_capacity);
#endif
}

// The kernel of a forward product (A·Bᵀ, β = 0, α = 1).
std::string bfloat16_kernel() {
#if ATTEND_ONEDNN
  if (preferred_shapes() == Shapes::fixed) {
    return onednn::kernel_of(describe_product(ProductKey{false, true, false, 0.0f}, 64, 768, 256, 256, 256, 768)) +
           " made for each shape (rows and sums in buckets)";
  }
  return onednn::kernel_of(describe_product(ProductKey{false, true, false, 0.0f})) + ", one kernel for every shape";
#else
  return "";
#endif
}

}  // namespace

std::size_t bfloat16_primitives() {
#if ATTEND_ONEDNN
  return thread_state().products.size();
#else
  return 0;
#endif
}

std::size_t bfloat16_copy_bytes(const Products& products) {
  const auto* bf16 = dynamic_cast<const BFloat16Products*>(&products);
  return bf16 != nullptr ? bf16->made_bytes() : 0;
}

std::unique_ptr<Products> make_bf16_products(const Matrices& weights, Shapes shapes, std::size_t capacity) {
  if (const std::string why = bfloat16_unavailable(); !why.empty()) throw std::runtime_error("precision bf16: " + why);
  return std::make_unique<BFloat16Products>(weights, shapes, capacity);
}

PrecisionBackend bf16_precision() {
  return {"bf16",        "bfloat16 operands, float32 sums; a CPU with AVX512-BF16",
          true,          bfloat16_unavailable,
          make_bfloat16, bfloat16_kernel};
}

}  // namespace attend
