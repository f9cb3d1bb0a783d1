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
//   int8      for decoding: oneDNN's int8 matmul for the products whose B is the transpose of a weight registered
//             below (QuantizedWeights: y = x·Wᵀ, as every linear layer, recurrent cell and output layer multiplies),
//             each row of op(A) quantized as it comes — to 0 … 255 over its own range, 0 included (scale s_a, zero
//             point z_a) — the weight per output channel (a row of W: −L … L, scale s_w; L below), products summed
//             in int32 and turned back into float32: c = α·s_a·s_w·Σ_i (q_a − z_a)·q_w (+ β·c). Error of an element:
//             at most α·(s_a/2·Σ_i |w_i| + s_w/2·Σ_i |a_i| + k·s_a·s_w/4), within float32 rounding. Every other
//             product — attention's scores and contexts, a product of an unregistered matrix, a row holding a NaN
//             or ∞ — stays float32 (OpenBLAS).
// bfloat16 needs a build with oneDNN (meson option `onednn`; Debian: libdnnl-dev) and a CPU with the AVX512-BF16
// instructions (AMD Zen 4 and later, Intel Cooper Lake and Sapphire Rapids and later): without them oneDNN emulates
// bfloat16 at 2.5× float32's time (measured on the translation benchmark's shapes, docs/performance.md), so attend
// refuses it instead. int8 needs oneDNN only: its kernels use VNNI (AVX512-VNNI or AVX-VNNI: AMD Zen 4 and later,
// Intel Cascade Lake and Alder Lake and later) where the CPU has it, and AVX2 or AVX-512 without it, which still
// decode faster than float32 (docs/performance.md, "int8 decoding"). Double products are never affected (gradient
// checks stay exact). Chapter: docs/11-attention-costs.md ("What precision attention needs").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "autograd/tensor.hpp"
#include "fast/executor.hpp"

namespace attend {

enum class Precision { float32, bfloat16, int8 };

// "float32", "bf16", "int8"; and back (nullopt for any other word).
const char* precision_name(Precision precision);
std::optional<Precision> parse_precision(const std::string& name);

// Why `precision` cannot be used in this process ("" when it can), in one sentence naming what is missing.
std::string precision_unavailable(Precision precision);

// Makes every float product from now on, in every thread, run in `precision`; throws std::runtime_error with
// precision_unavailable's sentence when it cannot. Set it between products (before training starts), not while
// another thread multiplies.
void use_precision(Precision precision);
Precision current_precision();

// C = alpha · op(A) · op(B) + beta · C (row-major, row strides as stored) as the bfloat16 products compute it, for an
// A that is in bfloat16 already — a fused op that keeps an operand rounded (fast/fused.hpp's linear_cross_entropy);
// B is rounded, or read from its registered copy, as in every bfloat16 product. Nothing happens when m, n or k is 0.
// Throws std::logic_error unless Precision::bfloat16 is in use.
void gemm_with_bfloat16_a(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
                          const std::uint16_t* a, std::size_t lda, const float* b, std::size_t ldb, float beta,
                          float* c, std::size_t ldc);

// How a bfloat16 product is cut into blocks (fast/precision.cpp says why): the rows of C (or columns) a block takes
// along a side of `extent` ≥ 1, for sums of k terms, when that side's operand is read where it lies — a registered
// copy, or given in bfloat16 — or rounded into a buffer of the product's own: that side in the fewest near-equal parts
// whose blocks hold at most 2²⁰ or 2¹⁸ numbers. For tests; defined in builds without oneDNN too.
std::size_t bfloat16_block_extent(std::size_t extent, std::size_t k, bool read_in_place);

// How many oneDNN primitives the calling thread holds for its bfloat16 products: one for each transposition of A and
// B, beta, and whether alpha is 1 (any other alpha is given when the product runs), made when first needed and kept.
// For tests and diagnostics; 0 without oneDNN.
std::size_t bfloat16_primitives();

// Weights for the int8 products: each matrix quantized per row (output channel), w ≈ s_r·q with q in −L … L and
// s_r = max_c |w_rc| / L, and registered by the address of its numbers for as long as this object lives. While
// Precision::int8 is in use, a product C = α·op(A)·Wᵀ + β·C whose B is a registered W — or a block of its rows and
// columns, as a recurrence's gates — runs on the quantized copy (above). The matrices must not change while they are
// registered: a model being decoded. Registering and unregistering may happen while other threads multiply.
// L, the largest |q| of a quantized weight: 127 where oneDNN's int8 kernels use VNNI, 63 where they do not (they then
// add pairs of u8·s8 products in 16 bits, which 2·255·127 would overflow) — about 1 bit less precise weights.
int int8_weight_levels();

class QuantizedWeights {
 public:
  QuantizedWeights() = default;
  QuantizedWeights(const QuantizedWeights&) = delete;
  QuantizedWeights& operator=(const QuantizedWeights&) = delete;
  ~QuantizedWeights();

  // Quantizes and registers `matrix` (a rank-2 tensor: rows are output channels). Throws std::invalid_argument naming
  // `name` when it is not a matrix, holds a NaN or ∞, or is registered already (by another QuantizedWeights; this
  // one skips a matrix it holds already, as a weight shared by two layers).
  void add(const std::string& name, const Tensor<float>& matrix);
  std::size_t count() const { return registered_.size(); }  // matrices registered
  std::size_t bytes() const { return bytes_; }              // of their quantized copies, scales included

 private:
  std::vector<const float*> registered_;
  std::size_t bytes_ = 0;
};

// Calls visit(name, tensor) for the weights of a model's products: every float tensor of two or more axes among
// `parameters`, a list of (name, pointer to an object whose `value` is the tensor) as nn::Module::parameters() gives
// it. Biases, norms' gains and the tensors of a double model are left out.
template <class Parameters, class Visit>
void for_each_matrix(const Parameters& parameters, Visit&& visit) {
  for (const auto& [name, parameter] : parameters) {
    if constexpr (std::is_same_v<std::decay_t<decltype(parameter->value)>, Tensor<float>>) {
      if (parameter->value.rank() >= 2) visit(name, parameter->value);
    }
  }
}

// Weights for the bfloat16 products: each tensor registered by the address of its numbers for as long as this object
// lives, and rounded to bfloat16 the first time a product reads it. While Precision::bfloat16 is in use, a product
// whose A or B lies in a registered tensor — a weight, its transpose, a block of their rows and columns — reads that
// copy instead of rounding the operand again: the same bits, without the conversion at every product (a recurrence
// multiplies by W_hh at every time step, forward and backward). For training: register the weights once, and call
// refresh() after each optimizer step, before the next product; a product that runs while a registered tensor has
// changed since the last refresh() (or since it was registered) reads its old values. Registering, refreshing and
// unregistering happen between products, not while another thread multiplies.
class BFloat16Weights {
 public:
  BFloat16Weights();
  BFloat16Weights(const BFloat16Weights&) = delete;
  BFloat16Weights& operator=(const BFloat16Weights&) = delete;
  ~BFloat16Weights();

  // Registers `tensor`. Throws std::invalid_argument naming `name` when it is registered already by another
  // BFloat16Weights (this one skips a tensor it holds already, as a weight shared by two layers).
  void add(const std::string& name, const Tensor<float>& tensor);
  // Registers the weights of a model's products: the tensors for_each_matrix (above) visits.
  template <class Parameters>
  void add_matrices(const Parameters& parameters) {
    for_each_matrix(parameters, [this](const std::string& name, const Tensor<float>& tensor) { add(name, tensor); });
  }
  // The registered tensors have changed: the copies that products have read so far are rounded again now, on the
  // executor's threads when one is given; the others when a product first reads them.
  void refresh(const Executor& executor = {});
  // The numbers [first, last) of a registered tensor have changed (an optimizer's update of part of a weight,
  // StepExtras::updated): its copy is rounded again there if a product has read it (a copy not made yet is made when
  // first read). Threads may refresh different numbers at once; nothing else may happen to this object meanwhile.
  // Numbers of no tensor this object registered: nothing to do. After parts have been refreshed this way, every
  // number that changed must have been refreshed before the next product reads the copy.
  void refresh(const float* first, const float* last);
  std::size_t count() const { return copies_.size(); }  // tensors registered
  std::size_t bytes() const;                            // of the copies made so far

  struct Copy;  // (precision.cpp)

 private:
  std::vector<std::shared_ptr<Copy>> copies_;
};

}  // namespace attend
