// The int8 precision (precision.hpp): the model's weights quantized per output channel when its products are made,
// and the products whose B is one of them (named by the caller, WeightOperands), quantize op(A)'s rows
// (kernels::quantize_u8), multiply in oneDNN's u8 × s8 → s32 matmul and turn the sums back into floats
// (kernels::dequantize).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "precision/precision.hpp"
#include "precision/shapes.hpp"
#include "runtime/kernels.hpp"

#if ATTEND_ONEDNN
#include "precision/onednn.hpp"
#endif

namespace attend {

namespace {

// A weight W (rows × cols, rows = output channels) quantized per row: W[r][c] ≈ scales[r] · q[r][c], q in −L … L
// (L = int8_weight_levels());
// sums[r] = Σ_c q[r][c], for the activations' zero points (acc − z·sums).
struct QuantizedMatrix {
  std::size_t rows = 0, cols = 0;
  std::vector<std::int8_t> q;
  std::vector<float> scales;
  std::vector<std::int32_t> sums;
};

// The quantized weights of a model, one for each parameter, found by the parameter a product names.
using QuantizedWeights = std::unordered_map<const Parameter<float>*, std::shared_ptr<const QuantizedMatrix>>;

// `matrix` is of rank 2 (Int8Products leaves the others out).
std::shared_ptr<const QuantizedMatrix> quantize(const std::string& name, const Tensor<float>& matrix) {
  auto w = std::make_shared<QuantizedMatrix>();
  w->rows = matrix.shape()[0], w->cols = matrix.shape()[1];
  w->q.resize(w->rows * w->cols);
  w->scales.resize(w->rows);
  w->sums.resize(w->rows);
  for (std::size_t r = 0; r < w->rows; ++r) {
    const float* row = matrix.data() + r * w->cols;
    float largest = 0.0f;
    for (std::size_t c = 0; c < w->cols; ++c) {
      if (!std::isfinite(row[c])) {
        throw std::invalid_argument("int8: " + name + " holds " + std::to_string(row[c]) + " at (" + std::to_string(r) +
                                    ", " + std::to_string(c) + ")");
      }
      largest = std::max(largest, std::fabs(row[c]));
    }
    const auto levels = static_cast<float>(int8_weight_levels());
    const float scale = largest > 0.0f ? largest / levels : 1.0f;
    std::int32_t sum = 0;
    for (std::size_t c = 0; c < w->cols; ++c) {
      const auto v = static_cast<std::int8_t>(std::clamp(std::nearbyint(row[c] / scale), -levels, levels));
      w->q[r * w->cols + c] = v;
      sum += v;
    }
    w->scales[r] = scale, w->sums[r] = sum;
  }
  return w;
}

}  // namespace

int int8_weight_levels() {
#if ATTEND_ONEDNN
  // VNNI's VPDPBUSD adds the four u8·s8 products of a group straight into int32; without it oneDNN adds pairs of them
  // in int16 first (VPMADDUBSW), which saturates beyond 32767: 2·255·63 stays below, 2·255·127 does not
  using isa = dnnl::cpu_isa;
  static const int levels = [] {
    switch (dnnl::get_effective_cpu_isa()) {
      case isa::avx512_core_vnni:
      case isa::avx512_core_bf16:
      case isa::avx512_core_amx:
      case isa::avx2_vnni:
        return 127;
      default:
        return 63;
    }
  }();
  return levels;
#else
  return 127;
#endif
}

namespace int8 {

#if ATTEND_ONEDNN

namespace {

using dnnl::memory;

// |Σ_i q_a·q_w − z_a·Σ_i q_w| ≤ 2·255·127·k stays an int32 up to this many terms; longer sums stay float32.
constexpr std::size_t max_terms = 32768;
// The int32 sums are made this many at a time (blocks of op(A)'s rows), 4 MB a thread.
constexpr std::size_t block_elements = std::size_t{1} << 20;

struct ThreadState {
  dnnl::stream stream{onednn::cpu_engine()};
  std::unique_ptr<dnnl::matmul> product;
  std::vector<std::uint8_t> a;  // op(A)'s rows of a block, quantized
  std::vector<float> scales, row;
  std::vector<std::int32_t> zeros, acc, sums;
};

// u8 (m, k) · s8 (k, n) stored transposed (n, k, row stride ldb) → s32 (m, n): op(A) and C stored whole (strides k
// and n). Any size may be `runtime`: given when it runs.
dnnl::matmul::primitive_desc describe_product(memory::dim m, memory::dim n, memory::dim k, memory::dim ldb,
                                              const dnnl::primitive_attr& attr = {}) {
  using onednn::matrix;
  const dnnl::matmul::desc desc(matrix(false, m, k, k, memory::data_type::u8),
                                matrix(true, k, n, ldb, memory::data_type::s8),
                                matrix(false, m, n, n, memory::data_type::s32));
  return dnnl::matmul::primitive_desc(desc, attr, onednn::cpu_engine());
}

dnnl::matmul::primitive_desc describe_runtime_product() {
  using onednn::runtime;
  return describe_product(runtime, runtime, runtime, runtime);
}

dnnl::matmul make_product() { return dnnl::matmul(describe_runtime_product()); }

// The primitive of a fixed shape (onednn::MatmulCache): its m, n, k and B's row stride.
dnnl::matmul::primitive_desc describe_fixed(const onednn::MatmulShape& shape, const dnnl::primitive_attr& attr) {
  using onednn::dim;
  return describe_product(dim(shape.m), dim(shape.n), dim(shape.k), dim(shape.ldb), attr);
}

// The shape the translation model's gate products have (64 × 256 · 256 × 768), made for it: what preferred_shapes
// judges this machine by.
dnnl::matmul::primitive_desc describe_example() { return describe_product(64, 768, 256, 256); }

// Quantizes op(A)'s m rows into state; false when one cannot be.
bool quantize_rows(ThreadState& state, bool trans_a, std::size_t m, std::size_t k, const float* a, std::size_t lda) {
  state.a.resize(m * k), state.scales.resize(m), state.zeros.resize(m);
  for (std::size_t r = 0; r < m; ++r) {
    const float* row = a + r * lda;
    if (trans_a) {  // op(A)'s row is a column of A, stored (k, m)
      state.row.resize(k);
      for (std::size_t i = 0; i < k; ++i) state.row[i] = a[i * lda + r];
      row = state.row.data();
    }
    if (!kernels::quantize_u8(row, k, state.a.data() + r * k, &state.scales[r], &state.zeros[r])) return false;
  }
  return true;
}

}  // namespace

// The shapes int8 products use on this machine (onednn::preferred_shapes).
Shapes preferred_shapes() {
  static const Shapes shapes = onednn::preferred_shapes(describe_example());
  return shapes;
}

std::string kernel() {
  if (preferred_shapes() == Shapes::fixed) {
    return onednn::kernel_of(describe_example()) + " made for each shape (rows in buckets)";
  }
  return onednn::kernel_of(describe_runtime_product()) + ", one kernel for every shape";
}

// The int32 sums of op(A)'s quantized rows m0 … m0+mb (in state.a) times B into state.acc (mb × n): with the one
// runtime-dimension primitive, or (fixed ≠ nullptr) the one made for mb rounded up to its bucket, op(A)'s rows padded
// with zeros (the sums of the padding rows are never read).
void int32_sums(ThreadState& state, onednn::MatmulCache* fixed, std::size_t m0, std::size_t mb, std::size_t n,
                std::size_t k, const std::int8_t* q, std::size_t ldb) {
  using onednn::dim, onednn::matrix;
  const std::size_t rows = fixed != nullptr ? row_bucket(mb) : mb;
  if (state.a.size() < (m0 + rows) * k) state.a.resize((m0 + rows) * k, 0);  // zeros: quantize_rows shrank it first
  if (state.acc.size() < rows * n) state.acc.resize(rows * n);
  const memory a_mem(matrix(false, dim(rows), dim(k), dim(k), memory::data_type::u8), onednn::cpu_engine(),
                     state.a.data() + m0 * k);
  const memory b_mem(matrix(true, dim(k), dim(n), dim(ldb), memory::data_type::s8), onednn::cpu_engine(),
                     const_cast<std::int8_t*>(q));
  const memory c_mem(matrix(false, dim(rows), dim(n), dim(n), memory::data_type::s32), onednn::cpu_engine(),
                     state.acc.data());
  if (fixed != nullptr) {
    onednn::MatmulShape shape;
    shape.m = rows, shape.n = n, shape.k = k, shape.lda = k, shape.ldb = ldb, shape.ldc = n;
    fixed->run(shape, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
    return;
  }
  if (!state.product) state.product = std::make_unique<dnnl::matmul>(make_product());
  state.product->execute(state.stream, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
  state.stream.wait();
}

// The product when B is the transpose of `weight`, quantized as `w`, (or of a block of its rows and columns) and
// every row of op(A) can be quantized: true; otherwise false having written nothing. A bias is added as the sums are
// turned back into floats. The sums are made by the primitives of `fixed` (nullptr: the runtime-dimension one). Throws
// std::logic_error when B's numbers are not the weight's.
bool gemm(onednn::MatmulCache* fixed, const Parameter<float>& weight, const QuantizedMatrix& w, bool trans_a,
          bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a, std::size_t lda,
          const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc, const float* bias) {
  if (!trans_b || k > max_terms || ldb != w.cols) return false;
  // B = Wᵀ's block: W's rows r0 … r0+n, columns c0 … c0+k
  // where B starts among the weight's numbers, as addresses (B may lie anywhere when a caller named the wrong weight)
  const auto first = reinterpret_cast<std::uintptr_t>(b), base = reinterpret_cast<std::uintptr_t>(weight.value.data());
  const std::size_t offset = first >= base ? (first - base) / sizeof(float) : 0;
  const std::size_t r0 = offset / w.cols, c0 = offset % w.cols;
  if (first < base || weight.value.size() != w.rows * w.cols || r0 + n > w.rows || c0 + k > w.cols) {
    throw std::logic_error("int8 products: an operand named as a weight of " + std::to_string(w.rows) + " × " +
                           std::to_string(w.cols) + " numbers is not in them");
  }
  thread_local ThreadState state;
  onednn::match_blas_threads();
  const std::int8_t* q = w.q.data() + r0 * w.cols + c0;
  const std::int32_t* sums = w.sums.data() + r0;
  if (k != w.cols) {  // a block of columns: its own sums
    state.sums.assign(n, 0);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < k; ++i) state.sums[j] += q[j * w.cols + i];
    sums = state.sums.data();
  }
  // every row quantized before C is written: a row that cannot be leaves the whole product to OpenBLAS
  if (!quantize_rows(state, trans_a, m, k, a, lda)) return false;
  const std::size_t rows = std::max<std::size_t>(1, block_elements / n);
  for (std::size_t m0 = 0; m0 < m; m0 += rows) {
    const std::size_t mb = std::min(m, m0 + rows) - m0;
    int32_sums(state, fixed, m0, mb, n, k, q, w.cols);
    for (std::size_t r = 0; r < mb; ++r) {
      kernels::dequantize(state.acc.data() + r * n, sums, w.scales.data() + r0, alpha * state.scales[m0 + r],
                          state.zeros[m0 + r], beta, bias, c + (m0 + r) * ldc, n);
    }
  }
  return true;
}

#endif

}  // namespace int8

namespace {

class Int8Products final : public Products, public KeepsKernels {
 public:
  Int8Products(const Matrices& weights, Shapes shapes, std::size_t capacity) {
    for (const auto& [name, weight] : weights) {
      // a convolution's kernels (never a product's Wᵀ), or a weight shared by two layers, quantized once
      if (weight->value.rank() != 2 || matrices_.count(weight) != 0) continue;
      std::shared_ptr<const QuantizedMatrix> w = quantize(name, weight->value);
      if (w->q.empty()) continue;
      matrices_.emplace(weight, w);
      ++count_;
      bytes_ += w->q.size() + w->rows * (sizeof(float) + sizeof(std::int32_t));
    }
#if ATTEND_ONEDNN
    if (shapes == Shapes::fixed) fixed_ = std::make_shared<onednn::MatmulCache>(int8::describe_fixed, capacity);
#else
    (void)shapes, (void)capacity;
#endif
  }
  std::string name() const override { return "int8"; }
  bool gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
            std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc, const float* bias,
            const WeightOperands& weights) const override {
    const auto found = weights.b != nullptr ? matrices_.find(weights.b) : matrices_.end();
    if (found == matrices_.end()) return false;  // B is no weight of this model's: float32's product
#if ATTEND_ONEDNN
    return int8::gemm(fixed_.get(), *weights.b, *found->second, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta,
                      c, ldc, bias);
#else
    (void)trans_a, (void)trans_b, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb;
    (void)beta, (void)c, (void)ldc, (void)bias;
    return false;  // unreachable: int8 is unavailable without oneDNN
#endif
  }
  std::string kept() const override {
    return std::to_string(count_) + (count_ == 1 ? " weight matrix" : " weight matrices") +
           " quantized per output channel (" + std::to_string((bytes_ + 500000) / 1000000) + " MB)";
  }
  std::string report() const override { return kernel_report(); }

 private:
  QuantizedWeights matrices_;          // filled when made, then only read
  std::size_t count_ = 0, bytes_ = 0;  // matrices quantized; bytes of their copies, scales and sums included
};

std::string int8_unavailable() {
#if ATTEND_ONEDNN
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  if (isa == dnnl::cpu_isa::sse41 || isa == dnnl::cpu_isa::avx) {
    return "oneDNN's int8 products run on AVX2 or later, which this CPU lacks (or ONEDNN_MAX_CPU_ISA forbids); with "
           "SSE4.1 alone they take longer than float32's";
  }
  return "";
#else
  return "this attend was built without oneDNN, which its int8 products need (Debian: apt-get install libdnnl-dev, "
         "then configure again; meson option onednn)";
#endif
}

std::unique_ptr<Products> make_int8(const Matrices& weights) {
#if ATTEND_ONEDNN
  return std::make_unique<Int8Products>(weights, int8::preferred_shapes(), default_kernel_capacity);
#else
  return std::make_unique<Int8Products>(weights, Shapes::runtime, default_kernel_capacity);
#endif
}

std::string int8_kernel() {
#if ATTEND_ONEDNN
  return int8::kernel() + " (weights in ±" + std::to_string(int8_weight_levels()) + ")";
#else
  return "";
#endif
}

}  // namespace

std::unique_ptr<Products> make_int8_products(const Matrices& weights, Shapes shapes, std::size_t capacity) {
  if (const std::string why = int8_unavailable(); !why.empty()) throw std::runtime_error("precision int8: " + why);
  return std::make_unique<Int8Products>(weights, shapes, capacity);
}

PrecisionBackend int8_precision() {
  return {"int8",
          "for decoding: activations quantized per row to u8, weights per output channel to s8, int32 sums; "
          "fastest with VNNI",
          false,
          int8_unavailable,
          make_int8,
          int8_kernel};
}

}  // namespace attend
