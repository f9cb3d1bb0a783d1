// The elementwise kernels of the fused ops (runtime/kernels.hpp): the float approximations of exp, tanh and σ against
// the double-precision library functions, the search's double exp against std::exp, NaN and ±inf behaviour, and the
// array kernels equal to the scalar functions element by element (whichever instruction-set clone the machine runs:
// x86-64-v3 on a CPU with AVX2 and FMA; the baseline clone runs in CI's clang builds, which make no clones).
// Chapter: docs/performance.md.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "runtime/kernels.hpp"
#include "tests/autograd/helpers.hpp"

using namespace attend;

namespace {

double relative_error(double approx, double exact) {
  return std::fabs(approx - exact) / std::max(std::fabs(exact), std::numeric_limits<double>::min());
}

// The distance of a from b in units in the last place of b (b finite; NaN when a is NaN).
double ulps(double a, double b) {
  return std::fabs(a - b) / (std::nextafter(std::fabs(b), std::numeric_limits<double>::infinity()) - std::fabs(b));
}

// Inputs from -30 to 30 in steps of 1e-3, plus tiny and boundary values.
std::vector<float> test_inputs() {
  std::vector<float> xs;
  for (int i = -30000; i <= 30000; ++i) xs.push_back(static_cast<float>(i) * 1e-3f);
  for (float x : {1e-30f, 1e-10f, 1e-5f, 0.29999f, 0.3f, 0.30001f, 8.999f, 9.0f, 9.099f, 9.1f, 87.0f, 88.0f, 100.0f}) {
    xs.push_back(x);
    xs.push_back(-x);
  }
  return xs;
}

// The squares as the kernel's comment spells out the order: eight partial sums, element i into partial i mod 8, the
// eight in order, then the tail.
double squares_in_documented_order(const float* y, std::size_t n) {
  double partial[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (std::size_t l = 0; l < 8; ++l) partial[l] += static_cast<double>(y[i + l]) * static_cast<double>(y[i + l]);
  }
  double total = 0;
  for (const double p : partial) total += p;
  for (; i < n; ++i) total += static_cast<double>(y[i]) * static_cast<double>(y[i]);
  return total;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(elementwise_kernels)

BOOST_AUTO_TEST_CASE(fast_tanh_is_within_5e_7_relative) {
  double worst = 0;
  float at = 0;
  for (float x : test_inputs()) {
    const double e = relative_error(kernels::fast_tanh(x), std::tanh(static_cast<double>(x)));
    if (e > worst) worst = e, at = x;
  }
  BOOST_TEST(worst <= 5e-7, "worst relative error " << worst << " at x = " << at);
  BOOST_TEST(kernels::fast_tanh(0.0f) == 0.0f);
  BOOST_TEST(kernels::fast_tanh(50.0f) == 1.0f);
  BOOST_TEST(kernels::fast_tanh(-50.0f) == -1.0f);
  BOOST_TEST(kernels::fast_tanh(std::numeric_limits<float>::infinity()) == 1.0f);
}

BOOST_AUTO_TEST_CASE(fast_sigmoid_and_exp_are_within_3e_7_relative) {
  double worst_sigmoid = 0, worst_exp = 0;
  for (float x : test_inputs()) {
    const double xd = static_cast<double>(x);
    // relative where σ is a normal float (x ≥ -80); below, σ < 2·10⁻³⁵ and only the absolute error counts
    const double sigmoid = 1.0 / (1.0 + std::exp(-xd));
    if (x >= -80.0f)
      worst_sigmoid = std::max(worst_sigmoid, relative_error(kernels::fast_sigmoid(x), sigmoid));
    else
      BOOST_TEST(std::fabs(kernels::fast_sigmoid(x) - sigmoid) < 1e-37);
    if (std::fabs(x) <= 80.0f) worst_exp = std::max(worst_exp, relative_error(kernels::fast_exp(x), std::exp(xd)));
  }
  BOOST_TEST(worst_sigmoid <= 3e-7);
  BOOST_TEST(worst_exp <= 3e-7);
  BOOST_TEST(kernels::fast_sigmoid(200.0f) == 1.0f);
  BOOST_TEST(kernels::fast_sigmoid(-200.0f) >= 0.0f);
  BOOST_TEST(kernels::fast_sigmoid(-200.0f) < 1e-37f);
  BOOST_TEST(std::isinf(kernels::fast_exp(100.0f)));
}

BOOST_AUTO_TEST_CASE(nan_stays_nan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  BOOST_TEST(std::isnan(kernels::fast_tanh(nan)));
  BOOST_TEST(std::isnan(kernels::fast_sigmoid(nan)));
  BOOST_TEST(std::isnan(kernels::fast_exp(nan)));
  std::vector<float> a{1.0f, nan, -2.0f}, b{0.5f, 0.5f, 0.5f}, y(3);
  kernels::tanh_sum(a.data(), b.data(), y.data(), 3);
  BOOST_TEST(!std::isnan(y[0]));
  BOOST_TEST(std::isnan(y[1]));
  BOOST_TEST(!std::isnan(y[2]));
}

BOOST_AUTO_TEST_CASE(array_kernels_equal_the_scalar_functions) {
  // lengths that are not multiples of any vector width, so the loops' tails run too
  for (std::size_t n : {1u, 7u, 8u, 9u, 37u, 1000u}) {
    std::vector<float> a(n), b(n), g(n), y(n), t(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = std::sin(0.37f * static_cast<float>(i)) * 4.0f;
      b[i] = std::cos(0.11f * static_cast<float>(i)) * 3.0f;
      g[i] = 0.5f - 0.01f * static_cast<float>(i % 100);
    }
    kernels::sigmoid_sum(a.data(), b.data(), y.data(), n);
    for (std::size_t i = 0; i < n; ++i) BOOST_TEST(y[i] == kernels::fast_sigmoid(a[i] + b[i]));
    kernels::tanh_sum(a.data(), b.data(), y.data(), n);
    for (std::size_t i = 0; i < n; ++i) BOOST_TEST(y[i] == kernels::fast_tanh(a[i] + b[i]));
    kernels::tanh_sum_product(a.data(), b.data(), g.data(), y.data(), n);
    // the FMA clone may round a + b g once (fused) instead of twice
    for (std::size_t i = 0; i < n; ++i) {
      const bool two_roundings = y[i] == kernels::fast_tanh(a[i] + b[i] * g[i]);
      const bool fused = y[i] == kernels::fast_tanh(std::fma(b[i], g[i], a[i]));
      BOOST_TEST((two_roundings || fused), "tanh_sum_product at " << i << ": " << y[i]);
    }
    kernels::tanh_of(a.data(), y.data(), n);
    for (std::size_t i = 0; i < n; ++i) BOOST_TEST(y[i] == kernels::fast_tanh(a[i]));
    const float e = kernels::tanh_sum_dot(a.data(), b.data(), g.data(), t.data(), n);
    double expected = 0;
    for (std::size_t i = 0; i < n; ++i) {
      BOOST_TEST(t[i] == kernels::fast_tanh(a[i] + b[i]));
      expected += static_cast<double>(g[i]) * static_cast<double>(t[i]);
    }
    BOOST_TEST(std::fabs(e - expected) <= 1e-5 * std::max(1.0, std::fabs(expected)));
  }
}

BOOST_AUTO_TEST_CASE(double_kernels_are_the_library_functions) {
  std::vector<double> a{-3.0, -0.1, 0.0, 0.2, 5.0}, b{0.5, 0.5, -0.25, 1.0, -7.0}, y(5);
  kernels::tanh_sum(a.data(), b.data(), y.data(), 5);
  for (std::size_t i = 0; i < 5; ++i) BOOST_TEST(y[i] == std::tanh(a[i] + b[i]));
  kernels::sigmoid_sum(a.data(), b.data(), y.data(), 5);
  for (std::size_t i = 0; i < 5; ++i) BOOST_TEST(y[i] == 1.0 / (1.0 + std::exp(-(a[i] + b[i]))));
}

BOOST_AUTO_TEST_CASE(softmax_row_kernels) {
  // a row of 8,211 logits (not a multiple of 8: the tail loop too), its largest element last
  std::vector<float> x(8211);
  std::vector<double> xd(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 12.0);
    xd[i] = x[i];
  }
  x.back() = 30.0f;
  xd.back() = 30.0;
  BOOST_TEST(kernels::max_of(x.data(), x.size()) == 30.0f);
  BOOST_TEST(kernels::max_of(xd.data(), xd.size()) == 30.0);
  BOOST_TEST(kernels::max_of(x.data(), 5) == *std::max_element(x.begin(), x.begin() + 5));
  const double sum = kernels::exp_shifted_sum(xd.data(), 30.0, xd.size());
  double expected = 0;
  for (const double v : xd) expected += std::exp(v - 30.0);
  BOOST_TEST(sum == expected, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(kernels::exp_shifted_sum(x.data(), 30.0f, x.size()) == sum, boost::test_tools::tolerance(1e-6));
  // the exps kept: each within float's rounding of x − m (2⁻²⁴ |x − m| relative, in e^(x−m)) and of the exp, their
  // sum exp_shifted_sum's, bit for bit
  std::vector<float> e(x.size());
  std::vector<double> ed(x.size());
  BOOST_TEST(kernels::exp_shifted_store(xd.data(), 30.0, ed.data(), ed.size()) == sum);
  BOOST_TEST(kernels::exp_shifted_store(x.data(), 30.0f, e.data(), e.size()) ==
             kernels::exp_shifted_sum(x.data(), 30.0f, x.size()));
  // and where no one term outweighs the others' sum (the row without its 30, shifted by 12), so that the order shows
  std::vector<float> scratch(8203);
  BOOST_TEST(kernels::exp_shifted_store(x.data(), 12.0f, scratch.data(), scratch.size()) ==
             kernels::exp_shifted_sum(x.data(), 12.0f, scratch.size()));
  for (std::size_t i = 0; i < e.size(); ++i) {
    BOOST_TEST(ed[i] == std::exp(xd[i] - 30.0));
    BOOST_TEST(std::fabs(e[i] - ed[i]) <= 1e-7 * (1.0 + std::fabs(xd[i] - 30.0)) * ed[i], "element " << i);
  }
  // y = s (exp((x - m) - l) - o): written, then added
  const double l = std::log(sum);
  std::vector<float> y(x.size(), 5.0f);
  std::vector<double> yd(x.size(), 5.0);
  kernels::scaled_exp_minus(x.data(), 30.0f, static_cast<float>(l), 0.5f, 0.25f, y.data(), y.size(), false);
  kernels::scaled_exp_minus(xd.data(), 30.0, l, 0.5, 0.25, yd.data(), yd.size(), true);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double exact = 0.5 * (std::exp((xd[i] - 30.0) - l) - 0.25);
    BOOST_TEST(yd[i] == 5.0 + exact, boost::test_tools::tolerance(1e-14));
    BOOST_TEST(std::fabs(y[i] - exact) <= 1e-6 * std::fabs(exact) + 1e-9, "element " << i);
  }
  // a NaN in the row makes the sum NaN
  x[7] = std::numeric_limits<float>::quiet_NaN();
  BOOST_TEST(std::isnan(kernels::exp_shifted_sum(x.data(), 30.0f, x.size())));
}

BOOST_AUTO_TEST_CASE(the_double_exp_is_within_one_ulp_of_std_exp) {
  // a sweep of [-708, 709], 0.5·10⁻³ apart, and of the shifted logits' range [-40, 0] 10⁻⁶ apart (a NaN result counts
  // as the worst)
  double worst = 0, worst_at = 0;
  std::size_t different = 0, count = 0;
  const auto check = [&](double x) {
    const double got = kernels::fast_exp_double(x), expected = std::exp(x);
    if (!(ulps(got, expected) <= worst)) worst = std::isnan(got) ? HUGE_VAL : ulps(got, expected), worst_at = x;
    different += got != expected ? 1 : 0;
    ++count;
  };
  for (double x = -708.0; x <= 709.0; x += 0.0005) check(x);
  for (double x = -40.0; x <= 0.0; x += 1e-6) check(x);
  BOOST_TEST(worst <= 1.0, "the worst is " << worst << " ulp at x = " << worst_at);
  BOOST_TEST_MESSAGE("fast_exp_double: the worst " << worst << " ulp from std::exp, " << different << " of " << count
                                                   << " values differ");
  BOOST_TEST(kernels::fast_exp_double(0.0) == 1.0);
  BOOST_TEST(kernels::fast_exp_double(-708.5) == 0.0);
  BOOST_TEST(kernels::fast_exp_double(-std::numeric_limits<double>::infinity()) == 0.0);
  BOOST_TEST(std::isinf(kernels::fast_exp_double(709.5)));
  BOOST_TEST(std::isnan(kernels::fast_exp_double(std::numeric_limits<double>::quiet_NaN())));
}

BOOST_AUTO_TEST_CASE(the_sum_in_double_adds_the_double_exps_in_exp_shifted_sums_order) {
  // rows of 8,207 (a vocabulary: 32 buffers of 256, one of 8, 7 left over), 300 (buffers of 256 and 40, 4 left over),
  // 263, 256, 8, 7 (left over alone) and 0; the terms grow with i mod 8 (e^1.7 a step), so that another order of adding
  // rounds differently; two at −790 (x − m < −708: 0) and one at −∞ (0)
  for (const std::size_t n : {8207, 300, 263, 256, 8, 7, 0}) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i)
      x[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 6.0 + 1.7 * static_cast<double>(i % 8));
    for (const std::size_t i : {std::size_t{2}, n / 2, n - 1}) {
      if (i < n && n > 8) x[i] = i == 2 ? -std::numeric_limits<float>::infinity() : -790.0f;
    }
    const float m = kernels::max_of(x.data(), n);
    double partial[8] = {}, in_order = 0, library = 0;
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (std::size_t l = 0; l < 8; ++l) partial[l] += kernels::fast_exp_double(static_cast<double>(x[i + l]) - m);
    }
    for (const double p : partial) in_order += p;
    for (; i < n; ++i) in_order += kernels::fast_exp_double(static_cast<double>(x[i]) - m);
    for (const float v : x) library += std::exp(static_cast<double>(v) - m);
    const double sum = kernels::exp_shifted_sum_in_double(x.data(), m, n);
    BOOST_TEST(sum == in_order, "n = " << n);
    // another order and exps within an ulp: both sums of positive terms within (n + 1)·2⁻⁵³ of the exact one
    BOOST_TEST(std::fabs(sum - library) <= 2.0 * static_cast<double>(n + 1) * 0x1p-53 * library, "n = " << n);
  }
  std::vector<float> x(300, -1.0f);
  x[299] = std::numeric_limits<float>::quiet_NaN();
  BOOST_TEST(std::isnan(kernels::exp_shifted_sum_in_double(x.data(), 0.0f, x.size())));
  x[299] = -1.0f;
  x[3] = std::numeric_limits<float>::quiet_NaN();
  BOOST_TEST(std::isnan(kernels::exp_shifted_sum_in_double(x.data(), 0.0f, x.size())));
}

BOOST_AUTO_TEST_CASE(sum_parts_adds_left_to_right_and_squares_in_order) {
  // three parts of 1,003 elements (a tail of 3) whose magnitude grows with i mod 8 (by 10^0.15 a step), so that the
  // eight partial sums differ but are alike enough that every addition rounds, and another order of adding them
  // rounds differently; element 5's parts cancel only when added left to right; the last element is large, so that
  // the tail's squares added before the eight partial sums would round differently too
  const std::size_t size = 1003;
  std::vector<std::vector<float>> parts(3, std::vector<float>(size));
  for (std::size_t k = 0; k < parts.size(); ++k) {
    for (std::size_t i = 0; i < size; ++i) {
      parts[k][i] = static_cast<float>(std::sin(0.71 * static_cast<double>(i + 97 * k)) *
                                       std::pow(10.0, 0.15 * static_cast<double>(i % 8) + 0.3 * k));
    }
  }
  parts[0][5] = 1e4f, parts[1][5] = -1e4f, parts[2][5] = 1e-4f;  // not so large that its square hides the rest
  parts[0][size - 1] = 1234.5677f;
  const float* from[3] = {parts[0].data(), parts[1].data(), parts[2].data()};
  for (const std::size_t n : {size, std::size_t{5}, std::size_t{0}}) {  // whole eights and a tail, a tail, nothing
    for (std::size_t count = 1; count <= 3; ++count) {
      std::vector<float> expected(n);
      for (std::size_t i = 0; i < n; ++i) {
        float v = parts[0][i];
        for (std::size_t k = 1; k < count; ++k) v += parts[k][i];
        expected[i] = v;
      }
      const double squares = squares_in_documented_order(expected.data(), n);
      // y on a 16-byte boundary (streaming stores when asked for) and not; with and without the squares
      for (const std::size_t offset : {0, 1}) {
        for (const bool stream : {true, false}) {
          std::vector<float> storage(size + 8, -7.0f);
          float* y = storage.data() + (4 - reinterpret_cast<std::uintptr_t>(storage.data()) / 4 % 4) % 4 + offset;
          BOOST_TEST_CONTEXT("n " << n << ", count " << count << ", offset " << offset << ", stream " << stream) {
            BOOST_TEST(kernels::sum_parts(from, count, y, n, true, stream) == squares);
            BOOST_TEST(std::equal(y, y + n, expected.begin()));
            std::fill(y, y + n, -7.0f);
            BOOST_TEST(kernels::sum_parts(from, count, y, n, false, stream) == 0.0);
            BOOST_TEST(std::equal(y, y + n, expected.begin()));
            // nothing written outside y
            const auto untouched = [](float v) { return v == -7.0f; };
            BOOST_TEST(std::all_of(storage.data(), y, untouched));
            BOOST_TEST(std::all_of(y + n, storage.data() + storage.size(), untouched));
          }
        }
      }
    }
  }
  // Two orders of adding the same eight numbers round alike now and then, so one row of data may not tell them apart:
  // 32 rows (the parts from element s on, s < 32), each with the squares in the documented order.
  std::size_t differ = 0;
  for (std::size_t s = 0; s < 32; ++s) {
    const float* shifted[3] = {from[0] + s, from[1] + s, from[2] + s};
    std::vector<float> y(size - s);
    const double squares = kernels::sum_parts(shifted, 3, y.data(), y.size(), true, false);
    differ += squares != squares_in_documented_order(y.data(), y.size());
  }
  BOOST_TEST(differ == 0u);
  // the data's premises: element 5 is 10⁻⁴ added left to right, 0 the other way; the tail's order shows
  BOOST_TEST((parts[0][5] + parts[1][5]) + parts[2][5] != parts[0][5] + (parts[1][5] + parts[2][5]));
  std::vector<float> head(parts[0].begin(), parts[0].end() - 3), tail(parts[0].end() - 3, parts[0].end());
  double tail_first = squares_in_documented_order(tail.data(), 3);
  tail_first += squares_in_documented_order(head.data(), head.size());
  BOOST_TEST(tail_first != squares_in_documented_order(parts[0].data(), size));
}

BOOST_AUTO_TEST_SUITE_END()
