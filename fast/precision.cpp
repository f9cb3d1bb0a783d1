// The precision of the float products (precision.hpp): OpenBLAS's sgemm, or oneDNN's bfloat16 matmul installed as
// blas_gemm's backend. oneDNN's part is compiled only when Meson found it (ATTEND_ONEDNN).
#include "fast/precision.hpp"

#include <atomic>
#include <stdexcept>

#include "autograd/blas.hpp"
#include "fast/bfloat16.hpp"

#if ATTEND_ONEDNN
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <dnnl.hpp>
#include <unordered_map>
#include <vector>
#endif

namespace attend {

namespace {

std::atomic<Precision> current{Precision::float32};

#if ATTEND_ONEDNN

using dnnl::memory;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// A product's primitive is made once per shape, strides, alpha and beta (making one takes ~1 ms: oneDNN generates its
// kernel), per thread; a thread keeps at most max_primitives of them (then starts again from none).
struct ProductKey {
  bool trans_a, trans_b;
  std::size_t m, n, k;
  float alpha, beta;
  bool operator==(const ProductKey& o) const {
    return trans_a == o.trans_a && trans_b == o.trans_b && m == o.m && n == o.n && k == o.k &&
           std::memcmp(&alpha, &o.alpha, sizeof alpha) == 0 && std::memcmp(&beta, &o.beta, sizeof beta) == 0;
  }
};
struct ProductKeyHash {
  std::size_t operator()(const ProductKey& key) const {
    std::size_t h = key.m * 1000003u ^ key.n * 10007u ^ key.k * 101u ^ (key.trans_a ? 1u : 0u) ^ (key.trans_b ? 2u : 0u);
    std::uint32_t bits[2];
    std::memcpy(&bits[0], &key.alpha, sizeof(float));
    std::memcpy(&bits[1], &key.beta, sizeof(float));
    return h ^ (std::size_t{bits[0]} << 7) ^ (std::size_t{bits[1]} << 13);
  }
};
constexpr std::size_t max_primitives = 4096;

// The logical (rows, cols) matrix of a packed bfloat16 copy: stored (rows, cols), or (cols, rows) when transposed.
memory::desc packed(bool transposed, std::size_t rows, std::size_t cols, memory::data_type type) {
  const auto r = static_cast<memory::dim>(rows), c = static_cast<memory::dim>(cols);
  return memory::desc({r, c}, type, transposed ? memory::dims{1, r} : memory::dims{c, 1});
}

dnnl::matmul make_product(const ProductKey& key) {
  dnnl::primitive_attr attr;
  if (key.alpha != 1.0f) attr.set_output_scales(0, {key.alpha});
  if (key.beta != 0.0f) {
    dnnl::post_ops sum;
    sum.append_sum(key.beta);
    attr.set_post_ops(sum);
  }
  const auto bf16 = memory::data_type::bf16;
  const dnnl::matmul::desc desc(packed(key.trans_a, key.m, key.k, bf16), packed(key.trans_b, key.k, key.n, bf16),
                                packed(false, key.m, key.n, memory::data_type::f32));
  return dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, cpu_engine()));
}

// Copies the stored rows × cols matrix (row stride ld) into `out` packed, rounded to bfloat16.
void pack(const float* x, std::size_t rows, std::size_t cols, std::size_t ld, std::vector<std::uint16_t>& out) {
  out.resize(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) bf16::from_float(x + r * ld, out.data() + r * cols, cols);
}

struct ThreadState {
  std::unordered_map<ProductKey, dnnl::matmul, ProductKeyHash> products;
  dnnl::stream stream{cpu_engine()};
  std::vector<std::uint16_t> a, b;
  std::vector<float> c;  // C packed, when its rows are strided
  int threads = -1;      // OpenMP threads last set for this thread
};

void bfloat16_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
                   const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
                   std::size_t ldc) {
  thread_local ThreadState state;
  if (const int threads = blas_threads(); threads != state.threads) omp_set_num_threads(state.threads = threads);
  pack(a, trans_a ? k : m, trans_a ? m : k, lda, state.a);
  pack(b, trans_b ? n : k, trans_b ? k : n, ldb, state.b);
  const ProductKey key{trans_a, trans_b, m, n, k, alpha, beta};
  auto found = state.products.find(key);
  if (found == state.products.end()) {
    if (state.products.size() >= max_primitives) state.products.clear();
    found = state.products.emplace(key, make_product(key)).first;
  }
  float* out = c;
  if (ldc != n) {  // C's rows are strided: computed packed, copied back
    state.c.resize(m * n);
    out = state.c.data();
    if (beta != 0.0f) {
      for (std::size_t r = 0; r < m; ++r) std::memcpy(out + r * n, c + r * ldc, n * sizeof(float));
    }
  }
  const auto bf16 = memory::data_type::bf16;
  const memory a_mem(packed(trans_a, m, k, bf16), cpu_engine(), state.a.data());
  const memory b_mem(packed(trans_b, k, n, bf16), cpu_engine(), state.b.data());
  const memory c_mem(packed(false, m, n, memory::data_type::f32), cpu_engine(), out);
  found->second.execute(state.stream, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
  state.stream.wait();
  if (out != c) {
    for (std::size_t r = 0; r < m; ++r) std::memcpy(c + r * ldc, out + r * n, n * sizeof(float));
  }
}

#endif

}  // namespace

const char* precision_name(Precision precision) { return precision == Precision::bfloat16 ? "bf16" : "float32"; }

std::optional<Precision> parse_precision(const std::string& name) {
  if (name == "float32") return Precision::float32;
  if (name == "bf16") return Precision::bfloat16;
  return std::nullopt;
}

std::string precision_unavailable(Precision precision) {
  if (precision == Precision::float32) return "";
#if ATTEND_ONEDNN
  if (!bf16::cpu_has_instructions()) {
    return "this CPU has no AVX512-BF16 instructions (see /proc/cpuinfo: avx512_bf16), and oneDNN's emulation of "
           "them takes 2.5 times float32's time";
  }
  return "";
#else
  return "this attend was built without oneDNN, which its bfloat16 products need (Debian: apt-get install libdnnl-dev, "
         "then configure again; meson option onednn)";
#endif
}

void use_precision(Precision precision) {
  if (const std::string why = precision_unavailable(precision); !why.empty()) {
    throw std::runtime_error(std::string("precision ") + precision_name(precision) + ": " + why);
  }
#if ATTEND_ONEDNN
  set_gemm_backend(precision == Precision::bfloat16 ? bfloat16_gemm : nullptr);
#else
  set_gemm_backend(nullptr);
#endif
  current = precision;
}

Precision current_precision() { return current.load(); }

}  // namespace attend
