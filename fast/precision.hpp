// The precision of the float matrix products — every product the engine's ops and the fused kernels compute through
// blas_gemm — chosen once for the whole process, as PyTorch's `torch.set_float32_matmul_precision("medium")` chooses
// it (and as its CPU autocast does for the products it casts):
//   float32   OpenBLAS's sgemm: float operands, float accumulation (the default; what the reference engine computes).
//   bfloat16  oneDNN's bfloat16 matmul: each operand rounded to bfloat16 (8 significant bits, round to nearest even;
//             float32's range), products accumulated in float32, the result in float32. Everything else — the
//             elementwise ops, softmax, layer norm, the losses, the sums, the weights and the optimizers' state —
//             stays float32. Error of an element of C = A·B: at most (2⁻⁷ + k·2⁻²³)·Σ_i |a_i||b_i| (the rounding of
//             both operands, then float32 accumulation over k terms), against about k·2⁻²⁴·Σ_i |a_i||b_i| in
//             float32 — for operands in bfloat16's normal range (a denormal float becomes 0, a float beyond
//             bfloat16's largest finite value ∞).
// bfloat16 needs a build with oneDNN (meson option `onednn`; Debian: libdnnl-dev) and a CPU with the AVX512-BF16
// instructions (AMD Zen 4 and later, Intel Cooper Lake and Sapphire Rapids and later): without them oneDNN emulates
// bfloat16 at 2.5× float32's time (measured on the translation benchmark's shapes, docs/performance.md), so attend
// refuses it instead. Double products are never affected (gradient checks stay exact). Chapter:
// docs/11-attention-costs.md ("What precision attention needs").
#pragma once

#include <optional>
#include <string>

namespace attend {

enum class Precision { float32, bfloat16 };

// "float32", "bf16"; and back (nullopt for any other word).
const char* precision_name(Precision precision);
std::optional<Precision> parse_precision(const std::string& name);

// Why `precision` cannot be used in this process ("" when it can), in one sentence naming what is missing.
std::string precision_unavailable(Precision precision);

// Makes every float product from now on, in every thread, run in `precision`; throws std::runtime_error with
// precision_unavailable's sentence when it cannot. Set it between products (before training starts), not while
// another thread multiplies.
void use_precision(Precision precision);
Precision current_precision();

}  // namespace attend
