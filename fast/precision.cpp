// The precision of the float products (precision.hpp): OpenBLAS's sgemm, or oneDNN's bfloat16 matmul installed as
// blas_gemm's backend. oneDNN's part is compiled only when Meson found it (ATTEND_ONEDNN).
#include "fast/precision.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "autograd/blas.hpp"
#include "fast/bfloat16.hpp"
#include "fast/int8.hpp"

#if ATTEND_ONEDNN
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <dnnl.hpp>
#include <map>
#include <tuple>
#include <vector>

#include "fast/onednn.hpp"
#endif

namespace attend {

namespace {

#if ATTEND_ONEDNN

using dnnl::memory;
using onednn::cpu_engine;
using onednn::dim;
using onednn::matrix;
using onednn::runtime;

// One primitive for every product of a transposition, alpha and beta: its sizes and row strides are given when it runs
// (oneDNN's runtime dimensions). Measured on the translation benchmark's 170 shapes (Zen 5, one thread), that runs
// them in 0.89 of the time of primitives made for each shape (oneDNN's gemm:jit kernel against its brgemm one), and
// it keeps a run from making a primitive — about a millisecond and 0.4 MB each — for every new sentence length.
struct ProductKey {
  bool trans_a, trans_b;
  float alpha, beta;
  bool operator<(const ProductKey& o) const {  // by the scalars' bits: a NaN alpha or beta still orders
    return std::make_tuple(trans_a, trans_b, bits(alpha), bits(beta)) <
           std::make_tuple(o.trans_a, o.trans_b, bits(o.alpha), bits(o.beta));
  }
  static std::uint32_t bits(float x) {
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
  }
};

dnnl::matmul make_product(const ProductKey& key) {
  dnnl::primitive_attr attr;
  if (key.alpha != 1.0f) attr.set_output_scales(0, {key.alpha});
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

// The packed operands are bounded: a product is cut into blocks of at most tile_k terms a sum (k ≤ 1024 stays whole)
// and tile_elements / tile_k rows of C and columns, so that each bfloat16 copy holds at most tile_elements numbers
// (512 KiB); the blocks of a sum add into C in order. Without the cut, the output layer's weight and gradient copies
// (17 MB a thread) raised the translation run's peak memory above float32's.
constexpr std::size_t tile_elements = std::size_t{1} << 18;

// C[m0:m1, n0:n1] (+)= alpha · op(A)[m0:m1, k0:k1] op(B)[k0:k1, n0:n1], from the packed blocks in state.a and state.b.
void block_product(ThreadState& state, bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k,
                   float alpha, float beta, float* c, std::size_t ldc) {
  const ProductKey key{trans_a, trans_b, alpha, beta};
  auto found = state.products.find(key);
  if (found == state.products.end()) found = state.products.emplace(key, make_product(key)).first;
  const auto bf16 = memory::data_type::bf16;
  const memory a_mem(matrix(trans_a, dim(m), dim(k), dim(trans_a ? m : k), bf16), cpu_engine(), state.a.data());
  const memory b_mem(matrix(trans_b, dim(k), dim(n), dim(trans_b ? k : n), bf16), cpu_engine(), state.b.data());
  const memory c_mem(matrix(false, dim(m), dim(n), dim(ldc), memory::data_type::f32), cpu_engine(), c);
  found->second.execute(state.stream, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
  state.stream.wait();
}

// (A product with a bias is declined: blas_linear then puts the bias in C and asks again.)
bool bfloat16_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                   std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc,
                   const float* bias) {
  if (bias != nullptr) return false;
  thread_local ThreadState state;
  onednn::match_blas_threads();
  const std::size_t tile_k = k <= 1024 ? k : 512, tile_mn = tile_elements / tile_k;
  for (std::size_t k0 = 0; k0 < k; k0 += tile_k) {
    const std::size_t kb = std::min(k, k0 + tile_k) - k0;
    const float block_beta = k0 == 0 ? beta : 1.0f;  // the later blocks of a sum add to the first
    for (std::size_t m0 = 0; m0 < m; m0 += tile_mn) {
      const std::size_t mb = std::min(m, m0 + tile_mn) - m0;
      // op(A)'s block, packed once for all the columns: stored at rows k0.., columns m0.. when A is (k, m)
      pack(trans_a ? a + k0 * lda + m0 : a + m0 * lda + k0, trans_a ? kb : mb, trans_a ? mb : kb, lda, state.a);
      for (std::size_t n0 = 0; n0 < n; n0 += tile_mn) {
        const std::size_t nb = std::min(n, n0 + tile_mn) - n0;
        pack(trans_b ? b + n0 * ldb + k0 : b + k0 * ldb + n0, trans_b ? nb : kb, trans_b ? kb : nb, ldb, state.b);
        block_product(state, trans_a, trans_b, mb, nb, kb, alpha, block_beta, c + m0 * ldc + n0, ldc);
      }
    }
  }
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

}  // namespace attend
