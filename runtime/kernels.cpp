// The elementwise kernels of kernels.hpp. exp: x = k ln 2 + r with k = round(x / ln 2) and |r| ≤ ln 2 / 2, so
// e^x = 2^k e^r, e^r by its Taylor series to r⁷ (error < 10⁻⁸ on that interval), 2^k built in the exponent bits; the
// double exp of the search's probabilities the same way, to r¹³.
// tanh: a rational function from Lambert's continued fraction (below), ±1 from |x| = 9.1 on. σ(x) = 1/(1 + e^{−x}).
// Every step is a plain arithmetic expression or a select, so a loop over them vectorises.
#include "runtime/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>  // SSE2: every x86-64 has it
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// the float kernels compiled twice, for the baseline and for x86-64-v3, the clone chosen at run time (choose_clone)
#define ATTEND_CLONES 1
#else
#define ATTEND_CLONES 0
#endif
#define ATTEND_INLINE inline __attribute__((always_inline))

namespace attend::kernels {

namespace {

ATTEND_INLINE double sigmoid_exact(double x) { return 1.0 / (1.0 + std::exp(-x)); }

#if ATTEND_CLONES
namespace v3 {
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
#include "runtime/kernels_cloned.inc"
#pragma GCC pop_options
}  // namespace v3
#endif

namespace baseline {
#include "runtime/kernels_cloned.inc"
}  // namespace baseline

// The float kernels of one clone.
struct Clone {
  const char* name;
  float (*fast_exp)(float);
  double (*fast_exp_double)(double);
  float (*fast_tanh)(float);
  float (*fast_sigmoid)(float);
  void (*sigmoid_sum)(const float*, const float*, float*, std::size_t);
  void (*tanh_sum)(const float*, const float*, float*, std::size_t);
  void (*tanh_sum_product)(const float*, const float*, const float*, float*, std::size_t);
  void (*tanh_of)(const float*, float*, std::size_t);
  float (*tanh_sum_dot)(const float*, const float*, const float*, float*, std::size_t);
  float (*max_of)(const float*, std::size_t);
  float (*exp_shifted_sum)(const float*, float, std::size_t);
  double (*exp_shifted_sum_in_double)(const float*, float, std::size_t);
  float (*exp_shifted_store)(const float*, float, float*, std::size_t);
  void (*scaled_exp_minus)(const float*, float, float, float, float, float*, std::size_t, bool);
  bool (*quantize_u8)(const float*, std::size_t, std::uint8_t*, float*, std::int32_t*);
  void (*dequantize)(const std::int32_t*, const std::int32_t*, const float*, float, std::int32_t, float, const float*,
                     float*, std::size_t);
};

#define ATTEND_CLONE(ns, label)                                                                                     \
  Clone {                                                                                                           \
    label, &ns::fast_exp, &ns::fast_exp_double, &ns::fast_tanh, &ns::fast_sigmoid, &ns::sigmoid_sum, &ns::tanh_sum, \
        &ns::tanh_sum_product, &ns::tanh_of, &ns::tanh_sum_dot, &ns::max_of, &ns::exp_shifted_sum,                  \
        &ns::exp_shifted_sum_in_double, &ns::exp_shifted_store, &ns::scaled_exp_minus, &ns::quantize_u8,            \
        &ns::dequantize                                                                                             \
  }

// The clone this process runs, chosen once: x86-64-v3 where the CPU has AVX2 and FMA, else the baseline — unless the
// environment variable ATTEND_KERNELS names one ("x86-64" runs the baseline on any CPU, to see what another machine
// computes; "x86-64-v3" insists on the other).
Clone choose_clone() {
#if ATTEND_CLONES
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("x86-64-v3");
  const Clone fast = ATTEND_CLONE(v3, "x86-64-v3"), base = ATTEND_CLONE(baseline, "x86-64");
#else
  const bool v3 = false;
  const Clone base = ATTEND_CLONE(baseline, "one build"), fast = base;
#endif
  const char* asked = std::getenv("ATTEND_KERNELS");
  if (asked == nullptr || *asked == '\0') return v3 ? fast : base;
  const std::string name = asked;
  if (name == "x86-64") return base;
  if (name == "x86-64-v3" && v3) return fast;
  if (name == "x86-64-v3")
    throw std::runtime_error("ATTEND_KERNELS=x86-64-v3: this CPU cannot run it (no AVX2 or FMA)");
  throw std::invalid_argument("ATTEND_KERNELS=" + name + ": no such clone of the fused kernels (x86-64, x86-64-v3)");
}

const Clone& chosen_clone() {
  static const Clone clone = choose_clone();
  return clone;
}

}  // namespace

const char* clone() { return chosen_clone().name; }

float fast_exp(float x) { return chosen_clone().fast_exp(x); }
double fast_exp_double(double x) { return chosen_clone().fast_exp_double(x); }
float fast_tanh(float x) { return chosen_clone().fast_tanh(x); }
float fast_sigmoid(float x) { return chosen_clone().fast_sigmoid(x); }
void sigmoid_sum(const float* a, const float* b, float* y, std::size_t n) { chosen_clone().sigmoid_sum(a, b, y, n); }
void tanh_sum(const float* a, const float* b, float* y, std::size_t n) { chosen_clone().tanh_sum(a, b, y, n); }
void tanh_sum_product(const float* a, const float* r, const float* g, float* y, std::size_t n) {
  chosen_clone().tanh_sum_product(a, r, g, y, n);
}
void tanh_of(const float* x, float* y, std::size_t n) { chosen_clone().tanh_of(x, y, n); }
float tanh_sum_dot(const float* q, const float* k, const float* v, float* t, std::size_t n) {
  return chosen_clone().tanh_sum_dot(q, k, v, t, n);
}
float max_of(const float* x, std::size_t n) { return chosen_clone().max_of(x, n); }
float exp_shifted_sum(const float* x, float m, std::size_t n) { return chosen_clone().exp_shifted_sum(x, m, n); }
double exp_shifted_sum_in_double(const float* x, float m, std::size_t n) {
  return chosen_clone().exp_shifted_sum_in_double(x, m, n);
}
float exp_shifted_store(const float* x, float m, float* y, std::size_t n) {
  return chosen_clone().exp_shifted_store(x, m, y, n);
}
void scaled_exp_minus(const float* x, float m, float l, float scale, float offset, float* y, std::size_t n,
                      bool accumulate) {
  chosen_clone().scaled_exp_minus(x, m, l, scale, offset, y, n, accumulate);
}
bool quantize_u8(const float* x, std::size_t n, std::uint8_t* q, float* scale, std::int32_t* zero) {
  return chosen_clone().quantize_u8(x, n, q, scale, zero);
}
void dequantize(const std::int32_t* acc, const std::int32_t* sums, const float* scales, float factor, std::int32_t zero,
                float beta, const float* bias, float* y, std::size_t n) {
  chosen_clone().dequantize(acc, sums, scales, factor, zero, beta, bias, y, n);
}

void sigmoid_sum(const double* a, const double* b, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = sigmoid_exact(a[i] + b[i]);
}

void tanh_sum(const double* a, const double* b, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::tanh(a[i] + b[i]);
}

void tanh_sum_product(const double* a, const double* r, const double* g, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::tanh(a[i] + r[i] * g[i]);
}

void tanh_of(const double* x, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

double tanh_sum_dot(const double* q, const double* k, const double* v, double* t, std::size_t n) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    t[i] = std::tanh(q[i] + k[i]);
    total += v[i] * t[i];
  }
  return total;
}

double max_of(const double* x, std::size_t n) {
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

double exp_shifted_sum(const double* x, double m, std::size_t n) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) total += std::exp(x[i] - m);
  return total;
}

double exp_shifted_store(const double* x, double m, double* y, std::size_t n) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) total += y[i] = std::exp(x[i] - m);
  return total;
}

void scaled_exp_minus(const double* x, double m, double l, double scale, double offset, double* y, std::size_t n,
                      bool accumulate) {
  if (accumulate) {
    for (std::size_t i = 0; i < n; ++i) y[i] += scale * (std::exp((x[i] - m) - l) - offset);
  } else {
    for (std::size_t i = 0; i < n; ++i) y[i] = scale * (std::exp((x[i] - m) - l) - offset);
  }
}

namespace {

// sum_parts' whole eights: y_i for i < n − n mod 8, and lanes[l] = Σ y_i² over i ≡ l (mod 8) when `squares`.
#if defined(__SSE2__)
void sum_eights(const float* const* parts, std::size_t count, float* y, std::size_t n, bool squares, bool stream,
                double* lanes) {
  const bool streamed = stream && reinterpret_cast<std::uintptr_t>(y) % 16 == 0;  // streaming stores need 16 bytes
  __m128d partial[4] = {_mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd()};  // lanes 0-1 … 6-7
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    __m128 low = _mm_loadu_ps(parts[0] + i), high = _mm_loadu_ps(parts[0] + i + 4);
    for (std::size_t k = 1; k < count; ++k) {
      low = _mm_add_ps(low, _mm_loadu_ps(parts[k] + i));
      high = _mm_add_ps(high, _mm_loadu_ps(parts[k] + i + 4));
    }
    if (streamed) {
      _mm_stream_ps(y + i, low);
      _mm_stream_ps(y + i + 4, high);
    } else {
      _mm_storeu_ps(y + i, low);
      _mm_storeu_ps(y + i + 4, high);
    }
    if (!squares) continue;
    const __m128d d[4] = {_mm_cvtps_pd(low), _mm_cvtps_pd(_mm_movehl_ps(low, low)), _mm_cvtps_pd(high),
                          _mm_cvtps_pd(_mm_movehl_ps(high, high))};
    for (int l = 0; l < 4; ++l) partial[l] = _mm_add_pd(partial[l], _mm_mul_pd(d[l], d[l]));
  }
  _mm_sfence();  // the streamed stores are seen before whatever this thread does next
  for (int l = 0; l < 4; ++l) _mm_storeu_pd(lanes + 2 * l, partial[l]);
}
#else
void sum_eights(const float* const* parts, std::size_t count, float* y, std::size_t n, bool squares, bool /*stream*/,
                double* lanes) {
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    for (std::size_t l = 0; l < 8; ++l) {
      float v = parts[0][i + l];
      for (std::size_t k = 1; k < count; ++k) v += parts[k][i + l];
      y[i + l] = v;
      if (squares) lanes[l] += static_cast<double>(v) * static_cast<double>(v);
    }
  }
}
#endif

}  // namespace

double sum_parts(const float* const* parts, std::size_t count, float* y, std::size_t n, bool squares, bool stream) {
  double lanes[8] = {};
  sum_eights(parts, count, y, n, squares, stream, lanes);
  double total = 0;
  for (const double lane : lanes) total += lane;
  for (std::size_t i = n - n % 8; i < n; ++i) {
    float v = parts[0][i];
    for (std::size_t k = 1; k < count; ++k) v += parts[k][i];
    y[i] = v;
    total += static_cast<double>(v) * static_cast<double>(v);
  }
  return squares ? total : 0.0;
}

}  // namespace attend::kernels
