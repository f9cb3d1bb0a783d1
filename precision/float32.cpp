// The float32 precision (precision.hpp): OpenBLAS's sgemm, float operands and sums — what a tape without a context
// computes. Its products decline every product, which then is OpenBLAS's (products.hpp).
#include "precision/precision.hpp"
#include "runtime/cpu.hpp"

namespace attend {

namespace {

class Float32Products final : public Products {
 public:
  std::string name() const override { return "float32"; }
  bool gemm(bool, bool, std::size_t, std::size_t, std::size_t, float, const float*, std::size_t, const float*,
            std::size_t, float, float*, std::size_t, const float*, const WeightOperands&) const override {
    return false;
  }
};

}  // namespace

PrecisionBackend float32_precision() {
  return {"float32",
          "OpenBLAS's sgemm, float32 operands and sums",
          true,
          [] { return std::string(); },
          [](const Matrices&) -> std::unique_ptr<Products> { return std::make_unique<Float32Products>(); },
          [] { return blas_routine_kernels("sgemm"); }};
}

}  // namespace attend
