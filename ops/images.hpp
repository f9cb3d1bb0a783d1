// The image ops: batches of images (B, C, H, W), as PyTorch's NCHW — a convolution whose products run in the tape's
// precision (precision/products.hpp) and max pooling; what chapter 13's convolutional encoder is built from
// (docs/13-visual-attention.md). Source: conv.cpp; gradient checks: tests/ops/test_conv.cpp.
#pragma once

#include <cstddef>

#include "autograd/ops.hpp"

namespace attend {

// Stride and zero padding (the same on all four sides) of conv2d.
struct Conv2dOptions {
  std::size_t stride = 1;
  std::size_t padding = 0;
};
// x (B,C,H,W), W (O,C,kh,kw) as torch.nn.Conv2d's weight, b (O,) or none → y (B,O,H',W'), H' = ⌊(H+2p−kh)/s⌋ + 1,
// likewise W'; x̃ is x zero-padded by p on all four sides. Per image one gemm: y_b (O,H'W') = W (O,C·kh·kw) · cols_b,
// cols_b = im2col(x̃_b) (C·kh·kw, H'W'), plus b, its products asked of the tape's Products (precision/products.hpp).
// Cross-correlation, as torch.nn.functional.conv2d.
// y[b,o,i,j] = b[o] + Σ_{c,u,v} W[o,c,u,v] x̃[b,c,i·s+u,j·s+v]
// dW += Σ_b dy_b cols_bᵀ, dx_b += col2im(Wᵀ dy_b) (scatter-add), db[o] += Σ_{b,i,j} dy[b,o,i,j]
template <class T>
Variable<T> conv2d(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b = {},
                   const Conv2dOptions& options = {});
// x (B,C,H,W) → y (B,C,H',W'), H' = ⌊(H−k)/s⌋ + 1, likewise W'; stride 0 means s = k. Ties go to the first maximum
// in row-major order; a NaN counts as the maximum and, as in PyTorch's CPU kernel, a later NaN replaces an earlier one.
// y[b,c,i,j] = max_{u,v<k} x[b,c,i·s+u,j·s+v]
// dx[b,c,i·s+u*,j·s+v*] += dy[b,c,i,j], (u*,v*) the window's maximum found (and saved) by forward
template <class T>
Variable<T> max_pool2d(const Variable<T>& x, std::size_t kernel = 2, std::size_t stride = 0);

}  // namespace attend
