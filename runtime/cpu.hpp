// What this machine's CPU can run, and the OpenBLAS kernels its float32 products run on.
//
// OpenBLAS chooses its kernels ("core") once, when the library loads, from the CPU's family and model; a model it does
// not know gets its generic Prescott kernels (SSE3) even on a CPU with AVX-512 — Debian's OpenBLAS 0.3.21 on Intel's
// Sapphire and Emerald Rapids Xeons, where its sgemm then runs at a quarter of what the CPU gives
// (docs/performance.md). It reads the environment variable OPENBLAS_CORETYPE first and has no call to change the core
// afterwards, so the fix is the program's: `use_fitting_blas_kernels` at the top of main runs the program again with
// OPENBLAS_CORETYPE set to the core that fits the CPU, when OpenBLAS chose an older one. An OPENBLAS_CORETYPE already
// set is always kept (some systems set it where an older OpenBLAS crashes on a newer kernel); a BLAS that is not a
// DYNAMIC_ARCH OpenBLAS is reported, never guessed at. The same seed then gives the bytes OpenBLAS gives on that core
// when it knows the CPU.
#pragma once

#include <string>

namespace attend {

// The instruction sets attend's products and kernels choose by, as CPUID reports them, with whether the operating
// system saves the registers they use (XGETBV).
struct CpuFeatures {
  std::string vendor;              // "GenuineIntel", "AuthenticAMD", …
  std::string name;                // the brand string ("AMD EPYC 7B12", …)
  unsigned family = 0, model = 0;  // as lscpu shows them: the extended family and model folded in
  bool avx = false, fma = false, avx2 = false;
  bool avx512 = false;  // AVX-512 F, DQ, BW and VL, with the mask and 512-bit registers saved by the system
  bool avx512_bf16 = false, avx512_vnni = false, avx_vnni = false;
  bool amx_bf16 = false, amx_int8 = false;  // the CPU has them, and the system saves the tile registers
  bool amx_granted = false;  // Linux hands a process the tiles when it asks (arch_prctl ARCH_GET_XCOMP_SUPP)
};

// This machine's features, read once.
const CpuFeatures& cpu_features();

// The OpenBLAS this process runs with, its kernels, and the kernels that fit the CPU.
struct BlasKernels {
  std::string config;         // openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH …"; "" for another BLAS
  std::string core;           // openblas_get_corename(): the kernels it runs ("Haswell", "SkylakeX", "Prescott", …)
  std::string coretype;       // OPENBLAS_CORETYPE as set when the program started ("" when unset)
  std::string fitting;        // the core that fits the CPU, when `core` is older and could be changed; else ""
  std::string why_unchanged;  // when `core` is older than the CPU but stays: why (another BLAS, no DYNAMIC_ARCH, …)
  std::string replaced;       // in a program run again by use_fitting_blas_kernels: the core OpenBLAS chose first
};

// The decision, from what OpenBLAS says and what the CPU has (a test gives it an unknown CPU): `fitting` is set when
// `core` uses narrower vectors than the CPU runs — SkylakeX for AVX-512, Haswell for AVX2 + FMA, Sandybridge for AVX —
// and OPENBLAS_CORETYPE is unset (`coretype` empty) and the library is a DYNAMIC_ARCH OpenBLAS.
BlasKernels fitting_blas_kernels(const std::string& config, const std::string& core, const std::string& coretype,
                                 const CpuFeatures& cpu);
// This process's: OpenBLAS's own answers, this CPU.
BlasKernels blas_kernels();

// "OpenBLAS's ROUTINE, its CORE kernels", or "the BLAS's ROUTINE (not OpenBLAS)": what a product of that routine runs.
std::string blas_routine_kernels(const std::string& routine);

// At the top of a program's main, before anything else: when OpenBLAS runs older kernels than this CPU fits
// (blas_kernels().fitting), prints one line saying so to standard error (on the first rank of an Open MPI run only)
// and runs the program again — the same arguments, OPENBLAS_CORETYPE set to the fitting core and
// ATTEND_OPENBLAS_REPLACED to the one it replaces (BlasKernels::replaced) — in place of this process (execv of
// /proc/self/exe). Returns only when nothing needs changing, or when running again failed (said on
// standard error; the program goes on with OpenBLAS's choice).
void use_fitting_blas_kernels(char** argv);

}  // namespace attend
