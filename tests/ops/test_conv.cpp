// Tests of the image ops (ops/conv.cpp): conv2d (im2col + gemm) and max_pool2d. Values on small cases computed
// by hand and one computed by PyTorch, equality with a direct 7-loop convolution on random data, finite-difference
// gradient checks in double over strides, paddings, channel counts and kernel shapes, the first-maximum and NaN
// rules of pooling, a reused input, and the shape errors.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/images.hpp"
#include "tests/autograd/helpers.hpp"

using namespace attend;
using namespace attend::testing;

namespace {

// y = conv2d(x, W, b) by the definition, one output element at a time, accumulated in double:
// y[n,o,i,j] = b[o] + Σ_{c,u,v} W[o,c,u,v] x[n,c,i·s+u−p,j·s+v−p] (0 outside x). Also returns each element's error
// scale |b[o]| + Σ |W| |x| (the size a rounding error of the sum can have).
struct Direct {
  std::vector<double> value, scale;
};
template <class T>
Direct direct_conv2d(const Tensor<T>& x, const Tensor<T>& W, const Tensor<T>* b, std::size_t s, std::size_t p) {
  const std::size_t B = x.shape()[0], C = x.shape()[1], H = x.shape()[2], Wd = x.shape()[3];
  const std::size_t O = W.shape()[0], kh = W.shape()[2], kw = W.shape()[3];
  const std::size_t out_h = (H + 2 * p - kh) / s + 1, out_w = (Wd + 2 * p - kw) / s + 1;
  Direct d;
  for (std::size_t n = 0; n < B; ++n)
    for (std::size_t o = 0; o < O; ++o)
      for (std::size_t i = 0; i < out_h; ++i)
        for (std::size_t j = 0; j < out_w; ++j) {
          double sum = b ? static_cast<double>(b->data()[o]) : 0.0, scale = std::abs(sum);
          for (std::size_t c = 0; c < C; ++c)
            for (std::size_t u = 0; u < kh; ++u)
              for (std::size_t v = 0; v < kw; ++v) {
                const std::ptrdiff_t h = static_cast<std::ptrdiff_t>(i * s + u) - static_cast<std::ptrdiff_t>(p);
                const std::ptrdiff_t w = static_cast<std::ptrdiff_t>(j * s + v) - static_cast<std::ptrdiff_t>(p);
                if (h < 0 || w < 0 || h >= static_cast<std::ptrdiff_t>(H) || w >= static_cast<std::ptrdiff_t>(Wd)) {
                  continue;
                }
                const std::size_t hu = static_cast<std::size_t>(h), wu = static_cast<std::size_t>(w);
                const double xv = x.data()[((n * C + c) * H + hu) * Wd + wu];
                const double wv = W.data()[((o * C + c) * kh + u) * kw + v];
                sum += wv * xv;
                scale += std::abs(wv * xv);
              }
          d.value.push_back(sum);
          d.scale.push_back(scale);
        }
  return d;
}

// n distinct values 0.05 apart, centred on 0, in a random order: every pooling window has a unique maximum with a gap
// far larger than the gradient checker's step.
Tensor<double> distinct_tensor(const Shape& shape, std::uint64_t seed) {
  Tensor<double> t(shape);
  const std::size_t n = t.size();
  for (std::size_t i = 0; i < n; ++i) t.data()[i] = 0.05 * (static_cast<double>(i) - static_cast<double>(n) / 2);
  Rng rng(seed);
  for (std::size_t i = n; i > 1; --i) std::swap(t.data()[i - 1], t.data()[rng.next() % i]);
  return t;
}

std::vector<double> values_of(const Tensor<double>& t) { return std::vector<double>(t.data(), t.data() + t.size()); }

}  // namespace

BOOST_AUTO_TEST_SUITE(conv)

// ---- conv2d ------------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE_TEMPLATE(conv2d_hand_computed_3x3_input_2x2_kernel, T, float_types) {
  // x = [[1,2,3],[4,5,6],[7,8,9]], W = [[1,0],[-1,2]], b = 0.5: y[i,j] = x[i,j] - x[i+1,j] + 2 x[i+1,j+1] + 0.5
  Tape<T> tape;
  const auto x = tape.leaf(Tensor<T>(Shape{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const auto W = tape.leaf(Tensor<T>(Shape{1, 1, 2, 2}, {1, 0, -1, 2}));
  const auto b = tape.leaf(Tensor<T>(Shape{1}, {0.5}));
  const auto y = conv2d(x, W, b);
  BOOST_TEST(values_are(y.value(), Shape{1, 1, 2, 2}, {7.5, 9.5, 13.5, 15.5}));
  tape.backward(sum(y));
  // dW[u,v] = Σ_{i,j} x[i+u,j+v] (the 2×2 block sums), db = 4 windows, dx[h,w] = Σ of the W entries that touch it
  BOOST_TEST(values_are(W.grad(), Shape{1, 1, 2, 2}, {12, 16, 24, 28}));
  BOOST_TEST(values_are(b.grad(), Shape{1}, {4}));
  BOOST_TEST(values_are(x.grad(), Shape{1, 1, 3, 3}, {1, 1, 0, 0, 2, 2, -1, 1, 2}));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(conv2d_hand_computed_padding_and_stride, T, float_types) {
  // 1×1 kernel 2, padding 1, stride 2 on a 3×3 input: the padded input is 5×5 and the 3×3 output samples its rows and
  // columns 0, 2, 4, i.e. the padding everywhere except x[1,1] = 5 in the centre
  Tape<T> tape;
  const auto x = tape.constant(Tensor<T>(Shape{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const auto W = tape.constant(Tensor<T>(Shape{1, 1, 1, 1}, {2}));
  BOOST_TEST(
      values_are(conv2d(x, W, {}, Conv2dOptions{2, 1}).value(), Shape{1, 1, 3, 3}, {0, 0, 0, 0, 10, 0, 0, 0, 0}));
}

BOOST_AUTO_TEST_CASE(conv2d_matches_pytorch) {
  // From torch 1.13.1 (Debian python3-torch):
  //   x = torch.arange(24.).reshape(1,2,3,4) % 7 - 3; W = torch.arange(24.).reshape(2,2,2,3) % 5 - 2
  //   b = torch.tensor([0.5, -1.]); y = torch.nn.functional.conv2d(x, W, b, stride=2, padding=1)
  //   dy = torch.arange(8.).reshape(y.shape) % 3 - 1; y.backward(dy)
  // Small integers, so every value is exact in float too.
  Tensor<double> xv(Shape{1, 2, 3, 4}), Wv(Shape{2, 2, 2, 3}), dy(Shape{1, 2, 2, 2});
  for (std::size_t i = 0; i < 24; ++i) xv.data()[i] = static_cast<double>(i % 7) - 3;
  for (std::size_t i = 0; i < 24; ++i) Wv.data()[i] = static_cast<double>(i % 5) - 2;
  for (std::size_t i = 0; i < 8; ++i) dy.data()[i] = static_cast<double>(i % 3) - 1;
  Tape<double> tape;
  const auto x = tape.leaf(xv), W = tape.leaf(Wv), b = tape.leaf(Tensor<double>(Shape{2}, {0.5, -1}));
  const auto y = conv2d(x, W, b, Conv2dOptions{2, 1});
  BOOST_TEST(values_are(y.value(), Shape{1, 2, 2, 2}, {-8.5, 10.5, -5.5, -8.5, 5, -1, 1, -2}));
  tape.backward(y, dy);
  BOOST_TEST(values_are(x.grad(), Shape{1, 2, 3, 4},
                        {-2, 0, -1, 0, -2, 0, 1, 0, 3, -3, -2, 2, 2, 0, 0, 1, -2, 4, 0, -1, -2, -4, 2, 1}));
  BOOST_TEST(values_are(W.grad(), Shape{2, 2, 2, 3},
                        {-2, -2, 5, 1, 1, 0, 0, -2, -2, 3, 3, -5, 0, -1, -2, -2, 1, 1, 0, 1, 0, 3, -6, 1}));
  BOOST_TEST(values_are(b.grad(), Shape{2}, {-1, 0}));
}

BOOST_AUTO_TEST_CASE(conv2d_float_equals_direct_loop) {
  struct Case {
    Shape x, W;
    std::size_t stride, padding;
    bool bias;
  };
  std::uint64_t seed = 101;
  for (const Case& k :
       {Case{Shape{2, 3, 7, 6}, Shape{4, 3, 3, 3}, 1, 0, true}, Case{Shape{3, 2, 8, 9}, Shape{5, 2, 3, 2}, 2, 1, true},
        Case{Shape{1, 4, 5, 5}, Shape{2, 4, 1, 1}, 1, 0, false},
        Case{Shape{2, 3, 11, 10}, Shape{6, 3, 5, 4}, 3, 2, true},
        Case{Shape{2, 1, 4, 4}, Shape{3, 1, 4, 4}, 1, 1, false}}) {
    BOOST_TEST_CONTEXT("x " << to_string(k.x) << ", W " << to_string(k.W) << ", stride " << k.stride << ", padding "
                            << k.padding << ", bias " << k.bias) {
      Rng rng(seed++);
      const Tensor<float> xv = rng.uniform_tensor<float>(k.x, -2, 2), Wv = rng.uniform_tensor<float>(k.W, -1, 1),
                          bv = rng.uniform_tensor<float>(Shape{k.W[0]}, -1, 1);
      Tape<float> tape;
      const auto y = conv2d(tape.constant(xv), tape.constant(Wv), k.bias ? tape.constant(bv) : Variable<float>{},
                            Conv2dOptions{k.stride, k.padding});
      const Direct d = direct_conv2d(xv, Wv, k.bias ? &bv : nullptr, k.stride, k.padding);
      const std::size_t out_h = (k.x[2] + 2 * k.padding - k.W[2]) / k.stride + 1;
      const std::size_t out_w = (k.x[3] + 2 * k.padding - k.W[3]) / k.stride + 1;
      BOOST_TEST((y.shape() == Shape{k.x[0], k.W[0], out_h, out_w}), "shape " << to_string(y.shape()));
      BOOST_REQUIRE(y.value().size() == d.value.size());
      double worst = 0;  // |y - direct| / scale, at most a few float epsilons
      for (std::size_t i = 0; i < d.value.size(); ++i) {
        worst = std::max(worst, std::abs(y.value().data()[i] - d.value[i]) / std::max(d.scale[i], 1e-30));
      }
      BOOST_TEST(worst < 1e-5, "worst relative error " << worst);
    }
  }
}

BOOST_AUTO_TEST_CASE(conv2d_gradients) {
  struct Case {
    Shape x, W;
    std::size_t stride, padding;
    bool bias;
  };
  std::uint64_t seed = 201;
  for (const Case& k : {Case{Shape{2, 3, 5, 5}, Shape{4, 3, 3, 3}, 1, 0, true},      // C, O, B > 1
                        Case{Shape{2, 3, 5, 5}, Shape{4, 3, 3, 3}, 2, 1, false},     // stride 2, padding 1, no bias
                        Case{Shape{2, 2, 6, 5}, Shape{3, 2, 2, 3}, 2, 1, true},      // non-square kernel
                        Case{Shape{1, 2, 7, 6}, Shape{2, 2, 3, 2}, 2, 0, true},      // H, W not multiples of s
                        Case{Shape{3, 1, 4, 4}, Shape{2, 1, 2, 2}, 1, 1, false}}) {  // padding 1, stride 1
    BOOST_TEST_CONTEXT("x " << to_string(k.x) << ", W " << to_string(k.W) << ", stride " << k.stride << ", padding "
                            << k.padding << ", bias " << k.bias) {
      const Conv2dOptions options{k.stride, k.padding};
      const GradcheckFn with_bias = [options](Tape<double>&, const Vars& v) {
        return conv2d(v[0], v[1], v[2], options);
      };
      const GradcheckFn without_bias = [options](Tape<double>&, const Vars& v) {
        return conv2d(v[0], v[1], {}, options);
      };
      std::vector<Tensor<double>> inputs{random_tensor(k.x, seed), random_tensor(k.W, seed + 1)};
      if (k.bias) inputs.push_back(random_tensor(Shape{k.W[0]}, seed + 2));
      seed += 3;
      if (k.bias) {
        ATTEND_CHECK_GRADIENTS(with_bias, inputs);
      } else {
        ATTEND_CHECK_GRADIENTS(without_bias, inputs);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(conv2d_reused_input_accumulates) {
  // x feeds two convolutions (and W both): each gets the sum of both contributions, so conv(x, W) + conv(x, W) gives
  // exactly twice the gradients of one conv(x, W)
  const Tensor<double> xv = random_tensor(Shape{2, 2, 4, 5}, 301), Wv = random_tensor(Shape{3, 2, 3, 3}, 302);
  const Tensor<double> seed = random_tensor(Shape{2, 3, 4, 5}, 303);
  Tape<double> once, twice;
  const auto x1 = once.leaf(xv), W1 = once.leaf(Wv);
  once.backward(conv2d(x1, W1, {}, Conv2dOptions{1, 1}), seed);
  const auto x2 = twice.leaf(xv), W2 = twice.leaf(Wv);
  twice.backward(conv2d(x2, W2, {}, Conv2dOptions{1, 1}) + conv2d(x2, W2, {}, Conv2dOptions{1, 1}), seed);
  std::vector<double> dx = values_of(x1.grad()), dW = values_of(W1.grad());
  for (double& v : dx) v *= 2;
  for (double& v : dW) v *= 2;
  BOOST_TEST(values_are(x2.grad(), xv.shape(), dx, 1e-14));
  BOOST_TEST(values_are(W2.grad(), Wv.shape(), dW, 1e-14));

  // through the finite differences: x used twice with different weights, and one tensor as both input and weight
  const GradcheckFn two_convs = [](Tape<double>&, const Vars& v) {
    return conv2d(v[0], v[1], v[2], Conv2dOptions{2, 1}) + conv2d(v[0], v[3], {}, Conv2dOptions{2, 1});
  };
  const std::vector<Tensor<double>> inputs{random_tensor(Shape{2, 2, 5, 5}, 304), random_tensor(Shape{3, 2, 3, 3}, 305),
                                           random_tensor(Shape{3}, 306), random_tensor(Shape{3, 2, 3, 3}, 307)};
  ATTEND_CHECK_GRADIENTS(two_convs, inputs);
  const GradcheckFn self = [](Tape<double>&, const Vars& v) { return conv2d(v[0], v[0], {}, Conv2dOptions{1, 1}); };
  const std::vector<Tensor<double>> square{random_tensor(Shape{2, 1, 3, 3}, 308)};
  ATTEND_CHECK_GRADIENTS(self, square);
}

BOOST_AUTO_TEST_CASE(conv2d_rejects_bad_shapes) {
  Tape<double> tape;
  auto c = [&](const Shape& s) { return tape.constant(Tensor<double>(s)); };
  BOOST_CHECK_EXCEPTION(conv2d(c({3, 5, 5}), c({2, 3, 3, 3})), std::invalid_argument,
                        message_has({"conv2d", "(3,5,5)", "(2,3,3,3)", "rank 4"}));
  BOOST_CHECK_EXCEPTION(conv2d(c({1, 3, 5, 5}), c({2, 3, 3})), std::invalid_argument,
                        message_has({"conv2d", "(1,3,5,5)", "(2,3,3)"}));
  BOOST_CHECK_EXCEPTION(conv2d(c({2, 3, 5, 5}), c({4, 2, 3, 3})), std::invalid_argument,
                        message_has({"conv2d", "(2,3,5,5)", "(4,2,3,3)", "channels"}));
  BOOST_CHECK_EXCEPTION(conv2d(c({2, 3, 5, 5}), c({4, 3, 3, 3}), c({3})), std::invalid_argument,
                        message_has({"conv2d", "(2,3,5,5)", "(4,3,3,3)", "(3,)"}));
  BOOST_CHECK_EXCEPTION(conv2d(c({1, 1, 2, 4}), c({1, 1, 3, 3})), std::invalid_argument,
                        message_has({"conv2d", "(1,1,2,4)", "(1,1,3,3)", "larger"}));
  BOOST_CHECK_EXCEPTION(conv2d(c({1, 1, 5, 5}), c({1, 1, 3, 3}), {}, Conv2dOptions{0, 0}), std::invalid_argument,
                        message_has({"conv2d", "(1,1,5,5)", "(1,1,3,3)", "stride"}));
  // with padding 1 the same 3×3 kernel fits the 2×2 input (padded to 4×4): a 2×2 output
  BOOST_TEST((conv2d(c({1, 1, 2, 2}), c({1, 1, 3, 3}), {}, Conv2dOptions{1, 1}).shape() == Shape{1, 1, 2, 2}));
}

// ---- max_pool2d --------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE_TEMPLATE(max_pool2d_hand_computed_with_ties, T, float_types) {
  Tape<T> tape;
  // windows of 2×2: {1,3;3,0} → 3 twice, the first at (0,1); {2,2;1,2} → 2 three times, the first at (0,2);
  // {-1,-2;-3,-1} → -1 at (2,0) and (3,1), the first at (2,0); {5,4;4,5} → 5 at (2,2) and (3,3), the first at (2,2)
  const auto x = tape.leaf(Tensor<T>(Shape{1, 1, 4, 4}, {1, 3, 2, 2,    //
                                                         3, 0, 1, 2,    //
                                                         -1, -2, 5, 4,  //
                                                         -3, -1, 4, 5}));
  const auto y = max_pool2d(x);  // kernel 2, stride 0 = the kernel
  BOOST_TEST(values_are(y.value(), Shape{1, 1, 2, 2}, {3, 2, -1, 5}));
  tape.backward(y, Tensor<T>(Shape{1, 1, 2, 2}, {1, 2, 3, 4}));
  BOOST_TEST(values_are(x.grad(), Shape{1, 1, 4, 4}, {0, 1, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0}));

  // overlapping 3×3 windows with stride 1: all four contain x[2,2] = 5 before x[3,3] = 5, so all gradients meet there
  const auto y3 = max_pool2d(x, 3, 1);
  BOOST_TEST(values_are(y3.value(), Shape{1, 1, 2, 2}, {5, 5, 5, 5}));
  tape.backward(y3, Tensor<T>(Shape{1, 1, 2, 2}, {1, 2, 3, 4}));
  BOOST_TEST(values_are(x.grad(), Shape{1, 1, 4, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0}));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(max_pool2d_nan_is_the_maximum, T, float_types) {
  // as torch 1.13's max_pool2d on CPU: a NaN wins the window, and of two NaNs the later one gets the gradient
  const T nan = std::numeric_limits<T>::quiet_NaN();
  Tape<T> tape;
  const auto x = tape.leaf(Tensor<T>(Shape{1, 1, 2, 6}, {nan, 1, 7, nan, 1, nan,  //
                                                         3, 4, 5, 5, nan, 0}));
  const auto y = max_pool2d(x);
  BOOST_TEST(y.shape() == (Shape{1, 1, 1, 3}));
  for (std::size_t i = 0; i < 3; ++i) BOOST_TEST(std::isnan(y.value().data()[i]));
  tape.backward(sum(y));
  BOOST_TEST(values_are(x.grad(), Shape{1, 1, 2, 6}, {1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0}));
}

BOOST_AUTO_TEST_CASE(max_pool2d_shapes_round_down) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{2, 3, 5, 7}));
  BOOST_TEST((max_pool2d(x).shape() == Shape{2, 3, 2, 3}));
  BOOST_TEST((max_pool2d(x, 3, 2).shape() == Shape{2, 3, 2, 3}));
  BOOST_TEST((max_pool2d(x, 2, 3).shape() == Shape{2, 3, 2, 2}));
  BOOST_TEST((max_pool2d(x, 5, 1).shape() == Shape{2, 3, 1, 3}));
}

BOOST_AUTO_TEST_CASE(max_pool2d_gradients) {
  struct Case {
    Shape x;
    std::size_t kernel, stride;
  };
  std::uint64_t seed = 401;
  for (const Case& k : {Case{Shape{2, 3, 4, 6}, 2, 0},     // the usual non-overlapping 2×2
                        Case{Shape{2, 2, 5, 6}, 3, 1},     // overlapping windows: one element can win several
                        Case{Shape{1, 2, 7, 5}, 3, 2},     // overlapping, sizes not multiples of the stride
                        Case{Shape{2, 1, 7, 8}, 2, 3}}) {  // gaps: some elements are in no window
    BOOST_TEST_CONTEXT("x " << to_string(k.x) << ", kernel " << k.kernel << ", stride " << k.stride) {
      const GradcheckFn f = [k](Tape<double>&, const Vars& v) { return max_pool2d(v[0], k.kernel, k.stride); };
      const std::vector<Tensor<double>> inputs{distinct_tensor(k.x, seed++)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
  // pooling after a convolution, with x reused by both branches
  const GradcheckFn chain = [](Tape<double>&, const Vars& v) {
    return max_pool2d(conv2d(v[0], v[1], {}, Conv2dOptions{1, 1})) + max_pool2d(v[0]);
  };
  const std::vector<Tensor<double>> inputs{distinct_tensor(Shape{1, 2, 4, 4}, 411),
                                           distinct_tensor(Shape{2, 2, 3, 3}, 412)};
  ATTEND_CHECK_GRADIENTS(chain, inputs);
}

BOOST_AUTO_TEST_CASE(max_pool2d_rejects_bad_shapes) {
  Tape<double> tape;
  auto c = [&](const Shape& s) { return tape.constant(Tensor<double>(s)); };
  BOOST_CHECK_EXCEPTION(max_pool2d(c({3, 4, 4})), std::invalid_argument,
                        message_has({"max_pool2d", "(3,4,4)", "rank 4"}));
  BOOST_CHECK_EXCEPTION(max_pool2d(c({1, 1, 4, 2}), 3), std::invalid_argument,
                        message_has({"max_pool2d", "(1,1,4,2)", "kernel 3", "larger"}));
  BOOST_CHECK_EXCEPTION(max_pool2d(c({1, 1, 4, 4}), 0), std::invalid_argument,
                        message_has({"max_pool2d", "(1,1,4,4)", "kernel 0"}));
}

BOOST_AUTO_TEST_SUITE_END()
