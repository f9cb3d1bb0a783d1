// bfloat16 conversions (bfloat16.hpp): a scalar one that follows Intel's pseudo-code of VCVTNE2PS2BF16 bit for bit,
// and the instruction itself, 32 floats at a time, on the CPUs that have it.
#include "precision/bfloat16.hpp"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#define ATTEND_BF16_X86 1
#include <immintrin.h>
#else
#define ATTEND_BF16_X86 0
#endif

namespace attend::bf16 {

std::uint16_t from_float(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);    // NaN, made quiet
  if (magnitude < 0x00800000u) return static_cast<std::uint16_t>((bits >> 16) & 0x8000u);  // denormal or zero: ±0
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);  // to nearest, ties to the even upper half
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

float to_float(std::uint16_t h) {
  const std::uint32_t bits = std::uint32_t{h} << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

#if ATTEND_BF16_X86
namespace {

__attribute__((target("avx512f,avx512bf16"))) void convert_avx512(const float* x, std::uint16_t* y, std::size_t n) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512bh pair = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
    _mm512_storeu_si512(y + i, reinterpret_cast<__m512i>(pair));
  }
  for (; i < n; ++i) y[i] = from_float(x[i]);
}

// convert_avx512 with streaming stores: the numbers before y's first 64-byte boundary one by one, then 32 at a time.
__attribute__((target("avx512f,avx512bf16"))) void stream_avx512(const float* x, std::uint16_t* y, std::size_t n) {
  std::size_t i = 0;
  for (; i < n && reinterpret_cast<std::uintptr_t>(y + i) % 64 != 0; ++i) y[i] = from_float(x[i]);
  for (; i + 32 <= n; i += 32) {
    const __m512bh pair = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
    _mm512_stream_si512(reinterpret_cast<__m512i*>(y + i), reinterpret_cast<__m512i>(pair));
  }
  _mm_sfence();  // the streamed stores are seen before whatever this thread does next
  for (; i < n; ++i) y[i] = from_float(x[i]);
}

}  // namespace

bool cpu_has_instructions() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
  return has;
}
#else
bool cpu_has_instructions() { return false; }
#endif

void from_float(const float* x, std::uint16_t* y, std::size_t n) {
#if ATTEND_BF16_X86
  if (cpu_has_instructions()) return convert_avx512(x, y, n);
#endif
  for (std::size_t i = 0; i < n; ++i) y[i] = from_float(x[i]);
}

void from_float_streamed(const float* x, std::uint16_t* y, std::size_t n) {
#if ATTEND_BF16_X86
  if (cpu_has_instructions()) return stream_avx512(x, y, n);
#endif
  from_float(x, y, n);
}

}  // namespace attend::bf16
