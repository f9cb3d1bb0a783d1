// The elementwise kernels of kernels.hpp. exp: x = k ln 2 + r with k = round(x / ln 2) and |r| ≤ ln 2 / 2, so
// e^x = 2^k e^r, e^r by its Taylor series to r⁷ (error < 10⁻⁸ on that interval), 2^k built in the exponent bits; the
// double exp of the search's probabilities the same way, to r¹³.
// tanh: a rational function from Lambert's continued fraction (below), ±1 from |x| = 9.1 on. σ(x) = 1/(1 + e^{−x}).
// Every step is a plain arithmetic expression or a select, so a loop over them vectorises.
#include "runtime/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>  // SSE2: every x86-64 has it
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// one clone per instruction set, chosen at load time (ifunc)
#define ATTEND_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define ATTEND_KERNEL
#endif
#define ATTEND_INLINE inline __attribute__((always_inline))

namespace attend::kernels {

const char* clone() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("x86-64-v3") ? "x86-64-v3" : "x86-64";  // the rule the clones' resolver follows
#else
  return "one build";
#endif
}

namespace {

ATTEND_INLINE float exp_approx(float x) {
  // below -87 the result stays at e^-87 ≈ 1.6·10⁻³⁸ (the smallest normal floats); from 88.73 up it is +inf (k = 128
  // fills the exponent field with ones)
  x = x < -87.0f ? -87.0f : x;
  x = x > 89.0f ? 89.0f : x;
  // k = round(x / ln 2): adding and subtracting 1.5·2²³ rounds to the nearest integer
  const float shifter = 12582912.0f;
  const float k = (x * 1.44269504088896341f + shifter) - shifter;
  // r = x - k ln 2, with ln 2 in two parts so that k·ln2_hi is exact
  const float r = (x - k * 0.693145751953125f) - k * 1.42860682030941723e-6f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^k: k + 127 in the exponent field, shifted as an unsigned number. k is in [-125, 128] for every x but a NaN; a
  // NaN x makes k NaN, which must not be converted to an integer (undefined behaviour): it becomes 0 here, and the
  // result is still NaN through p.
  const float k_finite = k == k ? k : 0.0f;
  const std::uint32_t bits = static_cast<std::uint32_t>(static_cast<std::int32_t>(k_finite) + 127) << 23;
  return p * __builtin_bit_cast(float, bits);
}

// e^x in double for the beam search's sums of probabilities: the same method as exp_approx, with ln 2 in two parts
// (ln2_hi has 40 significant bits, so k·ln2_hi is exact for every k here) and the Taylor series of e^r to r¹³ (its
// error < 6·10⁻¹⁸ relative for |r| ≤ ln 2 / 2). Within 1 ulp of glibc's std::exp on [-708, 709]
// (tests/runtime/test_kernels.cpp); against e^x itself (measured in long double) at most 0.89 ulp in the FMA clone and
// 1.18 ulp in the baseline one, whose r is rounded twice. Below -708 the result is 0 (e^x < 3.31·10⁻³⁰⁸: beside a sum
// of exps of x − max, which is ≥ 1, nothing); from 709 up +inf; NaN gives NaN.
ATTEND_INLINE double exp_approx(double x) {
  const bool under = x < -708.0;
  const bool over = x > 709.0;
  x = under ? -708.0 : x;
  x = over ? 709.0 : x;
  // k = round(x / ln 2): adding 1.5·2⁵² leaves k in the low bits of the sum's mantissa
  const double shifter = 6755399441055744.0;
  const double shifted = x * 1.4426950408889634 + shifter;
  const double k = shifted - shifter;
  const double r = (x - k * 0x1.62e42fefa2000p-1) - k * 0x1.9ef35793c7673p-41;
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // 2^k: k + 1023 in the exponent field (k is in [-1021, 1023]; a NaN x leaves other bits here, and NaN through p)
  const std::uint64_t k_bits = __builtin_bit_cast(std::uint64_t, shifted) - __builtin_bit_cast(std::uint64_t, shifter);
  const double result = p * __builtin_bit_cast(double, (k_bits + 1023) << 52);
  return under ? 0.0 : over ? std::numeric_limits<double>::infinity() : result;
}

ATTEND_INLINE float tanh_approx(float x) {
  // Lambert's continued fraction tanh x = x / (1 + x²/(3 + x²/(5 + …))) cut after 12 levels and multiplied out:
  // tanh x ≈ x N(x²) / D(x²), N and D of degree 6 with positive coefficients (no cancellation in Horner's rule),
  // divided through by D(0). Its own error is < 4·10⁻⁸ on |x| ≤ 9.1; beyond, tanh x is ±1 in float.
  const float t = x * x;
  float n = 1.264885556e-13f;
  n = n * t + 5.179706351e-10f;
  n = n * t + 3.228683625e-07f;
  n = n * t + 6.625258799e-05f;
  n = n * t + 5.217391304e-03f;
  n = n * t + 1.466666667e-01f;
  n = n * t + 1.0f;
  float d = 1.151045856e-11f;
  d = d * t + 1.519380530e-08f;
  d = d * t + 5.230467473e-06f;
  d = d * t + 6.625258799e-04f;
  d = d * t + 3.188405797e-02f;
  d = d * t + 4.800000000e-01f;
  d = d * t + 1.0f;
  const float r = x * n / d;
  // |x| ≥ 9.1 (or a product that overflowed): ±1 with the sign of x; a NaN stays NaN (the comparison is false)
  return std::fabs(x) >= 9.1f ? std::copysign(1.0f, x) : r;
}

ATTEND_INLINE float sigmoid_approx(float x) { return 1.0f / (1.0f + exp_approx(-x)); }

ATTEND_INLINE double sigmoid_exact(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

ATTEND_KERNEL float fast_exp(float x) { return exp_approx(x); }
ATTEND_KERNEL double fast_exp_double(double x) { return exp_approx(x); }
ATTEND_KERNEL float fast_tanh(float x) { return tanh_approx(x); }
ATTEND_KERNEL float fast_sigmoid(float x) { return sigmoid_approx(x); }

ATTEND_KERNEL void sigmoid_sum(const float* a, const float* b, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = sigmoid_approx(a[i] + b[i]);
}
void sigmoid_sum(const double* a, const double* b, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = sigmoid_exact(a[i] + b[i]);
}

ATTEND_KERNEL void tanh_sum(const float* a, const float* b, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = tanh_approx(a[i] + b[i]);
}
void tanh_sum(const double* a, const double* b, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::tanh(a[i] + b[i]);
}

ATTEND_KERNEL void tanh_sum_product(const float* a, const float* r, const float* g, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = tanh_approx(a[i] + r[i] * g[i]);
}
void tanh_sum_product(const double* a, const double* r, const double* g, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::tanh(a[i] + r[i] * g[i]);
}

ATTEND_KERNEL void tanh_of(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = tanh_approx(x[i]);
}
void tanh_of(const double* x, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

ATTEND_KERNEL float tanh_sum_dot(const float* q, const float* k, const float* v, float* t, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) t[i] = tanh_approx(q[i] + k[i]);
  // Σ v t with eight partial sums, so the sum vectorises in a fixed order (the same in both clones)
  float partial[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (std::size_t l = 0; l < 8; ++l) partial[l] += v[i + l] * t[i + l];
  }
  float total = 0;
  for (std::size_t l = 0; l < 8; ++l) total += partial[l];
  for (; i < n; ++i) total += v[i] * t[i];
  return total;
}
double tanh_sum_dot(const double* q, const double* k, const double* v, double* t, std::size_t n) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    t[i] = std::tanh(q[i] + k[i]);
    total += v[i] * t[i];
  }
  return total;
}

ATTEND_KERNEL float max_of(const float* x, std::size_t n) {
  // eight running maxima, so the loop vectorises; a NaN element is passed over here (it makes the sum of exps NaN)
  float partial[8];
  for (float& p : partial) p = -std::numeric_limits<float>::infinity();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (std::size_t l = 0; l < 8; ++l) partial[l] = x[i + l] > partial[l] ? x[i + l] : partial[l];
  }
  float m = -std::numeric_limits<float>::infinity();
  for (const float p : partial) m = p > m ? p : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}
double max_of(const double* x, std::size_t n) {
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

ATTEND_KERNEL float exp_shifted_sum(const float* x, float m, std::size_t n) {
  float partial[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (std::size_t l = 0; l < 8; ++l) partial[l] += exp_approx(x[i + l] - m);
  }
  float total = 0;
  for (const float p : partial) total += p;
  for (; i < n; ++i) total += exp_approx(x[i] - m);
  return total;
}
double exp_shifted_sum(const double* x, double m, std::size_t n) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) total += std::exp(x[i] - m);
  return total;
}

ATTEND_KERNEL double exp_shifted_sum_in_double(const float* x, float m, std::size_t n) {
  // the exps of up to 256 elements at a time into a buffer (a loop that vectorises), then added as exp_shifted_sum adds
  double partial[8] = {}, e[256];
  const double shift = m;
  std::size_t i = 0;
  for (; i + 8 <= n;) {
    const std::size_t count = std::min<std::size_t>(256, (n - i) / 8 * 8);
    for (std::size_t j = 0; j < count; ++j) e[j] = exp_approx(static_cast<double>(x[i + j]) - shift);
    for (std::size_t j = 0; j < count; j += 8) {
      for (std::size_t l = 0; l < 8; ++l) partial[l] += e[j + l];
    }
    i += count;
  }
  double total = 0;
  for (const double p : partial) total += p;
  for (; i < n; ++i) total += exp_approx(static_cast<double>(x[i]) - shift);
  return total;
}

ATTEND_KERNEL float exp_shifted_store(const float* x, float m, float* y, std::size_t n) {
  float partial[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (std::size_t l = 0; l < 8; ++l) partial[l] += y[i + l] = exp_approx(x[i + l] - m);
  }
  float total = 0;
  for (const float p : partial) total += p;
  for (; i < n; ++i) total += y[i] = exp_approx(x[i] - m);
  return total;
}
double exp_shifted_store(const double* x, double m, double* y, std::size_t n) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) total += y[i] = std::exp(x[i] - m);
  return total;
}

ATTEND_KERNEL void scaled_exp_minus(const float* x, float m, float l, float scale, float offset, float* y,
                                    std::size_t n, bool accumulate) {
  if (accumulate) {
    for (std::size_t i = 0; i < n; ++i) y[i] += scale * (exp_approx((x[i] - m) - l) - offset);
  } else {
    for (std::size_t i = 0; i < n; ++i) y[i] = scale * (exp_approx((x[i] - m) - l) - offset);
  }
}
void scaled_exp_minus(const double* x, double m, double l, double scale, double offset, double* y, std::size_t n,
                      bool accumulate) {
  if (accumulate) {
    for (std::size_t i = 0; i < n; ++i) y[i] += scale * (std::exp((x[i] - m) - l) - offset);
  } else {
    for (std::size_t i = 0; i < n; ++i) y[i] = scale * (std::exp((x[i] - m) - l) - offset);
  }
}

// The range of x, 0 included, in 16 lanes (so that the loop vectorises without reordering float sums); `probe`
// collects x_i · 0, which is NaN exactly when some x_i is a NaN or ∞.
ATTEND_KERNEL bool quantize_u8(const float* x, std::size_t n, std::uint8_t* q, float* scale, std::int32_t* zero) {
  constexpr std::size_t lanes = 16;
  float lo[lanes] = {}, hi[lanes] = {}, probe[lanes] = {};
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    for (std::size_t l = 0; l < lanes; ++l) {
      const float v = x[i + l];
      lo[l] = v < lo[l] ? v : lo[l];
      hi[l] = v > hi[l] ? v : hi[l];
      probe[l] += v * 0.0f;
    }
  }
  for (std::size_t l = 0; i < n; ++i, ++l) {
    lo[l] = x[i] < lo[l] ? x[i] : lo[l];
    hi[l] = x[i] > hi[l] ? x[i] : hi[l];
    probe[l] += x[i] * 0.0f;
  }
  float low = 0.0f, high = 0.0f, nan = 0.0f;
  for (std::size_t l = 0; l < lanes; ++l) {
    low = lo[l] < low ? lo[l] : low;
    high = hi[l] > high ? hi[l] : high;
    nan += probe[l];
  }
  if (nan != nan) return false;
  const float range = high - low;
  if (range == 0.0f) {  // all zeros
    *scale = 1.0f, *zero = 0;
    for (std::size_t j = 0; j < n; ++j) q[j] = 0;
    return true;
  }
  const float inverse = 255.0f / range;
  if (!(range < std::numeric_limits<float>::infinity()) || !(inverse < std::numeric_limits<float>::infinity())) {
    return false;
  }
  // round to nearest (even) by adding and subtracting 1.5·2²³: |x_i/scale| ≤ 255
  const float shifter = 12582912.0f;
  const std::int32_t z = static_cast<std::int32_t>((-low * inverse + shifter) - shifter);
  for (std::size_t j = 0; j < n; ++j) {
    const std::int32_t v = static_cast<std::int32_t>((x[j] * inverse + shifter) - shifter) + z;
    q[j] = static_cast<std::uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
  }
  *scale = range / 255.0f, *zero = z;
  return true;
}

ATTEND_KERNEL void dequantize(const std::int32_t* acc, const std::int32_t* sums, const float* scales, float factor,
                              std::int32_t zero, float beta, const float* bias, float* y, std::size_t n) {
  if (bias != nullptr) {
    for (std::size_t j = 0; j < n; ++j)
      y[j] = factor * scales[j] * static_cast<float>(acc[j] - zero * sums[j]) + bias[j];
  } else if (beta == 0.0f) {
    for (std::size_t j = 0; j < n; ++j) y[j] = factor * scales[j] * static_cast<float>(acc[j] - zero * sums[j]);
  } else {
    for (std::size_t j = 0; j < n; ++j) {
      y[j] = factor * scales[j] * static_cast<float>(acc[j] - zero * sums[j]) + beta * y[j];
    }
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
