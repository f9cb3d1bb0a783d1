// The precisions of the float matrix products — every product of the fused ops, `dense` and `conv2d`
// (precision/products.hpp) — by name: each a backend that makes the Products a model's work is given (on the context of
// its tapes), as PyTorch's `torch.set_float32_matmul_precision("medium")` or its CPU autocast chooses them for the
// products it casts, but per model instead of per process. One file each, registered in precision/meson.build; every
// precision, and how to add one: docs/reference/adding-a-precision.md. The first three:
//   float32   OpenBLAS's sgemm: float operands, float accumulation (the default; what the reference engine computes).
//   bfloat16  oneDNN's bfloat16 matmul: each operand rounded to bfloat16 (8 significant bits, round to nearest even;
//             float32's range), products accumulated in float32, the result in float32. Everything else — the
//             elementwise ops, softmax, layer norm, the losses, the sums, the weights and the optimizers' state —
//             stays float32. Error of an element of C = A·B: at most (2⁻⁷ + k·2⁻²³)·Σ_i |a_i||b_i| (the rounding of
//             both operands, then float32 accumulation over k terms), against about k·2⁻²⁴·Σ_i |a_i||b_i| in
//             float32 — for operands in bfloat16's normal range (a denormal float becomes 0, a float beyond
//             bfloat16's largest finite value ∞).
//   int8      for decoding: oneDNN's int8 matmul for the products whose B is the transpose of one of the model's
//             weights (y = x·Wᵀ, as every linear layer, recurrent cell and output layer multiplies),
//             each row of op(A) quantized as it comes — to 0 … 255 over its own range, 0 included (scale s_a, zero
//             point z_a) — the weight per output channel (a row of W: −L … L, scale s_w; L below), products summed
//             in int32 and turned back into float32: c = α·s_a·s_w·Σ_i (q_a − z_a)·q_w (+ β·c). Error of an element:
//             at most α·(s_a/2·Σ_i |w_i| + s_w/2·Σ_i |a_i| + k·s_a·s_w/4), within float32 rounding. Every other
//             product — attention's scores and contexts, a product of another matrix, a row holding a NaN or ∞ —
//             stays float32 (OpenBLAS).
// bfloat16 needs a build with oneDNN (meson option `onednn`; Debian: libdnnl-dev) and a CPU with the AVX512-BF16
// instructions (AMD Zen 4 and later, Intel Cooper Lake and Sapphire Rapids and later): without them oneDNN emulates
// bfloat16 at 2.5× float32's time (measured on the translation benchmark's shapes, docs/performance.md), so attend
// refuses it instead. int8 needs oneDNN only: its kernels use VNNI (AVX512-VNNI or AVX-VNNI: AMD Zen 4 and later,
// Intel Cascade Lake and Alder Lake and later) where the CPU has it, and AVX2 or AVX-512 without it, which still
// decode faster than float32 (docs/performance.md, "int8 decoding"). Double products are never affected (gradient
// checks stay exact). Chapter: docs/11-attention-costs.md ("What precision attention needs").
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/tensor.hpp"
#include "precision/products.hpp"

namespace attend {

// A model's weight matrices, as a precision's products see them: (name, parameter) for every float parameter of two or
// more axes (matrices_of, below). A backend that keeps copies of them (bf16 rounded, int8 quantized) keeps one for
// each parameter, and a product that reads a weight — the weight, its transpose, or a block of their rows and columns
// (a recurrence's gates) — names it (WeightOperands, precision/products.hpp): the copy is found by the weight's
// identity, never by where its numbers lie.
using Matrices = std::vector<std::pair<std::string, const Parameter<float>*>>;

struct PrecisionBackend {
  const char* name;     // as --precision spells it
  const char* summary;  // one line for --help: what its products compute and what it needs
  bool trains;          // whether `attend train` may use it (int8 decodes only)
  // Why this process cannot use it ("" when it can), in one sentence naming what is missing.
  std::string (*unavailable)();
  // The products for a model whose matrices are `weights` (which must outlive them and, for a backend that keeps
  // copies, change only as Products::updated says, in shape not at all). Throws std::invalid_argument naming a weight
  // it cannot take.
  std::unique_ptr<Products> (*make)(const Matrices& weights);
  // The kernels its products run on in this process, for `attend info` ("OpenBLAS's sgemm, its Haswell kernels";
  // "oneDNN's matmul, brg:avx512_core_amx_bf16"). Asked only where unavailable() is "".
  std::string (*kernel)();
};

// Every precision, in the order --help lists them (float32 first, the default).
const std::vector<PrecisionBackend>& precisions();
// The precision named `name`, or nullptr.
const PrecisionBackend* find_precision(const std::string& name);
// The names of every precision (those that train, with `training` set), for --help and error messages.
std::vector<std::string> precision_names(bool training = false);

// The products of precision `name` for `weights`. Throws std::invalid_argument for a name no precision has, and
// std::runtime_error "precision NAME: why" when this process cannot use it.
std::unique_ptr<Products> make_products(const std::string& name, const Matrices& weights);

// The matrices among `parameters`, a list of (name, pointer to a Parameter) as nn::Module::parameters() gives it:
// every float parameter of two or more axes. Biases, norms' gains and the parameters of a double model are left out.
template <class Parameters>
Matrices matrices_of(const Parameters& parameters) {
  Matrices matrices;
  for (const auto& [name, parameter] : parameters) {
    if constexpr (std::is_same_v<std::decay_t<decltype(parameter->value)>, Tensor<float>>) {
      if (parameter->value.rank() >= 2) matrices.emplace_back(name, parameter);
    }
  }
  return matrices;
}

// The oneDNN this build multiplies bf16 and int8 products with: "oneDNN 2.6.3, instructions up to avx512_core_bf16"
// (its version and the effective instruction set it may use here); "" for a build without it.
std::string onednn_description();

// L, the largest |q| of an int8 weight: 127 where oneDNN's int8 kernels use VNNI, 63 where they do not (they then
// add pairs of u8·s8 products in 16 bits, which 2·255·127 would overflow) — about 1 bit less precise weights.
int int8_weight_levels();

}  // namespace attend
