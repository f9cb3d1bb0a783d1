// The precision of the float products (precision.hpp): OpenBLAS's sgemm, or oneDNN's bfloat16 matmul installed as
// blas_gemm's backend. oneDNN's part is compiled only when Meson found it (ATTEND_ONEDNN).
#include "fast/precision.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "autograd/blas.hpp"
#include "fast/bfloat16.hpp"
#include "fast/int8.hpp"
#include "fast/kernels.hpp"
#include "fast/weight_registry.hpp"

#if ATTEND_ONEDNN
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <dnnl.hpp>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "fast/onednn.hpp"
#endif

namespace attend {

// A registered tensor's bfloat16 copy (BFloat16Weights): made when a product first reads it, rounded again by
// refresh().
struct BFloat16Weights::Copy {
  const float* source = nullptr;
  std::size_t count = 0;
  std::vector<std::uint16_t> values;  // empty until first read
  std::atomic<bool> fresh{false};     // values hold the source's numbers as they are now
  std::atomic<bool> read{false};      // a product has read the copy: refresh() rounds it again at once
  std::mutex mutex;                   // held while the copy is made

  std::size_t size() const { return count; }
  // The copy, made now if it is not fresh; any thread.
  const std::uint16_t* current() {
    read.store(true, std::memory_order_relaxed);
    if (!fresh.load(std::memory_order_acquire)) {
      const std::lock_guard lock(mutex);
      if (!fresh.load(std::memory_order_relaxed)) {
        values.resize(count);
        bf16::from_float(source, values.data(), count);
        fresh.store(true, std::memory_order_release);
      }
    }
    return values.data();
  }
};

namespace {

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

WeightRegistry<BFloat16Weights::Copy>& bfloat16_registry() {
  static WeightRegistry<BFloat16Weights::Copy> r;
  return r;
}

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

dnnl::matmul make_product(const ProductKey& key) {
  dnnl::primitive_attr attr;
  if (key.scaled) attr.set_output_scales(0, {DNNL_RUNTIME_F32_VAL});
  if (key.beta != 0.0f) {
    dnnl::post_ops sum;
    sum.append_sum(key.beta);
    attr.set_post_ops(sum);
  }
  const auto bf16 = memory::data_type::bf16;
  const dnnl::matmul::desc desc(matrix(key.trans_a, runtime, runtime, runtime, bf16),
                                matrix(key.trans_b, runtime, runtime, runtime, bf16),
                                matrix(false, runtime, runtime, runtime, memory::data_type::f32));
  return dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, cpu_engine()));
}

// Copies the stored rows × cols matrix (row stride ld) into `out` packed, rounded to bfloat16.
void pack(const float* x, std::size_t rows, std::size_t cols, std::size_t ld, std::vector<std::uint16_t>& out) {
  out.resize(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) bf16::from_float(x + r * ld, out.data() + r * cols, cols);
}

struct ThreadState {
  std::map<ProductKey, dnnl::matmul> products;
  dnnl::stream stream{cpu_engine()};
  std::vector<std::uint16_t> a, b;  // the operands, packed and rounded
};

// An operand of a product, op(X): X stored with row stride ld, and the numbers of its bfloat16 copy at the place of x —
// a registered tensor's copy, or the operand itself when it comes in bfloat16 — (nullptr when X lies in no registered
// tensor: its blocks are rounded as they are read).
struct Operand {
  const float* x;
  std::size_t ld;
  bool trans;
  const std::uint16_t* copy;

  // An operand already in bfloat16 (row stride ld as stored): read where it lies, as a registered copy is.
  Operand(const std::uint16_t* rounded, std::size_t ld, bool trans) : x(nullptr), ld(ld), trans(trans), copy(rounded) {}
  // The operand whose op(X) is rows × cols.
  Operand(const float* x, std::size_t ld, bool trans, std::size_t rows, std::size_t cols)
      : x(x), ld(ld), trans(trans), copy(nullptr) {
    const std::size_t stored_rows = trans ? cols : rows, stored_cols = trans ? rows : cols;
    const auto [base, found] = bfloat16_registry().find(x, x + (stored_rows - 1) * ld + stored_cols);
    if (found != nullptr) copy = found->current() + (x - base);
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

// (A product with a bias is declined: blas_linear then puts the bias in C and asks again.)
bool bfloat16_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                   std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc,
                   const float* bias) {
  if (bias != nullptr) return false;
  bfloat16_blocks(Operand(a, lda, trans_a, m, k), Operand(b, ldb, trans_b, k, n), m, n, k, alpha, beta, c, ldc);
  return true;
}

#endif

}  // namespace

#if ATTEND_ONEDNN
namespace onednn {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The setting belongs to the OpenMP runtime Debian's oneDNN is built with (GCC's libgomp), found by name at run time:
// compiling attend with -fopenmp would tie it to the compiler's own runtime (clang's is another library).
void match_blas_threads() {
  using SetThreads = void (*)(int);
  static const auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  thread_local int threads = -1;  // as last set for this thread
  if (const int now = blas_threads(); now != threads && set != nullptr) set(threads = now);
}

memory::desc matrix(bool transposed, memory::dim rows, memory::dim cols, memory::dim ld, memory::data_type type) {
  return memory::desc({rows, cols}, type, transposed ? memory::dims{1, ld} : memory::dims{ld, 1});
}

}  // namespace onednn
#endif

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::bfloat16:
      return "bf16";
    case Precision::int8:
      return "int8";
    default:
      return "float32";
  }
}

std::optional<Precision> parse_precision(const std::string& name) {
  for (Precision p : {Precision::float32, Precision::bfloat16, Precision::int8}) {
    if (name == precision_name(p)) return p;
  }
  return std::nullopt;
}

std::string precision_unavailable(Precision precision) {
  if (precision == Precision::float32) return "";
#if ATTEND_ONEDNN
  if (precision == Precision::bfloat16 && !bf16::cpu_has_instructions()) {
    return "this CPU has no AVX512-BF16 instructions (see /proc/cpuinfo: avx512_bf16), and oneDNN's emulation of "
           "them takes 2.5 times float32's time";
  }
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  if (precision == Precision::bfloat16 && isa != dnnl::cpu_isa::avx512_core_bf16 &&
      isa != dnnl::cpu_isa::avx512_core_amx) {
    const char* limit = std::getenv("ONEDNN_MAX_CPU_ISA");
    return std::string("oneDNN may not use this CPU's AVX512-BF16 instructions (ONEDNN_MAX_CPU_ISA=") +
           (limit ? limit : "") + ")";
  }
  if (precision == Precision::int8 && (isa == dnnl::cpu_isa::sse41 || isa == dnnl::cpu_isa::avx)) {
    return "oneDNN's int8 products run on AVX2 or later, which this CPU lacks (or ONEDNN_MAX_CPU_ISA forbids); with "
           "SSE4.1 alone they take longer than float32's";
  }
  return "";
#else
  return std::string("this attend was built without oneDNN, which its ") +
         (precision == Precision::int8 ? "int8" : "bfloat16") +
         " products need (Debian: apt-get install libdnnl-dev, then configure again; meson option onednn)";
#endif
}

void use_precision(Precision precision) {
  if (const std::string why = precision_unavailable(precision); !why.empty()) {
    throw std::runtime_error(std::string("precision ") + precision_name(precision) + ": " + why);
  }
#if ATTEND_ONEDNN
  set_gemm_backend(precision == Precision::bfloat16 ? bfloat16_gemm
                   : precision == Precision::int8   ? int8::gemm
                                                    : nullptr);
#else
  set_gemm_backend(nullptr);
#endif
}

// The installed backend is the precision: nothing else to keep in step with it.
Precision current_precision() {
#if ATTEND_ONEDNN
  if (gemm_backend() == bfloat16_gemm) return Precision::bfloat16;
  if (gemm_backend() == int8::gemm) return Precision::int8;
#endif
  return Precision::float32;
}

void gemm_with_bfloat16_a(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
                          const std::uint16_t* a, std::size_t lda, const float* b, std::size_t ldb, float beta,
                          float* c, std::size_t ldc) {
  if (current_precision() != Precision::bfloat16) {
    throw std::logic_error("gemm_with_bfloat16_a: an operand in bfloat16 while the products are " +
                           std::string(precision_name(current_precision())));
  }
#if ATTEND_ONEDNN
  if (m == 0 || n == 0 || k == 0) return;
  bfloat16_blocks(Operand(a, lda, trans_a), Operand(b, ldb, trans_b, k, n), m, n, k, alpha, beta, c, ldc);
#else
  (void)trans_a, (void)trans_b, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb;
  (void)beta, (void)c, (void)ldc;  // unreachable: bfloat16 cannot be in use without oneDNN
#endif
}

std::size_t bfloat16_primitives() {
#if ATTEND_ONEDNN
  return thread_state().products.size();
#else
  return 0;
#endif
}

BFloat16Weights::BFloat16Weights() = default;

BFloat16Weights::~BFloat16Weights() {
  for (const auto& copy : copies_) bfloat16_registry().remove(copy->source);
}

void BFloat16Weights::add(const std::string& name, const Tensor<float>& tensor) {
  if (tensor.size() == 0) return;  // no product reads it
  for (const auto& copy : copies_)
    if (copy->source == tensor.data()) return;
  auto copy = std::make_shared<Copy>();
  copy->source = tensor.data();
  copy->count = tensor.size();
  if (!bfloat16_registry().add(copy->source, copy)) {
    throw std::invalid_argument("BFloat16Weights: " + name + " is registered already, by another BFloat16Weights");
  }
  copies_.push_back(std::move(copy));
}

namespace {

// Rounds a copy's numbers again: past the cache when the copies are too large to be found in it at the next step's
// products (kernels::streaming_bytes), whose lines a plain store would first read in.
void round_copy(const float* x, std::uint16_t* y, std::size_t n, bool stream) {
  if (stream) {
    bf16::from_float_streamed(x, y, n);
  } else {
    bf16::from_float(x, y, n);
  }
}

}  // namespace

void BFloat16Weights::refresh(const Executor& executor) {
  // the copies read so far, cut into pieces of at most `piece` numbers shared out over the executor's threads
  static constexpr std::size_t piece = std::size_t{1} << 16;
  std::vector<std::pair<Copy*, std::size_t>> pieces;  // (copy, first number)
  for (const auto& copy : copies_) {
    if (!copy->read.load(std::memory_order_relaxed)) continue;  // never made: made when first read, from the tensor
    for (std::size_t first = 0; first < copy->count; first += piece) pieces.emplace_back(copy.get(), first);
  }
  const bool stream = bytes() > kernels::streaming_bytes;
  const auto convert = [&pieces, stream](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const auto [copy, first] = pieces[i];
      round_copy(copy->source + first, copy->values.data() + first, std::min(piece, copy->count - first), stream);
    }
  };
  if (executor) {
    executor(pieces.size(), convert);
  } else {
    convert(0, pieces.size());
  }
  for (const auto& copy : copies_) copy->fresh.store(copy->read.load(std::memory_order_relaxed));  // a made one is read
}

void BFloat16Weights::refresh(const float* first, const float* last) {
  if (first >= last) return;
  const auto located = bfloat16_registry().find(first, last);  // (the tensor's first number, its copy)
  const float* source = located.first;
  const std::shared_ptr<Copy>& found = located.second;
  if (found == nullptr || !found->read.load(std::memory_order_relaxed)) return;  // not read yet: made when first read
  // a copy of this object's (another's is refreshed by its owner)
  if (std::none_of(copies_.begin(), copies_.end(), [&](const auto& copy) { return copy == found; })) return;
  const auto offset = static_cast<std::size_t>(first - source);
  round_copy(first, found->values.data() + offset, static_cast<std::size_t>(last - first),
             bytes() > kernels::streaming_bytes);
}

std::size_t BFloat16Weights::bytes() const {
  std::size_t total = 0;
  for (const auto& copy : copies_) total += copy->values.size() * sizeof(std::uint16_t);
  return total;
}

}  // namespace attend
