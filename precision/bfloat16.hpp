// bfloat16 numbers (the upper half of a float32: sign, 8 exponent bits, 7 stored significand bits) and the conversion
// of float arrays to them, for the bfloat16 products of precision/precision.hpp (and chapter 11, which rounds by hand).
#pragma once

#include <cstddef>
#include <cstdint>

namespace attend::bf16 {

// Rounds to the nearest bfloat16, ties to even, exactly as the AVX512-BF16 instruction VCVTNE2PS2BF16 does (Intel's
// pseudo-code): a NaN stays a NaN (made quiet), a denormal float becomes a zero of its sign, a float beyond bfloat16's
// largest finite value rounds to infinity.
std::uint16_t from_float(float x);
float to_float(std::uint16_t h);

// y[i] = from_float(x[i]) for i < n; by VCVTNE2PS2BF16 on a CPU that has it, the same bits either way.
void from_float(const float* x, std::uint16_t* y, std::size_t n);
// The same numbers, y written past the cache (streaming stores) from its first 64-byte boundary on: for a copy of
// millions of weights that nothing reads before the next step's products (bf16.cpp's copies), whose lines a
// plain store would first read in.
void from_float_streamed(const float* x, std::uint16_t* y, std::size_t n);

// Whether this CPU has AVX512-BF16 (and AVX-512 F).
bool cpu_has_instructions();

}  // namespace attend::bf16
