// The float matrix products of a forward and backward pass, in the precision their work is given: an object passed
// with the work — the context of the tape it records on (runtime/context.hpp) — never a process-wide setting, so that
// two models in one process (a float32 one and an int8 one, served side by side) each multiply in their own. The
// backends and how one is chosen by name: precision/precision.hpp; how to add one:
// docs/reference/adding-a-precision.md.
//
// Every float product of the fused ops (ops/fused.hpp), of `dense` and `conv2d` (below) and of the fused loss is
// asked of the tape's Products first; one it declines is OpenBLAS's (autograd/blas.hpp's blas_gemm, which is what a
// tape without a context computes). Double products never go through it: gradient checks stay exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "autograd/ops.hpp"
#include "runtime/context.hpp"
#include "runtime/executor.hpp"

namespace attend {

// Which operands of a product are weights of the model, and whose: the parameter whose value holds op(A)'s numbers, and
// op(B)'s (nullptr: not a weight — an activation, a gradient, a slice of a weight, which is a copy). The caller names
// them (weight_of, below); a precision that keeps copies of weights finds its copy by the parameter named, never by
// where the numbers lie.
struct WeightOperands {
  const Parameter<float>* a = nullptr;
  const Parameter<float>* b = nullptr;
};

// The weight v is: the parameter of a `tape.param` node, or nullptr (any other node; every node of a double tape).
// Throws std::logic_error for an empty or stale handle, as Variable::tape() does.
template <class T>
const Parameter<float>* weight_of(const Variable<T>& v) {
  if constexpr (std::is_same_v<T, float>) {
    return v.tape().node(v.index()).param;
  } else {
    return nullptr;
  }
}

class Products {
 public:
  virtual ~Products() = default;

  // The precision's name ("float32", "bf16", …: precision/precision.hpp).
  virtual std::string name() const = 0;

  // C = alpha · op(A) · op(B) + beta · C (row-major, row strides as stored, blas_gemm's contract; with beta = 0, C is
  // overwritten whatever it held), or with a bias (n numbers): C = alpha · op(A) · op(B) + bias on every row, beta 0
  // and C's old values unread. Returns true having done it, or false having written nothing: the product is then
  // OpenBLAS's (a product with a bias is asked again without it, once the bias is in C). Called with m, n, k ≥ 1, on
  // any thread, several at once. `weights` names the operands that lie in weights of the model; a named weight holds
  // every number its operand reads.
  virtual bool gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
                    const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
                    std::size_t ldc, const float* bias, const WeightOperands& weights) const = 0;

  // What the products keep beside the weights, as a phrase for a program's report on standard error ("75 weight
  // matrices quantized per output channel (12 MB)"); "" for nothing worth saying.
  virtual std::string kept() const { return ""; }

  // What the products did so far that a program's --timings reports, as a phrase ("12 kernels made for their shapes in
  // 14 ms …", precision/shapes.hpp); "" for nothing worth saying.
  virtual std::string report() const { return ""; }

  // Whether this precision rounds operands to bfloat16: the fused output layer then keeps its gradient G rounded
  // (ops/fused.hpp, linear_cross_entropy) and multiplies it by gemm_bfloat16_a.
  virtual bool rounds_to_bfloat16() const { return false; }
  // C = alpha · op(A) · op(B) + beta · C for an A given in bfloat16 already (B in the weight `b_weight` names, or
  // nullptr). Only where rounds_to_bfloat16().
  virtual void gemm_bfloat16_a(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
                               const std::uint16_t* a, std::size_t lda, const float* b, std::size_t ldb, float beta,
                               float* c, std::size_t ldc, const Parameter<float>* b_weight) const;

  // Whether the products keep copies of weights that change as they are trained, which updated() must then hear of.
  virtual bool copies_weights() const { return false; }
  // The numbers [first, last) of `weight`'s value have just been written (an optimizer's update of part of a weight:
  // nn::Trainer tells the products of the run it trains, StepExtras::updated): a copy a backend keeps of them is stale
  // there. Threads may report different numbers at once. A weight the backend keeps no copy of: nothing to do.
  virtual void updated(const Parameter<float>& weight, std::size_t first, std::size_t last) const {
    (void)weight;
    (void)first;
    (void)last;
  }
};

// The products of the work recorded on `tape`: its context's (nullptr when it has none, or none set: OpenBLAS's
// float32); double tapes always nullptr.
template <class T>
const Products* products_of(const Tape<T>& tape) {
  if constexpr (std::is_same_v<T, float>) {
    const Context* context = tape.context();
    return context != nullptr ? context->products : nullptr;
  } else {
    return nullptr;
  }
}

// C = alpha · op(A) · op(B) + beta · C through `products` (nullptr, or a product it declines: blas_gemm), `weights`
// naming the operands that are weights. In double, blas_gemm; `products` and `weights` are ignored.
void gemm(const Products* products, bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k,
          float alpha, const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
          std::size_t ldc, const WeightOperands& weights = {});
void gemm(const Products* products, bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k,
          double alpha, const double* a, std::size_t lda, const double* b, std::size_t ldb, double beta, double* c,
          std::size_t ldc, const WeightOperands& weights = {});

// y = x·Wᵀ + bias (x (m,k), W (n,k), y (m,n) contiguous; bias n numbers or nullptr) through `products`, W the weight
// `w_weight` names (or nullptr); what it declines is blas_linear's (the bias copied into y's rows, then blas_gemm with
// beta = 1).
void linear_product(const Products* products, std::size_t m, std::size_t n, std::size_t k, const float* x,
                    const float* w, const float* bias, float* y, const Parameter<float>* w_weight = nullptr);
void linear_product(const Products* products, std::size_t m, std::size_t n, std::size_t k, const double* x,
                    const double* w, const double* bias, double* y, const Parameter<float>* w_weight = nullptr);

// ---- the layers' products, in the tape's precision ------------------------------------------------------------------

// y = x·Wᵀ + b: autograd's linear(x, W, b) (autograd/ops.hpp) with its three products — y, dx = dy·W, dW += dyᵀ·x —
// asked of the tape's Products. What nn::Linear, the recurrent cells' input and state products, attention's
// projections and the output layers run. Its node is named "linear", its errors are linear's. Equals: linear(x, W, b),
// bit for bit without a context (the same OpenBLAS calls) and in double.
template <class T>
Variable<T> dense(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b = {});

}  // namespace attend
