// Elementwise kernels of the fused ops (fused.cpp) on contiguous arrays: σ and tanh of a sum, for float and double.
// The float versions use their own exp and tanh, written so that the compiler vectorises the whole loop (no calls
// into libm), and each of them is compiled twice on x86-64 with GCC — for the baseline (SSE2) and for x86-64-v3 (AVX2
// + FMA), kernels_cloned.inc included twice under two targets — with the clone chosen at run time (clone() below), so
// the build needs no -march and runs on any x86-64. The x86-64-v3 clone uses fused multiply-adds, so its results may
// differ from the baseline clone's in the last bit (as OpenBLAS's gemm kernels differ from CPU to CPU). Accuracy of the
// float versions, checked in tests/runtime/test_kernels.cpp against the double-precision library functions over [-30,
// 30]: tanh within 5·10⁻⁷ relative (±1 from |x| = 9.1 on), σ within 3·10⁻⁷ relative; NaN in gives NaN out. The double
// versions call std::exp/std::tanh, so gradient checks in double see the exact functions. Chapter: docs/performance.md
// ("Fused ops").
#pragma once

#include <cstddef>
#include <cstdint>

namespace attend::kernels {

// Which clone of the kernels this process runs: "x86-64-v3" (AVX2 + FMA), "x86-64" (the baseline), or "one build"
// (a compiler or CPU without clones). Chosen at the first call of any kernel: the CPU's best, unless the environment
// variable ATTEND_KERNELS names one — "x86-64" runs the baseline on any CPU, to reproduce what a CPU without AVX2
// computes; "x86-64-v3" insists on the other (std::runtime_error where the CPU cannot run it); another value is
// std::invalid_argument naming the clones.
const char* clone();

// y_i = σ(a_i + b_i)
void sigmoid_sum(const float* a, const float* b, float* y, std::size_t n);
void sigmoid_sum(const double* a, const double* b, double* y, std::size_t n);
// y_i = tanh(a_i + b_i)
void tanh_sum(const float* a, const float* b, float* y, std::size_t n);
void tanh_sum(const double* a, const double* b, double* y, std::size_t n);
// y_i = tanh(a_i + r_i g_i)   (the GRU's candidate state; the FMA clone rounds a_i + r_i g_i once)
void tanh_sum_product(const float* a, const float* r, const float* g, float* y, std::size_t n);
void tanh_sum_product(const double* a, const double* r, const double* g, double* y, std::size_t n);
// y_i = tanh(x_i)
void tanh_of(const float* x, float* y, std::size_t n);
void tanh_of(const double* x, double* y, std::size_t n);
// t_i = tanh(q_i + k_i) for i < n; returns Σ_i v_i t_i   (one row of additive attention)
float tanh_sum_dot(const float* q, const float* k, const float* v, float* t, std::size_t n);
double tanh_sum_dot(const double* q, const double* k, const double* v, double* t, std::size_t n);

// The pieces of a row of log softmax / cross-entropy (softmax.cpp): max_i x_i; Σ_i exp(x_i − m) (eight partial sums,
// in a fixed order); and y_i = scale · (exp((x_i − m) − l) − offset), written (accumulate false) or added (true) — the
// softmax exp(x_i − m − ln Σ) with x_i − m taken first, exact for the row's largest elements however large they are.
float max_of(const float* x, std::size_t n);
double max_of(const double* x, std::size_t n);
float exp_shifted_sum(const float* x, float m, std::size_t n);
double exp_shifted_sum(const double* x, double m, std::size_t n);
// Σ_i exp(x_i − m) of a row of floats and its max m, x_i − m and the sum in double, in the float exp_shifted_sum's
// order (eight partial sums); each exp within 1 ulp of glibc's std::exp, and 0 where x_i − m < −708 (the sum is ≥ 1:
// m's term is 1); vectorised, for the search's log-probabilities (models/search.cpp).
double exp_shifted_sum_in_double(const float* x, float m, std::size_t n);
// y_i = exp(x_i − m), and returns Σ_i y_i in exp_shifted_sum's order (a softmax's numerators kept, for e_i / Σ)
float exp_shifted_store(const float* x, float m, float* y, std::size_t n);
double exp_shifted_store(const double* x, double m, double* y, std::size_t n);
void scaled_exp_minus(const float* x, float m, float l, float scale, float offset, float* y, std::size_t n,
                      bool accumulate);
void scaled_exp_minus(const double* x, double m, double l, double scale, double offset, double* y, std::size_t n,
                      bool accumulate);

// The int8 products' conversions (precision.cpp). quantize_u8: x's range with 0 in it, [lo, hi] = [min(0, min x),
// max(0, max x)], mapped onto 0 … 255: scale = (hi − lo)/255, zero = round(−lo/scale), q_i = min(255, round(x_i/scale)
// + zero), so that x_i = scale·(q_i − zero) within scale/2 — 0 exactly. Returns false, q untouched, when that cannot be
// done in float: x holds a NaN or ∞, or the range is too wide (∞) or too narrow (1/scale = ∞) for floats; a row of
// zeros gets scale 1, zero 0. dequantize: y_j = factor·scales_j·(acc_j − zero·sums_j), plus bias_j when bias is not
// nullptr, else plus beta·y_j when beta is not 0 (y's old values are read only then).
bool quantize_u8(const float* x, std::size_t n, std::uint8_t* q, float* scale, std::int32_t* zero);
void dequantize(const std::int32_t* acc, const std::int32_t* sums, const float* scales, float factor, std::int32_t zero,
                float beta, const float* bias, float* y, std::size_t n);

// The sum of a parameter's gradients from several shards (nn/parallel.cpp), one chunk of it: y_i = ((p₀ᵢ + p₁ᵢ) + p₂ᵢ)
// + … over the `count` ≥ 1 arrays `parts`, left to right. With `stream`, y is written with streaming stores (SSE2,
// when y starts on a 16-byte boundary; otherwise, and for the last n mod 8, with plain stores), which bypass the
// cache: a store that misses the cache would otherwise read the line in first, and a pass over more than
// streaming_bytes finds little of it in the cache afterwards anyway. Returns Σ yᵢ² in double when `squares` is true
// (0 otherwise), added as nn::chunk_squares adds it — eight partial sums, element i into the (i mod 8)th in order,
// the eight then added in order, then the elements past the last whole eight — so the same bits as chunk_squares of y
// (a float's square is exact in double, so a fused multiply-add would give them too). y must not overlap the parts.
// Compiled once, for the baseline (its loop is written in SSE2).
double sum_parts(const float* const* parts, std::size_t count, float* y, std::size_t n, bool squares, bool stream);
// Passes that write more bytes than this write past the cache (sum_parts, bf16::from_float_streamed): 16 MiB, half of
// a Zen 4 or Zen 5 core complex's L3 — smaller arrays are likely still in the cache when the next pass reads them.
inline constexpr std::size_t streaming_bytes = std::size_t{16} << 20;

// The scalar approximations themselves (for the accuracy tests).
float fast_exp(float x);
double fast_exp_double(double x);
float fast_tanh(float x);
float fast_sigmoid(float x);

}  // namespace attend::kernels
