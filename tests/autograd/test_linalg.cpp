// Tests of the matrix product op (autograd/linalg.cpp) in its three forms: (m,k)·(k,n), batched (B,m,k)·(B,k,n) and
// (B,m,k)·(k,n) with one right-hand matrix shared by the batch. Forward values and backward products are compared
// with xt::linalg::dot from xtensor-blas, an independent implementation (the op calls cblas_?gemm itself), in float
// and double; gradients are checked against finite differences; shape errors must name the op and both shapes.
// Chapter: docs/01-autograd.md.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmath.hpp>

#include "autograd/blas.hpp"
#include "tests/autograd/helpers.hpp"

namespace tt = boost::test_tools;
using namespace attend;
using namespace attend::testing;

namespace {

// Relative tolerance of a comparison with the reference, per element type.
template <class T>
constexpr double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-13;

// Random values in [-2, 2) with some large (×100) and some tiny (×1e-3) magnitudes mixed in.
template <class T>
Tensor<T> mixed_tensor(const Shape& shape, std::uint64_t seed) {
  Rng rng(seed);
  Tensor<T> t = rng.uniform_tensor<T>(shape, -2.0, 2.0);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i % 5 == 1) t.data()[i] *= T(100);
    if (i % 7 == 3) t.data()[i] *= T(1e-3);
  }
  return t;
}

// Matrix `index` of a (B,r,c) tensor, or the whole of an (r,c) one, copied into an xtensor for xt::linalg::dot.
template <class T>
xt::xtensor<T, 2> matrix_of(const Tensor<T>& t, std::size_t index) {
  const std::size_t rows = t.shape()[t.rank() - 2], cols = t.shape()[t.rank() - 1];
  xt::xtensor<T, 2> m = xt::zeros<T>({rows, cols});
  const T* begin = t.data() + (t.rank() == 3 ? index * rows * cols : 0);
  std::copy(begin, begin + rows * cols, m.begin());
  return m;
}

// xt::linalg::dot per batch entry, flattened in row-major order, with the error scale Σ_k |a_ik| |b_kj| of each
// element (the size a rounding error of the sum can have, whatever cancellation happens).
struct Reference {
  std::vector<double> value, scale;
};
template <class T>
Reference reference_product(const Tensor<T>& a, const Tensor<T>& b) {
  Reference r;
  const std::size_t batch = a.rank() == 3 ? a.shape()[0] : 1;
  for (std::size_t i = 0; i < batch; ++i) {
    const xt::xtensor<T, 2> am = matrix_of(a, i), bm = matrix_of(b, i);
    const xt::xarray<T> product = xt::linalg::dot(am, bm);
    const xt::xtensor<T, 2> abs_a = xt::abs(am), abs_b = xt::abs(bm);
    const xt::xarray<T> scale = xt::linalg::dot(abs_a, abs_b);
    r.value.insert(r.value.end(), product.begin(), product.end());
    r.scale.insert(r.scale.end(), scale.begin(), scale.end());
  }
  return r;
}

// Whether `actual` has `shape` and every element is within tol · max(scale, 1e-30) of the reference.
template <class T>
tt::predicate_result matches(const Tensor<T>& actual, const Shape& shape, const Reference& expected, double tol) {
  tt::predicate_result result(true);
  if (actual.shape() != shape || actual.size() != expected.value.size()) {
    result = false;
    result.message() << "shape " << to_string(actual.shape()) << ", expected " << to_string(shape);
    return result;
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = static_cast<double>(actual.data()[i]);
    if (!(std::abs(a - expected.value[i]) <= tol * std::max(expected.scale[i], 1e-30))) {
      result = false;
      result.message() << "flat element " << i << ": got " << a << ", reference " << expected.value[i];
      return result;
    }
  }
  return result;
}

// Gradient check of matmul on random operands of the given shapes.
void check_matmul_gradients(const Shape& a_shape, const Shape& b_shape, std::uint64_t seed) {
  BOOST_TEST_CONTEXT("shapes " << to_string(a_shape) << " and " << to_string(b_shape)) {
    const GradcheckFn f = [](Tape<double>&, const Vars& v) { return matmul(v[0], v[1]); };
    const std::vector<Tensor<double>> inputs{random_tensor(a_shape, seed), random_tensor(b_shape, seed + 1)};
    ATTEND_CHECK_GRADIENTS(f, inputs);
  }
}

// The forward value of matmul on fresh operands, compared with the reference.
template <class T>
void check_forward(const Shape& a_shape, const Shape& b_shape, const Shape& y_shape, std::uint64_t seed) {
  BOOST_TEST_CONTEXT("shapes " << to_string(a_shape) << " and " << to_string(b_shape)) {
    const Tensor<T> a = mixed_tensor<T>(a_shape, seed), b = mixed_tensor<T>(b_shape, seed + 1);
    Tape<T> tape;
    const Variable<T> y = matmul(tape.constant(a), tape.constant(b));
    BOOST_TEST(matches(y.value(), y_shape, reference_product(a, b), tolerance<T>));
  }
}

// Transpose of the last two axes, for the reference gradients.
template <class T>
Tensor<T> transposed(const Tensor<T>& t) {
  const std::size_t batch = t.rank() == 3 ? t.shape()[0] : 1, rows = t.shape()[t.rank() - 2],
                    cols = t.shape()[t.rank() - 1];
  Shape shape = t.shape();
  shape[t.rank() - 2] = cols;
  shape[t.rank() - 1] = rows;
  Tensor<T> out(shape);
  for (std::size_t i = 0; i < batch; ++i)
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) {
        out.data()[(i * cols + c) * rows + r] = t.data()[(i * rows + r) * cols + c];
      }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(linalg)

BOOST_AUTO_TEST_CASE_TEMPLATE(matmul_2d_hand_computed, T, float_types) {
  // [[1,-2,0.5],[0,3,-1]] · [[2,1],[0,-1],[4,0.5]] = [[2+0+2, 1+2+0.25], [0+0-4, 0-3-0.5]]
  Tape<T> tape;
  const auto a = tape.constant(Tensor<T>(Shape{2, 3}, {1, -2, 0.5, 0, 3, -1}));
  const auto b = tape.constant(Tensor<T>(Shape{3, 2}, {2, 1, 0, -1, 4, 0.5}));
  BOOST_TEST(values_are(matmul(a, b).value(), Shape{2, 2}, {4, 3.25, -4, -3.5}));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(matmul_batched_and_shared_hand_computed, T, float_types) {
  Tape<T> tape;
  const auto a = tape.constant(Tensor<T>(Shape{2, 1, 2}, {1, 2, 3, 4}));
  // batched: [1,2]·[5,6]ᵀ = 17 and [3,4]·[7,8]ᵀ = 53
  const auto b_batched = tape.constant(Tensor<T>(Shape{2, 2, 1}, {5, 6, 7, 8}));
  BOOST_TEST(values_are(matmul(a, b_batched).value(), Shape{2, 1, 1}, {17, 53}));
  // shared: both rows times [5,6]ᵀ: 17 and 39
  const auto b_shared = tape.constant(Tensor<T>(Shape{2, 1}, {5, 6}));
  BOOST_TEST(values_are(matmul(a, b_shared).value(), Shape{2, 1, 1}, {17, 39}));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(matmul_2d_matches_xtensor_blas, T, float_types) {
  check_forward<T>(Shape{3, 4}, Shape{4, 5}, Shape{3, 5}, 1);
  check_forward<T>(Shape{1, 7}, Shape{7, 1}, Shape{1, 1}, 3);
  check_forward<T>(Shape{6, 1}, Shape{1, 6}, Shape{6, 6}, 5);  // outer product
  check_forward<T>(Shape{17, 33}, Shape{33, 9}, Shape{17, 9}, 7);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(matmul_batched_matches_xtensor_blas, T, float_types) {
  check_forward<T>(Shape{3, 2, 4}, Shape{3, 4, 5}, Shape{3, 2, 5}, 11);
  check_forward<T>(Shape{1, 5, 3}, Shape{1, 3, 2}, Shape{1, 5, 2}, 13);
  check_forward<T>(Shape{4, 1, 6}, Shape{4, 6, 1}, Shape{4, 1, 1}, 15);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(matmul_shared_right_matches_xtensor_blas, T, float_types) {
  // (B,m,k)·(k,n): the reference multiplies each batch entry by the same b
  check_forward<T>(Shape{3, 2, 4}, Shape{4, 5}, Shape{3, 2, 5}, 21);
  check_forward<T>(Shape{5, 1, 3}, Shape{3, 2}, Shape{5, 1, 2}, 23);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(matmul_backward_matches_xtensor_blas, T, float_types) {
  // da = dy bᵀ and db = aᵀ dy for each form; for the shared b, db sums aᵢᵀ dyᵢ over the batch
  struct Case {
    Shape a, b, y;
  };
  std::uint64_t seed = 31;
  for (const Case& c :
       {Case{Shape{3, 4}, Shape{4, 2}, Shape{3, 2}}, Case{Shape{2, 3, 4}, Shape{2, 4, 5}, Shape{2, 3, 5}},
        Case{Shape{3, 2, 4}, Shape{4, 5}, Shape{3, 2, 5}}}) {
    BOOST_TEST_CONTEXT("shapes " << to_string(c.a) << " and " << to_string(c.b)) {
      const Tensor<T> a_value = mixed_tensor<T>(c.a, seed), b_value = mixed_tensor<T>(c.b, seed + 1),
                      dy = mixed_tensor<T>(c.y, seed + 2);
      seed += 3;
      Tape<T> tape;
      const auto a = tape.leaf(a_value);
      const auto b = tape.leaf(b_value);
      tape.backward(matmul(a, b), dy);

      BOOST_TEST(matches(a.grad(), c.a, reference_product(dy, transposed(b_value)), tolerance<T>));
      if (c.a.rank() == c.b.rank()) {
        BOOST_TEST(matches(b.grad(), c.b, reference_product(transposed(a_value), dy), tolerance<T>));
      } else {
        // db = Σ_i a_iᵀ dy_i, each term from the reference
        Reference total{std::vector<double>(c.b.size(), 0.0), std::vector<double>(c.b.size(), 0.0)};
        for (std::size_t i = 0; i < c.a[0]; ++i) {
          const Tensor<T> a_i(matrix_of(a_value, i)), dy_i(matrix_of(dy, i));
          const Reference part = reference_product(transposed(a_i), dy_i);
          for (std::size_t e = 0; e < part.value.size(); ++e) {
            total.value[e] += part.value[e];
            total.scale[e] += part.scale[e];
          }
        }
        BOOST_TEST(matches(b.grad(), c.b, total, tolerance<T>));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(matmul_gradient_reaches_only_the_inputs_that_need_it) {
  // a leaf times a constant (and the reverse): the one gradient is still dy bᵀ (or aᵀ dy)
  const Tensor<double> a_value = random_tensor(Shape{2, 3}, 41), b_value = random_tensor(Shape{3, 4}, 42);
  const Tensor<double> dy = random_tensor(Shape{2, 4}, 43);
  Tape<double> tape;
  const auto a = tape.leaf(a_value);
  const auto b = tape.constant(b_value);
  tape.backward(matmul(a, b), dy);
  BOOST_TEST(matches(a.grad(), Shape{2, 3}, reference_product(dy, transposed(b_value)), 1e-13));
  BOOST_TEST(!b.requires_grad());

  const auto a_constant = tape.constant(a_value);
  const auto b_leaf = tape.leaf(b_value);
  tape.backward(matmul(a_constant, b_leaf), dy);
  BOOST_TEST(matches(b_leaf.grad(), Shape{3, 4}, reference_product(transposed(a_value), dy), 1e-13));
}

BOOST_AUTO_TEST_CASE(matmul_2d_gradients) {
  check_matmul_gradients(Shape{3, 4}, Shape{4, 2}, 51);
  check_matmul_gradients(Shape{1, 5}, Shape{5, 3}, 53);
  check_matmul_gradients(Shape{2, 1}, Shape{1, 3}, 55);
  // the same matrix on both sides: both contributions reach it
  const GradcheckFn square = [](Tape<double>&, const Vars& v) { return matmul(v[0], v[0]); };
  const std::vector<Tensor<double>> inputs{random_tensor(Shape{3, 3}, 57)};
  ATTEND_CHECK_GRADIENTS(square, inputs);
}

BOOST_AUTO_TEST_CASE(matmul_batched_gradients) {
  check_matmul_gradients(Shape{2, 3, 4}, Shape{2, 4, 2}, 61);
  check_matmul_gradients(Shape{1, 2, 3}, Shape{1, 3, 1}, 63);
  check_matmul_gradients(Shape{3, 1, 2}, Shape{3, 2, 2}, 65);
}

BOOST_AUTO_TEST_CASE(matmul_shared_right_gradients) {
  check_matmul_gradients(Shape{2, 3, 4}, Shape{4, 2}, 71);
  check_matmul_gradients(Shape{3, 1, 2}, Shape{2, 2}, 73);
  check_matmul_gradients(Shape{1, 4, 3}, Shape{3, 1}, 75);
}

BOOST_AUTO_TEST_CASE(matmul_accumulates_into_existing_gradients) {
  // y = a b + a + b: the add nodes, recorded later, hand a and b their gradients first, so matmul's backward must add
  // to them (gemm with beta = 1), not overwrite them
  const GradcheckFn f = [](Tape<double>&, const Vars& v) { return add(add(matmul(v[0], v[1]), v[0]), v[1]); };
  for (const auto& [a_shape, b_shape] : {std::pair{Shape{3, 3}, Shape{3, 3}}, std::pair{Shape{2, 3, 3}, Shape{2, 3, 3}},
                                         std::pair{Shape{2, 3, 3}, Shape{3, 3}}}) {
    BOOST_TEST_CONTEXT("shapes " << to_string(a_shape) << " and " << to_string(b_shape)) {
      const std::vector<Tensor<double>> inputs{random_tensor(a_shape, 81), random_tensor(b_shape, 82)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
}

BOOST_AUTO_TEST_CASE(matmul_rejects_mismatched_shapes) {
  Tape<double> tape;
  auto operand = [&tape](const Shape& shape) { return tape.constant(Tensor<double>(shape)); };
  BOOST_CHECK_EXCEPTION(matmul(operand(Shape{2, 3}), operand(Shape{4, 2})), std::invalid_argument,
                        message_has({"matmul", "(2,3)", "(4,2)"}));
  BOOST_CHECK_EXCEPTION(matmul(operand(Shape{2, 2, 3}), operand(Shape{3, 3, 4})), std::invalid_argument,
                        message_has({"matmul", "(2,2,3)", "(3,3,4)", "batch"}));
  BOOST_CHECK_EXCEPTION(matmul(operand(Shape{2, 2, 3}), operand(Shape{2, 4, 5})), std::invalid_argument,
                        message_has({"matmul", "(2,2,3)", "(2,4,5)"}));
  BOOST_CHECK_EXCEPTION(matmul(operand(Shape{2, 3, 4}), operand(Shape{5, 2})), std::invalid_argument,
                        message_has({"matmul", "(2,3,4)", "(5,2)"}));
}

BOOST_AUTO_TEST_CASE(matmul_rejects_unsupported_ranks) {
  Tape<double> tape;
  auto operand = [&tape](const Shape& shape) { return tape.constant(Tensor<double>(shape)); };
  BOOST_CHECK_EXCEPTION(matmul(operand(Shape{3}), operand(Shape{3})), std::invalid_argument,
                        message_has({"matmul", "(3,)"}));
  BOOST_CHECK_EXCEPTION(matmul(operand(Shape{2, 3}), operand(Shape{3})), std::invalid_argument,
                        message_has({"matmul", "(2,3)", "(3,)"}));
  BOOST_CHECK_EXCEPTION(matmul(operand(Shape{1, 2, 3, 4}), operand(Shape{1, 2, 4, 3})), std::invalid_argument,
                        message_has({"matmul", "(1,2,3,4)", "(1,2,4,3)"}));
  BOOST_CHECK_EXCEPTION(matmul(operand(Shape{2, 3}), operand(Shape{2, 3, 4})), std::invalid_argument,
                        message_has({"matmul", "(2,3)", "(2,3,4)"}));
  BOOST_CHECK_EXCEPTION(matmul(operand(Shape{}), operand(Shape{})), std::invalid_argument,
                        message_has({"matmul", "()"}));
}

// ---- linear: y = x Wᵀ + b, fused through gemm with a transposed operand ----------------------------------------

BOOST_AUTO_TEST_CASE(linear_hand_computed) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{2, 3}, {1, 2, 3, -1, 0, 2}));
  const auto W = tape.constant(Tensor<double>(Shape{2, 3}, {1, 0, -1, 0.5, 2, 1}));  // (out=2, in=3)
  const auto b = tape.constant(Tensor<double>(Shape{2}, {10, -10}));
  // row 0: [1-3, 0.5+4+3] + b = [8, -2.5]; row 1: [-1-2, -0.5+0+2] + b = [7, -8.5]
  BOOST_TEST(values_are(linear(x, W, b).value(), Shape{2, 2}, {8, -2.5, 7, -8.5}));
  BOOST_TEST(values_are(linear(x, W).value(), Shape{2, 2}, {-2, 7.5, -3, 1.5}));
}

BOOST_AUTO_TEST_CASE(linear_equals_matmul_with_transposed_weight_plus_bias) {
  // fused = composed, in value and in every gradient, for rank 2 and rank 3 inputs
  for (const Shape& x_shape : {Shape{4, 3}, Shape{2, 5, 3}}) {
    BOOST_TEST_CONTEXT("x " << to_string(x_shape)) {
      const Tensor<double> xv = random_tensor(x_shape, 11), Wv = random_tensor(Shape{6, 3}, 12),
                           bv = random_tensor(Shape{6}, 13);
      const Tensor<double> seed = random_tensor(x_shape.rank() == 2 ? Shape{4, 6} : Shape{2, 5, 6}, 14);
      Tape<double> t1, t2;
      auto x1 = t1.leaf(xv), W1 = t1.leaf(Wv), b1 = t1.leaf(bv);
      auto x2 = t2.leaf(xv), W2 = t2.leaf(Wv), b2 = t2.leaf(bv);
      const auto fused = linear(x1, W1, b1);
      const auto composed = matmul(x2, transpose(W2)) + b2;
      t1.backward(fused, seed);
      t2.backward(composed, seed);
      const std::vector<double> composed_values(composed.value().data(),
                                                composed.value().data() + composed.value().size());
      BOOST_TEST(values_are(fused.value(), composed.shape(), composed_values, 1e-12));
      for (auto [a, b] : {std::pair{x1, x2}, std::pair{W1, W2}, std::pair{b1, b2}}) {
        const Tensor<double> ga = a.grad(), gb = b.grad();
        BOOST_TEST(values_are(ga, gb.shape(), std::vector<double>(gb.data(), gb.data() + gb.size()), 1e-12));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(linear_gradients) {
  const GradcheckFn with_bias = [](Tape<double>&, const Vars& v) { return linear(v[0], v[1], v[2]); };
  const GradcheckFn without_bias = [](Tape<double>&, const Vars& v) { return linear(v[0], v[1]); };
  const std::vector<Tensor<double>> rank2{random_tensor(Shape{3, 4}, 21), random_tensor(Shape{5, 4}, 22),
                                          random_tensor(Shape{5}, 23)};
  const std::vector<Tensor<double>> rank3{random_tensor(Shape{2, 3, 4}, 24), random_tensor(Shape{5, 4}, 25),
                                          random_tensor(Shape{5}, 26)};
  const std::vector<Tensor<double>> no_bias{random_tensor(Shape{2, 3, 4}, 27), random_tensor(Shape{2, 4}, 28)};
  ATTEND_CHECK_GRADIENTS(with_bias, rank2);
  ATTEND_CHECK_GRADIENTS(with_bias, rank3);
  ATTEND_CHECK_GRADIENTS(without_bias, no_bias);
}

// blas_gemm in float against a product in double, in each of its paths — gemv a row at a time (m ≤ 4), gemv for one
// column, gemm — for every transposition, with row strides wider than the rows, beta = 0 over a C full of NaN (which
// must be overwritten) and beta ≠ 0; what lies between the rows of C is left alone.
BOOST_AUTO_TEST_CASE(blas_gemm_in_float_equals_a_double_product_in_every_path) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Rng rng(11);
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const std::size_t m : {1, 3, 4, 5, 9})
        for (const std::size_t n : {1, 2, 17})
          for (const std::size_t k : {1, 7, 33})
            for (const float beta : {0.0f, 0.5f}) {
              BOOST_TEST_CONTEXT("trans " << ta << tb << ", m " << m << ", n " << n << ", k " << k << ", beta "
                                          << beta) {
                // stored A is (m,k), or (k,m) when transposed; B (k,n) or (n,k); each row 3 wider than it needs
                const std::size_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 3, ldc = n + 3;
                const Tensor<float> a = rng.uniform_tensor<float>({(ta ? k : m) * lda}, -2.0, 2.0);
                const Tensor<float> b = rng.uniform_tensor<float>({(tb ? n : k) * ldb}, -2.0, 2.0);
                Tensor<float> c = rng.uniform_tensor<float>({m * ldc}, -2.0, 2.0);
                if (beta == 0.0f) std::fill(c.data(), c.data() + c.size(), nan);
                const Tensor<float> c0 = c;
                blas_gemm(ta, tb, m, n, k, 1.5f, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
                for (std::size_t i = 0; i < m; ++i) {
                  for (std::size_t j = 0; j < ldc; ++j) {
                    const float got = c.data()[i * ldc + j];
                    if (j >= n) {  // between the rows: untouched (NaN stays NaN)
                      BOOST_TEST(
                          (std::isnan(got) ? std::isnan(c0.data()[i * ldc + j]) : got == c0.data()[i * ldc + j]));
                      continue;
                    }
                    double want = 0, size = 0;
                    for (std::size_t p = 0; p < k; ++p) {
                      const double x = a.data()[ta ? p * lda + i : i * lda + p],
                                   y = b.data()[tb ? j * ldb + p : p * ldb + j];
                      want += x * y, size += std::abs(x * y);
                    }
                    want = 1.5 * want + (beta == 0.0f ? 0.0 : beta * double(c0.data()[i * ldc + j]));
                    BOOST_TEST(std::abs(got - want) <= 1e-6 * (1.5 * size + 1.0),
                               "(" << i << "," << j << "): " << got << " vs " << want);
                  }
                }
              }
            }
}

BOOST_AUTO_TEST_CASE(linear_rejects_mismatched_shapes) {
  Tape<double> tape;
  auto c = [&](const Shape& s) { return tape.constant(Tensor<double>(s)); };
  BOOST_CHECK_EXCEPTION(linear(c({2, 3}), c({4, 5})), std::invalid_argument, message_has({"linear", "(2,3)", "(4,5)"}));
  BOOST_CHECK_EXCEPTION(linear(c({2, 3}), c({4, 3}), c({5})), std::invalid_argument,
                        message_has({"linear", "(4,3)", "(5,)"}));
  BOOST_CHECK_EXCEPTION(linear(c({3}), c({4, 3})), std::invalid_argument, message_has({"linear", "(3,)"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(gradient_slots)

// The backward of matmul and linear assigns an input's gradient with gemm (beta = 0) when the slot is still empty;
// when the product's inner dimension is 0, gemm writes nothing and the gradient must still be exact zeros.
BOOST_AUTO_TEST_CASE(empty_inner_dimensions_give_zero_gradients) {
  for (int round = 0; round < 2; ++round) {  // the second round reuses the cached blocks of the first
    Tape<double> tape;
    Variable<double> a = tape.leaf(Tensor<double>(Shape{2, 3}, 7.0));
    Variable<double> b = tape.leaf(Tensor<double>(Shape{3, 0}));
    tape.backward(sum(matmul(a, b)));
    BOOST_TEST((a.grad().flat() == Tensor<double>(Shape{2, 3}).flat()));
    Variable<double> x = tape.leaf(Tensor<double>(Shape{2, 3}, -3.0));
    Variable<double> W = tape.leaf(Tensor<double>(Shape{0, 3}));
    tape.backward(sum(linear(x, W)));
    BOOST_TEST((x.grad().flat() == Tensor<double>(Shape{2, 3}).flat()));
  }
}

BOOST_AUTO_TEST_CASE(a_value_used_by_two_products_gets_both_gradients) {
  // first use assigns the slot, the second adds to it
  Tape<double> tape;
  Variable<double> a = tape.leaf(Tensor<double>(Shape{2, 2}, {1.0, 2.0, 3.0, 4.0}));
  Variable<double> W = tape.leaf(Tensor<double>(Shape{2, 2}, {1.0, 0.0, 0.0, 1.0}));
  tape.backward(sum(linear(a, W)) + sum(matmul(a, W)));
  // da = 1 W (linear) + 1 Wᵀ (matmul) = 2 for W = I
  BOOST_TEST((a.grad().flat() == Tensor<double>(Shape{2, 2}, 2.0).flat()));
  // dW = 1ᵀ a (linear: dW[o, i] = Σ_r a[r, i]) + aᵀ 1 (matmul: dW[k, n] = Σ_r a[r, k]) = [[4, 6], [4, 6]] + [[4, 4],
  // [6, 6]]
  BOOST_TEST((W.grad().flat() == Tensor<double>(Shape{2, 2}, {8.0, 10.0, 10.0, 12.0}).flat()));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(gradient_slots_shared)

BOOST_AUTO_TEST_CASE(the_same_value_as_both_factors) {
  // y = Σ a a (matmul) and z = Σ a aᵀ (linear): both inputs are one node, its first gradient is assigned, the second
  // added; d/da Σ (a a) = 1 aᵀ + aᵀ 1, d/da Σ (a aᵀ) = 1 a + 1ᵀ a
  Tape<double> tape;
  Variable<double> a = tape.leaf(Tensor<double>(Shape{2, 2}, {1.0, 2.0, 3.0, 4.0}));
  tape.backward(sum(matmul(a, a)));
  // (1 aᵀ)[i, k] = Σ_j a[k, j] = row sums (3, 7); (aᵀ 1)[i, k] = Σ_j a[j, i] = column sums (4, 6)
  BOOST_TEST((a.grad().flat() == Tensor<double>(Shape{2, 2}, {3.0 + 4.0, 7.0 + 4.0, 3.0 + 6.0, 7.0 + 6.0}).flat()));
  tape.backward(sum(linear(a, a)));
  // dx = 1 W = column sums of W (4, 6) in every row; dW = 1ᵀ x = column sums of x (4, 6) in every row
  BOOST_TEST((a.grad().flat() == Tensor<double>(Shape{2, 2}, {8.0, 12.0, 8.0, 12.0}).flat()));
}

BOOST_AUTO_TEST_SUITE_END()
