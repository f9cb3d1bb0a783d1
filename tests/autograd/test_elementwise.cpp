// Tests of the elementwise ops (autograd/elementwise.cpp): add, sub, mul and div with NumPy broadcasting, the ops with
// a scalar and the arithmetic operators built on them, the unary functions (neg, tanh, sigmoid, relu, exp, log, sqrt,
// pow). Each op gets exact values on a small case worked out by hand, its gradient checked against
// finite differences (attend::gradcheck) on several shapes, broadcasting ones included, and its error cases.
// Inputs mix negatives, values near zero and large magnitudes. Chapter: docs/01-autograd.md.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/autograd/helpers.hpp"

namespace tt = boost::test_tools;
using namespace attend;
using namespace attend::testing;

namespace {

// Gradient check of a binary op on pairs of shapes, the broadcasting ones included. `b_nonzero` keeps b away from 0.
void check_binary_gradients(const std::function<Variable<double>(const Variable<double>&, const Variable<double>&)>& op,
                            bool b_nonzero = false) {
  const std::vector<std::pair<Shape, Shape>> shape_pairs{
      {Shape{2, 3}, Shape{2, 3}}, {Shape{2, 3}, Shape{3}}, {Shape{3}, Shape{2, 3}},    {Shape{4, 1, 3}, Shape{2, 1}},
      {Shape{}, Shape{2, 3}},     {Shape{2, 3}, Shape{}},  {Shape{2, 1}, Shape{1, 3}},
  };
  std::uint64_t seed = 100;
  for (const auto& [a_shape, b_shape] : shape_pairs) {
    BOOST_TEST_CONTEXT("shapes " << to_string(a_shape) << " and " << to_string(b_shape)) {
      const GradcheckFn f = [op](Tape<double>&, const Vars& v) { return op(v[0], v[1]); };
      Tensor<double> b = random_tensor(b_shape, seed + 1);
      if (b_nonzero) b = away_from_zero(b, 0.5);
      const std::vector<Tensor<double>> inputs{random_tensor(a_shape, seed), b};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
    seed += 2;
  }
  // the op's backward must add to gradients its inputs already have: the later add nodes hand a and b theirs first
  BOOST_TEST_CONTEXT("accumulating into existing gradients") {
    const GradcheckFn g = [op](Tape<double>&, const Vars& v) { return add(add(op(v[0], v[1]), v[0]), v[1]); };
    Tensor<double> b = random_tensor(Shape{3}, seed + 1);
    if (b_nonzero) b = away_from_zero(b, 0.5);
    const std::vector<Tensor<double>> inputs{random_tensor(Shape{2, 3}, seed), b};
    ATTEND_CHECK_GRADIENTS(g, inputs);
  }
}

// Where random inputs of a unary op come from: anywhere in [-3, 3), the same kept 0.2 away from 0, or [0.05, 4).
enum class Domain { any, nonzero, positive };

Tensor<double> input_in(Domain domain, const Shape& shape, std::uint64_t seed) {
  switch (domain) {
    case Domain::nonzero:
      return away_from_zero(random_tensor(shape, seed, -3.0, 3.0), 0.2);
    case Domain::positive:
      return random_tensor(shape, seed, 0.05, 4.0);
    case Domain::any:
      break;
  }
  return random_tensor(shape, seed, -3.0, 3.0);
}

// Gradient check of a one-input op on a matrix, a rank-3 tensor with a size-1 axis and a scalar, with random inputs
// from `domain`, then on `extreme` (hand-picked inputs with large magnitudes and values near zero) when given.
void check_unary_gradients(const std::function<Variable<double>(const Variable<double>&)>& op, Domain domain,
                           const std::vector<double>& extreme = {}) {
  const GradcheckFn f = [op](Tape<double>&, const Vars& v) { return op(v[0]); };
  std::uint64_t seed = 200;
  for (const Shape& shape : {Shape{2, 3}, Shape{4, 1, 5}, Shape{}}) {
    BOOST_TEST_CONTEXT("shape " << to_string(shape)) {
      const std::vector<Tensor<double>> inputs{input_in(domain, shape, seed++)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
  // the op's backward must add to a gradient x already has: the later add(·, x) node hands x its share first
  BOOST_TEST_CONTEXT("accumulating into an existing gradient") {
    const GradcheckFn g = [op](Tape<double>&, const Vars& v) { return add(op(v[0]), v[0]); };
    const std::vector<Tensor<double>> inputs{input_in(domain, Shape{2, 3}, seed)};
    ATTEND_CHECK_GRADIENTS(g, inputs);
  }
  if (!extreme.empty()) {
    BOOST_TEST_CONTEXT("hand-picked inputs") {
      Tensor<double> x(Shape{extreme.size()});
      std::copy(extreme.begin(), extreme.end(), x.data());
      const std::vector<Tensor<double>> inputs{x};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
}

// The value of op(x) and its gradient dx for a seed gradient dy, on a fresh tape.
struct UnaryResult {
  Tensor<double> y, dx;
};
UnaryResult run_unary(const std::function<Variable<double>(const Variable<double>&)>& op, const Tensor<double>& x,
                      const Tensor<double>& dy) {
  Tape<double> tape;
  const Variable<double> xv = tape.leaf(x);
  const Variable<double> y = op(xv);
  tape.backward(y, dy);
  return {y.value(), xv.grad()};
}

// Hand-picked operands: negatives, zero, values near zero (±1e-3) and large magnitudes (±1e3).
const Tensor<double> a_23(Shape{2, 3}, {-1.5, 0.0, 2.0, 1e3, -1e-3, 7.0});
const Tensor<double> b_23(Shape{2, 3}, {0.5, -4.0, 2.0, -1e3, 1e-3, 0.25});

}  // namespace

BOOST_AUTO_TEST_SUITE(elementwise)

// ---- binary ops -----------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(binary_ops_same_shape_exact_values) {
  Tape<double> tape;
  const auto a = tape.constant(a_23);
  const auto b = tape.constant(b_23);
  BOOST_TEST(values_are(add(a, b).value(), Shape{2, 3}, {-1.0, -4.0, 4.0, 0.0, 0.0, 7.25}));
  BOOST_TEST(values_are(sub(a, b).value(), Shape{2, 3}, {-2.0, 4.0, 0.0, 2e3, -2e-3, 6.75}));
  BOOST_TEST(values_are(mul(a, b).value(), Shape{2, 3}, {-0.75, 0.0, 4.0, -1e6, -1e-6, 1.75}, 1e-15));
  BOOST_TEST(values_are(div(a, b).value(), Shape{2, 3}, {-3.0, 0.0, 1.0, -1.0, -1.0, 28.0}));
  // the operators are the same ops
  BOOST_TEST(values_are((a + b).value(), Shape{2, 3}, {-1.0, -4.0, 4.0, 0.0, 0.0, 7.25}));
  BOOST_TEST(values_are((a - b).value(), Shape{2, 3}, {-2.0, 4.0, 0.0, 2e3, -2e-3, 6.75}));
  BOOST_TEST(values_are((a * b).value(), Shape{2, 3}, {-0.75, 0.0, 4.0, -1e6, -1e-6, 1.75}, 1e-15));
  BOOST_TEST(values_are((a / b).value(), Shape{2, 3}, {-3.0, 0.0, 1.0, -1.0, -1.0, 28.0}));
}

BOOST_AUTO_TEST_CASE(add_and_sub_broadcast_a_row_and_sum_its_gradient_back) {
  // (2,3) ± (3,): b is added to each row; db is the column sums of dy (negated for sub)
  const Tensor<double> dy(Shape{2, 3}, {0.5, -1.0, 2.0, 3.0, 0.25, -4.0});
  for (const bool subtract : {false, true}) {
    BOOST_TEST_CONTEXT("op " << (subtract ? "sub" : "add")) {
      Tape<double> tape;
      const auto a = tape.leaf(Tensor<double>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}));
      const auto b = tape.leaf(Tensor<double>(Shape{3}, {10, -20, 0.5}));
      const auto y = subtract ? sub(a, b) : add(a, b);
      tape.backward(y, dy);
      if (subtract) {
        BOOST_TEST(values_are(y.value(), Shape{2, 3}, {-9, 22, 2.5, -6, 25, 5.5}));
        BOOST_TEST(values_are(b.grad(), Shape{3}, {-3.5, 0.75, 2.0}));
      } else {
        BOOST_TEST(values_are(y.value(), Shape{2, 3}, {11, -18, 3.5, 14, -15, 6.5}));
        BOOST_TEST(values_are(b.grad(), Shape{3}, {3.5, -0.75, -2.0}));
      }
      BOOST_TEST(values_are(a.grad(), Shape{2, 3}, {0.5, -1.0, 2.0, 3.0, 0.25, -4.0}));
    }
  }
}

BOOST_AUTO_TEST_CASE(scalar_shaped_operand_broadcasts_to_every_element) {
  // () with (2,3), in both orders: the scalar's gradient is the sum over all elements
  const Tensor<double> dy(Shape{2, 3}, {0.5, -1.0, 2.0, 3.0, 0.25, -4.0});
  Tape<double> tape;
  const auto s = tape.leaf(Tensor<double>::scalar(-2.5));
  const auto x = tape.leaf(Tensor<double>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}));

  const auto product = mul(s, x);
  tape.backward(product, dy);
  BOOST_TEST(values_are(product.value(), Shape{2, 3}, {-2.5, -5, -7.5, -10, -12.5, -15}));
  BOOST_TEST(values_are(s.grad(), Shape{}, {-6.25}));  // Σ dy ⊙ x = 0.5 - 2 + 6 + 12 + 1.25 - 24
  BOOST_TEST(values_are(x.grad(), Shape{2, 3}, {-1.25, 2.5, -5, -7.5, -0.625, 10}));

  const auto total = add(x, s);
  tape.backward(total, dy);
  BOOST_TEST(values_are(total.value(), Shape{2, 3}, {-1.5, -0.5, 0.5, 1.5, 2.5, 3.5}));
  BOOST_TEST(values_are(s.grad(), Shape{}, {0.75}));
}

BOOST_AUTO_TEST_CASE(mul_broadcasts_both_operands_rank3_by_rank2) {
  // (4,1,3) ⊙ (2,1) → (4,2,3): y(i,j,k) = a(i,0,k) b(j,0); both gradients are summed over their broadcast axes.
  const Tensor<double> a_value = random_tensor(Shape{4, 1, 3}, 1);
  const Tensor<double> b_value = random_tensor(Shape{2, 1}, 2);
  const Tensor<double> dy = random_tensor(Shape{4, 2, 3}, 3);
  Tape<double> tape;
  const auto a = tape.leaf(a_value);
  const auto b = tape.leaf(b_value);
  const auto y = mul(a, b);
  tape.backward(y, dy);

  std::vector<double> y_expected, da_expected(12, 0.0), db_expected(2, 0.0);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 2; ++j)
      for (std::size_t k = 0; k < 3; ++k) {
        y_expected.push_back(a_value.at({i, 0, k}) * b_value.at({j, 0}));
        da_expected[i * 3 + k] += dy.at({i, j, k}) * b_value.at({j, 0});
        db_expected[j] += dy.at({i, j, k}) * a_value.at({i, 0, k});
      }
  BOOST_TEST(values_are(y.value(), Shape{4, 2, 3}, y_expected));
  BOOST_TEST(values_are(a.grad(), Shape{4, 1, 3}, da_expected, 1e-14));
  BOOST_TEST(values_are(b.grad(), Shape{2, 1}, db_expected, 1e-14));
}

BOOST_AUTO_TEST_CASE(div_gradients_by_hand_with_broadcast_divisor) {
  // (2,2) / (2,): da = dy / b, db_j = -Σ_i dy_ij a_ij / b_j²
  Tape<double> tape;
  const auto a = tape.leaf(Tensor<double>(Shape{2, 2}, {1, -2, 3, 4}));
  const auto b = tape.leaf(Tensor<double>(Shape{2}, {2, -0.5}));
  const auto y = div(a, b);
  tape.backward(y, Tensor<double>(Shape{2, 2}, 1.0));
  BOOST_TEST(values_are(y.value(), Shape{2, 2}, {0.5, 4, 1.5, -8}));
  BOOST_TEST(values_are(a.grad(), Shape{2, 2}, {0.5, -2, 0.5, -2}));
  BOOST_TEST(values_are(b.grad(), Shape{2}, {-1, -8}));  // -(1 + 3) / 4 and -(-2 + 4) / 0.25
}

BOOST_AUTO_TEST_CASE(operand_used_twice_gets_both_gradients) {
  // y = x ⊙ x: dx = 2x (each use contributes x); y = x + x: dx = 2
  Tape<double> tape;
  const auto x = tape.leaf(Tensor<double>(Shape{3}, {-3, 0.5, 2}));
  tape.backward(sum(mul(x, x)));
  BOOST_TEST(values_are(x.grad(), Shape{3}, {-6, 1, 4}));
  tape.backward(sum(add(x, x)));
  BOOST_TEST(values_are(x.grad(), Shape{3}, {2, 2, 2}));
}

BOOST_AUTO_TEST_CASE(add_gradients) {
  check_binary_gradients([](const Variable<double>& a, const Variable<double>& b) { return add(a, b); });
}

BOOST_AUTO_TEST_CASE(sub_gradients) {
  check_binary_gradients([](const Variable<double>& a, const Variable<double>& b) { return sub(a, b); });
}

BOOST_AUTO_TEST_CASE(mul_gradients) {
  check_binary_gradients([](const Variable<double>& a, const Variable<double>& b) { return mul(a, b); });
  const GradcheckFn square = [](Tape<double>&, const Vars& v) { return mul(v[0], v[0]); };
  const std::vector<Tensor<double>> inputs{random_tensor(Shape{3, 2}, 7)};
  ATTEND_CHECK_GRADIENTS(square, inputs);
}

BOOST_AUTO_TEST_CASE(div_gradients) {
  check_binary_gradients([](const Variable<double>& a, const Variable<double>& b) { return div(a, b); }, true);
}

BOOST_AUTO_TEST_CASE(binary_gradients_with_large_and_tiny_magnitudes) {
  // Outputs stay below about 2e3: the finite differences of Σ w ⊙ y carry a rounding error near |y| · 1e-16 / eps,
  // so a 1e3 · 1e3 product would drown the check in noise without saying anything about the op.
  const Tensor<double> b(Shape{2, 3}, {0.5, -4.0, 2.0, -0.5, 1e-3, 0.25});  // no zero
  const std::vector<Tensor<double>> inputs{a_23, b};
  const GradcheckFn f_add = [](Tape<double>&, const Vars& v) { return add(v[0], v[1]); };
  const GradcheckFn f_sub = [](Tape<double>&, const Vars& v) { return sub(v[0], v[1]); };
  const GradcheckFn f_mul = [](Tape<double>&, const Vars& v) { return mul(v[0], v[1]); };
  const GradcheckFn f_div = [](Tape<double>&, const Vars& v) { return div(v[0], v[1]); };
  ATTEND_CHECK_GRADIENTS(f_add, inputs);
  ATTEND_CHECK_GRADIENTS(f_sub, inputs);
  ATTEND_CHECK_GRADIENTS(f_mul, inputs);
  ATTEND_CHECK_GRADIENTS(f_div, inputs);
}

BOOST_AUTO_TEST_CASE(binary_ops_reject_shapes_that_do_not_broadcast) {
  Tape<double> tape;
  const auto a = tape.constant(Tensor<double>(Shape{2, 3}));
  const auto b = tape.constant(Tensor<double>(Shape{2}));
  const auto c = tape.constant(Tensor<double>(Shape{4, 1, 3}));
  const auto d = tape.constant(Tensor<double>(Shape{3, 2}));
  BOOST_CHECK_EXCEPTION(add(a, b), std::invalid_argument, message_has({"add", "(2,3)", "(2,)"}));
  BOOST_CHECK_EXCEPTION(sub(b, a), std::invalid_argument, message_has({"sub", "(2,)", "(2,3)"}));
  BOOST_CHECK_EXCEPTION(mul(c, d), std::invalid_argument, message_has({"mul", "(4,1,3)", "(3,2)"}));
  BOOST_CHECK_EXCEPTION(div(a, d), std::invalid_argument, message_has({"div", "(2,3)", "(3,2)"}));
  BOOST_CHECK_EXCEPTION(a + b, std::invalid_argument, message_has({"add", "(2,3)", "(2,)"}));
}

// ---- with a scalar, and the operators -------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(scalar_ops_and_operators_exact_values) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{4}, {-2, -0.5, 0.25, 4}));
  BOOST_TEST(values_are(add(x, 1.5).value(), Shape{4}, {-0.5, 1, 1.75, 5.5}));
  BOOST_TEST(values_are(mul(x, -3.0).value(), Shape{4}, {6, 1.5, -0.75, -12}));
  BOOST_TEST(values_are((x * 0.5).value(), Shape{4}, {-1, -0.25, 0.125, 2}));
  BOOST_TEST(values_are((0.5 * x).value(), Shape{4}, {-1, -0.25, 0.125, 2}));
  BOOST_TEST(values_are((x + 1.0).value(), Shape{4}, {-1, 0.5, 1.25, 5}));
  BOOST_TEST(values_are((1.0 + x).value(), Shape{4}, {-1, 0.5, 1.25, 5}));
  BOOST_TEST(values_are((2.0 - x).value(), Shape{4}, {4, 2.5, 1.75, -2}));
  BOOST_TEST(values_are((x - 2.0).value(), Shape{4}, {-4, -2.5, -1.75, 2}));
  BOOST_TEST(values_are((1.0 / x).value(), Shape{4}, {-0.5, -2, 4, 0.25}, 1e-15));
  BOOST_TEST(values_are((x / 3.0).value(), Shape{4}, {-2.0 / 3, -0.5 / 3, 0.25 / 3, 4.0 / 3}, 1e-15));
  BOOST_TEST(values_are((-x).value(), Shape{4}, {2, 0.5, -0.25, -4}));
}

BOOST_AUTO_TEST_CASE(scalar_operators_work_on_float_variables) {
  // the scalar is a double literal; it takes the Variable's type
  Tape<float> tape;
  const auto x = tape.leaf(Tensor<float>(Shape{3}, {-2.0f, 0.5f, 8.0f}));
  const auto y = 2.0 - x * 0.5 + 1.0 / x;
  BOOST_TEST(values_are(y.value(), Shape{3}, {2.5, 3.75, -1.875}, 1e-6));
  tape.backward(sum(y));
  BOOST_TEST(values_are(x.grad(), Shape{3}, {-0.75, -4.5, -0.515625}, 1e-6));  // -0.5 - 1/x²
}

BOOST_AUTO_TEST_CASE(scalar_ops_gradients_by_hand) {
  const Tensor<double> x(Shape{4}, {-2, -0.5, 0.25, 4});
  const Tensor<double> dy(Shape{4}, {1, -2, 0.5, 3});
  const auto scaled = run_unary([](const Variable<double>& v) { return mul(v, -3.0); }, x, dy);
  BOOST_TEST(values_are(scaled.dx, Shape{4}, {-3, 6, -1.5, -9}));
  const auto shifted = run_unary([](const Variable<double>& v) { return add(v, 7.0); }, x, dy);
  BOOST_TEST(values_are(shifted.dx, Shape{4}, {1, -2, 0.5, 3}));
  const auto reciprocal = run_unary([](const Variable<double>& v) { return 1.0 / v; }, x, dy);
  BOOST_TEST(values_are(reciprocal.dx, Shape{4}, {-0.25, 8, -8, -0.1875}, 1e-14));  // -dy / x²
  const auto reflected = run_unary([](const Variable<double>& v) { return 2.0 - v; }, x, dy);
  BOOST_TEST(values_are(reflected.dx, Shape{4}, {-1, 2, -0.5, -3}));
}

BOOST_AUTO_TEST_CASE(scalar_ops_and_operators_gradients) {
  check_unary_gradients([](const Variable<double>& x) { return add(x, -1.25); }, Domain::any, {-1e3, 1e-3, 1e3});
  check_unary_gradients([](const Variable<double>& x) { return mul(x, -3.5); }, Domain::any, {-1e3, 1e-3, 1e3});
  check_unary_gradients([](const Variable<double>& x) { return x * 0.5; }, Domain::any);
  check_unary_gradients([](const Variable<double>& x) { return 2.0 - x; }, Domain::any);
  check_unary_gradients([](const Variable<double>& x) { return x / 3.0; }, Domain::any);
  check_unary_gradients([](const Variable<double>& x) { return 1.0 / x; }, Domain::nonzero, {-50, -0.1, 0.1, 50});
}

// ---- unary ----------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(neg_values_and_gradients) {
  const auto r = run_unary([](const Variable<double>& x) { return neg(x); }, Tensor<double>(Shape{3}, {-1e3, 0, 2.5}),
                           Tensor<double>(Shape{3}, {1, -2, 4}));
  BOOST_TEST(values_are(r.y, Shape{3}, {1e3, 0, -2.5}));
  BOOST_TEST(values_are(r.dx, Shape{3}, {-1, 2, -4}));
  check_unary_gradients([](const Variable<double>& x) { return neg(x); }, Domain::any);
}

BOOST_AUTO_TEST_CASE(tanh_values_and_gradients) {
  const std::vector<double> xs{-30, -1, -1e-3, 0, 0.5, 30};
  const Tensor<double> x(Shape{6}, {-30, -1, -1e-3, 0, 0.5, 30});
  const auto r = run_unary([](const Variable<double>& v) { return tanh(v); }, x, Tensor<double>(Shape{6}, 1.0));
  std::vector<double> y_expected, dx_expected;
  for (const double v : xs) {
    y_expected.push_back(std::tanh(v));
    dx_expected.push_back(1 - std::tanh(v) * std::tanh(v));
  }
  BOOST_TEST(values_are(r.y, Shape{6}, y_expected, 1e-14));
  BOOST_TEST(values_are(r.dx, Shape{6}, dx_expected, 1e-14));
  BOOST_TEST(r.y.at({0}) == -1.0);  // saturated, not NaN
  BOOST_CHECK_SMALL(r.dx.at({5}), 1e-20);
  check_unary_gradients([](const Variable<double>& v) { return tanh(v); }, Domain::any, {-20, -1e-3, 1e-3, 15});
}

BOOST_AUTO_TEST_CASE(sigmoid_values_and_gradients) {
  const std::vector<double> xs{-800, -5, -1e-3, 0, 2, 800};
  const Tensor<double> x(Shape{6}, {-800, -5, -1e-3, 0, 2, 800});
  const auto r = run_unary([](const Variable<double>& v) { return sigmoid(v); }, x, Tensor<double>(Shape{6}, 1.0));
  std::vector<double> y_expected, dx_expected;
  for (const double v : xs) {
    const double s = 1 / (1 + std::exp(-v));
    y_expected.push_back(s);
    dx_expected.push_back(s * (1 - s));
  }
  BOOST_TEST(values_are(r.y, Shape{6}, y_expected, 1e-14));
  BOOST_TEST(values_are(r.dx, Shape{6}, dx_expected, 1e-14));
  BOOST_TEST(r.y.at({3}) == 0.5);
  BOOST_TEST(r.y.at({0}) == 0.0);  // e^800 overflows to inf, and 1 / inf is 0: finite
  BOOST_TEST(r.y.at({5}) == 1.0);
  check_unary_gradients([](const Variable<double>& v) { return sigmoid(v); }, Domain::any, {-40, -1e-3, 1e-3, 40});
}

BOOST_AUTO_TEST_CASE(relu_values_and_gradients) {
  const Tensor<double> x(Shape{5}, {-1e3, -1e-3, 1e-3, 2, 1e3});
  const auto r =
      run_unary([](const Variable<double>& v) { return relu(v); }, x, Tensor<double>(Shape{5}, {1, 2, 3, 4, 5}));
  BOOST_TEST(values_are(r.y, Shape{5}, {0, 0, 1e-3, 2, 1e3}));
  BOOST_TEST(values_are(r.dx, Shape{5}, {0, 0, 3, 4, 5}));  // dy where x > 0
  // random inputs moved away from the kink at 0, where the finite difference would straddle it
  const GradcheckFn f = [](Tape<double>&, const Vars& v) { return relu(v[0]); };
  for (const Shape& shape : {Shape{2, 3}, Shape{4, 1, 5}}) {
    const std::vector<Tensor<double>> inputs{away_from_zero(random_tensor(shape, 31), 0.01)};
    ATTEND_CHECK_GRADIENTS(f, inputs);
  }
}

BOOST_AUTO_TEST_CASE(exp_values_and_gradients) {
  const std::vector<double> xs{-50, -1, -1e-3, 0, 1, 20};
  const Tensor<double> x(Shape{6}, {-50, -1, -1e-3, 0, 1, 20});
  const auto r = run_unary([](const Variable<double>& v) { return exp(v); }, x, Tensor<double>(Shape{6}, 2.0));
  std::vector<double> y_expected, dx_expected;
  for (const double v : xs) {
    y_expected.push_back(std::exp(v));
    dx_expected.push_back(2 * std::exp(v));
  }
  BOOST_TEST(values_are(r.y, Shape{6}, y_expected, 1e-14));
  BOOST_TEST(values_are(r.dx, Shape{6}, dx_expected, 1e-14));
  BOOST_TEST(r.y.at({3}) == 1.0);
  check_unary_gradients([](const Variable<double>& v) { return exp(v); }, Domain::any, {-30, -1e-3, 5, 10});
}

BOOST_AUTO_TEST_CASE(log_values_and_gradients) {
  const std::vector<double> xs{1e-3, 0.5, 1, 2, 1e4};
  const Tensor<double> x(Shape{5}, {1e-3, 0.5, 1, 2, 1e4});
  const auto r = run_unary([](const Variable<double>& v) { return log(v); }, x, Tensor<double>(Shape{5}, 1.0));
  std::vector<double> y_expected, dx_expected;
  for (const double v : xs) {
    y_expected.push_back(std::log(v));
    dx_expected.push_back(1 / v);
  }
  BOOST_TEST(values_are(r.y, Shape{5}, y_expected, 1e-14));
  BOOST_TEST(values_are(r.dx, Shape{5}, dx_expected, 1e-14));
  BOOST_TEST(r.y.at({2}) == 0.0);
  check_unary_gradients([](const Variable<double>& v) { return log(v); }, Domain::positive, {1e-3, 0.5, 1e4});
}

BOOST_AUTO_TEST_CASE(sqrt_values_and_gradients) {
  const auto r = run_unary([](const Variable<double>& v) { return sqrt(v); },
                           Tensor<double>(Shape{4}, {1e-4, 0.25, 4, 1e6}), Tensor<double>(Shape{4}, 1.0));
  BOOST_TEST(values_are(r.y, Shape{4}, {1e-2, 0.5, 2, 1e3}, 1e-15));
  BOOST_TEST(values_are(r.dx, Shape{4}, {50, 1, 0.25, 5e-4}, 1e-14));  // 1 / (2√x)
  check_unary_gradients([](const Variable<double>& v) { return sqrt(v); }, Domain::positive, {1e-3, 0.5, 1e4});
}

BOOST_AUTO_TEST_CASE(pow_values_and_gradients) {
  const Tensor<double> x(Shape{4}, {-3, -0.5, 0.25, 10});
  const Tensor<double> ones(Shape{4}, 1.0);
  const auto square = run_unary([](const Variable<double>& v) { return pow(v, 2.0); }, x, ones);
  BOOST_TEST(values_are(square.y, Shape{4}, {9, 0.25, 0.0625, 100}, 1e-14));
  BOOST_TEST(values_are(square.dx, Shape{4}, {-6, -1, 0.5, 20}, 1e-14));
  const auto cube = run_unary([](const Variable<double>& v) { return pow(v, 3.0); }, x, ones);
  BOOST_TEST(values_are(cube.y, Shape{4}, {-27, -0.125, 0.015625, 1000}, 1e-14));
  BOOST_TEST(values_are(cube.dx, Shape{4}, {27, 0.75, 0.1875, 300}, 1e-14));
  const auto root = run_unary([](const Variable<double>& v) { return pow(v, 0.5); },
                              Tensor<double>(Shape{3}, {0.25, 4, 1e4}), Tensor<double>(Shape{3}, 1.0));
  BOOST_TEST(values_are(root.y, Shape{3}, {0.5, 2, 100}, 1e-14));
  BOOST_TEST(values_are(root.dx, Shape{3}, {1, 0.25, 0.005}, 1e-14));

  check_unary_gradients([](const Variable<double>& v) { return pow(v, 3.0); }, Domain::any, {-50, -1e-3, 20});
  check_unary_gradients([](const Variable<double>& v) { return pow(v, -2.0); }, Domain::nonzero);
  check_unary_gradients([](const Variable<double>& v) { return pow(v, 0.5); }, Domain::positive, {1e-2, 1e4});
}

BOOST_AUTO_TEST_SUITE_END()
