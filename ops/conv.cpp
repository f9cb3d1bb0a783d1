// The image ops of a small convolutional encoder (images.hpp): conv2d as im2col + one gemm per image, asked of the
// tape's products (backward: the two products of that gemm, then col2im), and max_pool2d, which saves the position of
// each window's maximum. Layouts are PyTorch's (x (B,C,H,W), weight (O,C,kh,kw)). Chapter 13's convolutional encoder
// is built from them (docs/13-visual-attention.md); table: docs/reference/ops.md.
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/images.hpp"
#include "precision/products.hpp"

namespace attend {

namespace {

// The sizes of one convolution, computed once by the forward pass and kept by its backward function.
struct ConvGeometry {
  std::size_t batch = 0, channels = 0, height = 0, width = 0;  // x (B,C,H,W)
  std::size_t out_channels = 0, kernel_h = 0, kernel_w = 0;    // W (O,C,kh,kw)
  std::size_t stride = 1, padding = 0;
  std::size_t out_h = 0, out_w = 0;  // y (B,O,H',W')

  std::size_t image_size() const { return channels * height * width; }  // one x_b
  std::size_t rows() const { return channels * kernel_h * kernel_w; }   // of cols: C·kh·kw
  std::size_t positions() const { return out_h * out_w; }               // columns of cols: H'·W'
};

// cols (C·kh·kw, H'·W') of one image x_b (C,H,W): cols[(c·kh + u)·kw + v, i·W' + j] = x̃[c, i·s + u, j·s + v], where x̃
// is x_b zero-padded by p on every side (the padding is never stored: positions outside x_b read as 0).
template <class T>
void im2col(const ConvGeometry& g, const T* image, T* cols) {
  for (std::size_t c = 0; c < g.channels; ++c)
    for (std::size_t u = 0; u < g.kernel_h; ++u)
      for (std::size_t v = 0; v < g.kernel_w; ++v) {
        T* row = cols + ((c * g.kernel_h + u) * g.kernel_w + v) * g.positions();
        for (std::size_t i = 0; i < g.out_h; ++i) {
          T* out = row + i * g.out_w;
          // row of x̃ = i·s + u, so row of x_b = i·s + u − p (unsigned: wraps past H when above the top edge)
          const std::size_t h = i * g.stride + u - g.padding;
          if (i * g.stride + u < g.padding || h >= g.height) {
            std::fill(out, out + g.out_w, T(0));
            continue;
          }
          const T* in = image + (c * g.height + h) * g.width;
          for (std::size_t j = 0; j < g.out_w; ++j) {
            const std::size_t w = j * g.stride + v - g.padding;
            out[j] = (j * g.stride + v < g.padding || w >= g.width) ? T(0) : in[w];
          }
        }
      }
}

// The adjoint of im2col: image (C,H,W) += the columns scattered back, each entry of dcols into the one element of
// x_b it was read from (entries that came from the padding are dropped). An element read by several windows gets
// their sum.
template <class T>
void col2im_add(const ConvGeometry& g, const T* dcols, T* image) {
  for (std::size_t c = 0; c < g.channels; ++c)
    for (std::size_t u = 0; u < g.kernel_h; ++u)
      for (std::size_t v = 0; v < g.kernel_w; ++v) {
        const T* row = dcols + ((c * g.kernel_h + u) * g.kernel_w + v) * g.positions();
        for (std::size_t i = 0; i < g.out_h; ++i) {
          const std::size_t h = i * g.stride + u - g.padding;
          if (i * g.stride + u < g.padding || h >= g.height) continue;
          const T* in = row + i * g.out_w;
          T* out = image + (c * g.height + h) * g.width;
          for (std::size_t j = 0; j < g.out_w; ++j) {
            const std::size_t w = j * g.stride + v - g.padding;
            if (j * g.stride + v >= g.padding && w < g.width) out[w] += in[j];
          }
        }
      }
}

std::string conv2d_shapes(const Shape& x, const Shape& W, const Shape* b, const Conv2dOptions& options) {
  return "conv2d: input " + to_string(x) + ", weight " + to_string(W) + ", bias " +
         (b ? to_string(*b) : std::string("none")) + ", stride " + std::to_string(options.stride) + ", padding " +
         std::to_string(options.padding) + ": ";
}

}  // namespace

template <class T>
Variable<T> conv2d(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b, const Conv2dOptions& options) {
  Tape<T>& tape = b.empty() ? tape_of("conv2d", {&x, &W}) : tape_of("conv2d", {&x, &W, &b});
  const Shape& xs = x.value().shape();
  const Shape& ws = W.value().shape();
  const Shape* bs = b.empty() ? nullptr : &b.value().shape();
  auto fail = [&](const std::string& why) { return std::invalid_argument(conv2d_shapes(xs, ws, bs, options) + why); };
  if (xs.rank() != 4 || ws.rank() != 4) throw fail("expected input (B,C,H,W) and weight (O,C,kh,kw), both of rank 4");
  if (xs[1] != ws[1]) {
    throw fail("the input has " + std::to_string(xs[1]) + " channels, the weight expects " + std::to_string(ws[1]));
  }
  if (bs && (bs->rank() != 1 || (*bs)[0] != ws[0])) throw fail("expected bias (O,) = (" + std::to_string(ws[0]) + ",)");
  if (options.stride == 0) throw fail("the stride must be positive");
  if (ws[2] == 0 || ws[3] == 0) throw fail("the kernel is empty");
  if (ws[2] > xs[2] + 2 * options.padding || ws[3] > xs[3] + 2 * options.padding) {
    throw fail("the kernel is larger than the padded input (" + std::to_string(xs[2] + 2 * options.padding) + "×" +
               std::to_string(xs[3] + 2 * options.padding) + ")");
  }
  ConvGeometry g;
  g.batch = xs[0], g.channels = xs[1], g.height = xs[2], g.width = xs[3];
  g.out_channels = ws[0], g.kernel_h = ws[2], g.kernel_w = ws[3];
  g.stride = options.stride, g.padding = options.padding;
  g.out_h = (g.height + 2 * g.padding - g.kernel_h) / g.stride + 1;
  g.out_w = (g.width + 2 * g.padding - g.kernel_w) / g.stride + 1;
  const std::size_t O = g.out_channels, K = g.rows(), N = g.positions();
  const Products* products = products_of(tape);
  const Parameter<float>* weight = weight_of(W);

  // gemm with beta = 0 overwrites y_b, except when K = 0 (no input channels: gemm writes nothing, y = b or 0)
  Tensor<T> y = (bs == nullptr && K == 0) ? Tensor<T>(Shape{g.batch, O, g.out_h, g.out_w})
                                          : Tensor<T>(Shape{g.batch, O, g.out_h, g.out_w}, uninitialized);
  Tensor<T> cols(Shape{K, N}, uninitialized);  // one scratch buffer (C·kh·kw, H'·W'), reused by every image
  for (std::size_t n = 0; n < g.batch; ++n) {
    T* y_b = y.data() + n * O * N;
    // y_b (O, H'W') = b broadcast along each row, then y_b += W (O, K) · cols (K, H'W')
    if (bs) {
      for (std::size_t o = 0; o < O; ++o) std::fill(y_b + o * N, y_b + (o + 1) * N, b.value().data()[o]);
    }
    im2col(g, x.value().data() + n * g.image_size(), cols.data());
    gemm(products, false, false, O, N, K, T(1), W.value().data(), K, cols.data(), N, bs ? T(1) : T(0), y_b, N,
         {weight, nullptr});
  }

  std::vector<Variable<T>> inputs{x, W};
  if (bs) inputs.push_back(b);
  // Backward recomputes each image's columns instead of keeping all B of them from forward: the saved columns would
  // be kh·kw times the size of x (9× for a 3×3 kernel), held on the tape until backward, for the price of one more
  // im2col per image, which is cheap next to the two gemms.
  return tape.record("conv2d", std::move(y), inputs, [products, weight, g](BackwardContext<T>& c) {
    const std::size_t O = g.out_channels, K = g.rows(), N = g.positions();
    const bool want_x = c.wants(0) && O > 0, want_W = c.wants(1);
    // one scratch buffer (K, H'W') per backward: first the columns of x_b (for dW), then dcols (for dx)
    Tensor<T> scratch(Shape{K, N}, uninitialized);
    for (std::size_t n = 0; n < g.batch; ++n) {
      const T* dy_b = c.dy().data() + n * O * N;
      if (want_W) {
        // dW (O, K) += dy_b (O, H'W') · cols_bᵀ (H'W', K)
        im2col(g, c.x(0).data() + n * g.image_size(), scratch.data());
        gemm(products, false, true, O, K, N, T(1), dy_b, N, scratch.data(), N, T(1), c.dx(1).data(), K);
      }
      if (want_x) {
        // dcols (K, H'W') = Wᵀ (K, O) · dy_b (O, H'W'), then dx_b (C,H,W) += col2im(dcols)
        gemm(products, true, false, K, N, O, T(1), c.x(1).data(), K, dy_b, N, T(0), scratch.data(), N,
             {weight, nullptr});
        col2im_add(g, scratch.data(), c.dx(0).data() + n * g.image_size());
      }
    }
    // db[o] += Σ_{b,i,j} dy[b,o,i,j]
    if (c.input_count() == 3 && c.wants(2)) {
      T* db = c.dx(2).data();
      const T* dy = c.dy().data();
      for (std::size_t n = 0; n < g.batch; ++n)
        for (std::size_t o = 0; o < O; ++o) {
          const T* plane = dy + (n * O + o) * N;
          T total = T(0);
          for (std::size_t p = 0; p < N; ++p) total += plane[p];
          db[o] += total;
        }
    }
  });
}

template <class T>
Variable<T> max_pool2d(const Variable<T>& x, std::size_t kernel, std::size_t stride) {
  Tape<T>& tape = tape_of("max_pool2d", {&x});
  const Shape& xs = x.value().shape();
  auto fail = [&](const std::string& why) {
    return std::invalid_argument("max_pool2d: input " + to_string(xs) + ", kernel " + std::to_string(kernel) +
                                 ", stride " + std::to_string(stride) + ": " + why);
  };
  if (xs.rank() != 4) throw fail("expected an input (B,C,H,W) of rank 4");
  if (kernel == 0) throw fail("the kernel must be positive");
  if (kernel > xs[2] || kernel > xs[3]) throw fail("the kernel is larger than the input");
  const std::size_t s = stride == 0 ? kernel : stride;
  const std::size_t planes = xs[0] * xs[1], height = xs[2], width = xs[3];
  const std::size_t out_h = (height - kernel) / s + 1, out_w = (width - kernel) / s + 1;
  Tensor<T> y(Shape{xs[0], xs[1], out_h, out_w}, uninitialized);
  // the flat index into x of each window's maximum, one per element of y, for backward
  std::vector<std::size_t> argmax(y.size());
  const T* in = x.value().data();
  for (std::size_t p = 0; p < planes; ++p)
    for (std::size_t i = 0; i < out_h; ++i)
      for (std::size_t j = 0; j < out_w; ++j) {
        std::size_t best = (p * height + i * s) * width + j * s;  // the window's top-left element
        for (std::size_t u = 0; u < kernel; ++u)
          for (std::size_t v = 0; v < kernel; ++v) {
            const std::size_t at = (p * height + i * s + u) * width + j * s + v;
            // strictly greater keeps the first maximum; a NaN wins over anything (a later NaN too, as PyTorch)
            if (in[at] > in[best] || std::isnan(in[at])) best = at;
          }
        const std::size_t out = (p * out_h + i) * out_w + j;
        argmax[out] = best;
        y.data()[out] = in[best];
      }
  return tape.record("max_pool2d", std::move(y), {x}, [argmax = std::move(argmax)](BackwardContext<T>& c) {
    // dx[argmax] += dy (windows that overlap may send several gradients to one element)
    const T* dy = c.dy().data();
    T* dx = c.dx(0).data();
    for (std::size_t out = 0; out < argmax.size(); ++out) dx[argmax[out]] += dy[out];
  });
}

#define ATTEND_INSTANTIATE(T)                                                                                    \
  template Variable<T> conv2d(const Variable<T>&, const Variable<T>&, const Variable<T>&, const Conv2dOptions&); \
  template Variable<T> max_pool2d(const Variable<T>&, std::size_t, std::size_t);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
