// Tests of the ops that move elements without arithmetic (autograd/shape.cpp and the embedding lookup of
// autograd/index.cpp): reshape, transpose, permute, concat, stack, slice, select and embedding. Values are checked
// exactly, on hand-written cases and against plain index loops; gradients against finite differences; every op's
// error cases must throw std::invalid_argument naming the op and the offending shape, index or id.
// Chapter: docs/01-autograd.md.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/autograd/helpers.hpp"

namespace tt = boost::test_tools;
using namespace attend;
using namespace attend::testing;

namespace {

// The elements of a tensor in row-major order.
std::vector<double> elements(const Tensor<double>& t) { return std::vector<double>(t.data(), t.data() + t.size()); }

// 0, 1, 2, ... in row-major order: every element tells where it came from.
Tensor<double> iota(const Shape& shape) {
  Tensor<double> t(shape);
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<double>(i);
  return t;
}

// Gradient check of a one-input op on a random input of `shape`.
void check_gradients(const std::function<Variable<double>(const Variable<double>&)>& op, const Shape& shape,
                     std::uint64_t seed) {
  BOOST_TEST_CONTEXT("input shape " << to_string(shape)) {
    const GradcheckFn f = [op](Tape<double>&, const Vars& v) { return op(v[0]); };
    const std::vector<Tensor<double>> inputs{random_tensor(shape, seed)};
    ATTEND_CHECK_GRADIENTS(f, inputs);
  }
}

// Gradient check of y = [flat op(x); flat x]: the second part, recorded later, hands x its gradient first, so the op's
// backward must add to it rather than overwrite it.
void check_accumulates(const std::function<Variable<double>(const Variable<double>&)>& op, const Shape& shape,
                       std::uint64_t seed) {
  BOOST_TEST_CONTEXT("accumulating into an existing gradient, input shape " << to_string(shape)) {
    const GradcheckFn f = [op](Tape<double>&, const Vars& v) {
      return concat(Vars{reshape(op(v[0]), {-1}), reshape(v[0], {-1})}, 0);
    };
    const std::vector<Tensor<double>> inputs{random_tensor(shape, seed)};
    ATTEND_CHECK_GRADIENTS(f, inputs);
  }
}

// Gradient check of an op on a list of inputs (concat, stack) with random values of the given shapes.
void check_list_gradients(const std::function<Variable<double>(const Vars&)>& op, const std::vector<Shape>& shapes,
                          std::uint64_t seed) {
  std::string names;
  for (const Shape& s : shapes) names += to_string(s) + " ";
  BOOST_TEST_CONTEXT("input shapes " << names) {
    const GradcheckFn f = [op](Tape<double>&, const Vars& v) { return op(v); };
    std::vector<Tensor<double>> inputs;
    for (const Shape& s : shapes) inputs.push_back(random_tensor(s, seed++));
    ATTEND_CHECK_GRADIENTS(f, inputs);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shape)

// ---- reshape --------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(reshape_keeps_row_major_order_and_infers_minus_one) {
  Tape<double> tape;
  const auto x = tape.leaf(iota(Shape{2, 3, 4}));
  const std::vector<double> all = elements(iota(Shape{24}));
  BOOST_TEST(values_are(reshape(x, {6, 4}).value(), Shape{6, 4}, all));
  BOOST_TEST(values_are(reshape(x, {-1, 4}).value(), Shape{6, 4}, all));
  BOOST_TEST(values_are(reshape(x, {2, -1}).value(), Shape{2, 12}, all));
  BOOST_TEST(values_are(reshape(x, {4, -1, 3}).value(), Shape{4, 2, 3}, all));
  BOOST_TEST(values_are(reshape(x, {-1}).value(), Shape{24}, all));
  const auto one = tape.leaf(Tensor<double>(Shape{1, 1}, {-7.5}));
  BOOST_TEST(values_are(reshape(one, {}).value(), Shape{}, {-7.5}));

  // dx is dy read with x's shape
  const auto y = reshape(x, {4, 6});
  const Tensor<double> dy = random_tensor(Shape{4, 6}, 1);
  tape.backward(y, dy);
  BOOST_TEST(values_are(x.grad(), Shape{2, 3, 4}, elements(dy)));
}

BOOST_AUTO_TEST_CASE(reshape_gradients) {
  check_gradients([](const Variable<double>& x) { return reshape(x, {3, 2}); }, Shape{2, 3}, 2);
  check_gradients([](const Variable<double>& x) { return reshape(x, {4, -1}); }, Shape{2, 3, 4}, 3);
  check_gradients([](const Variable<double>& x) { return reshape(x, {}); }, Shape{1}, 4);
  check_accumulates([](const Variable<double>& x) { return reshape(x, {3, 2}); }, Shape{2, 3}, 5);
}

BOOST_AUTO_TEST_CASE(reshape_rejects_bad_sizes) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{2, 3, 4}));
  BOOST_CHECK_EXCEPTION(reshape(x, {4, 5}), std::invalid_argument, message_has({"reshape", "(2,3,4)", "(4,5)"}));
  BOOST_CHECK_EXCEPTION(reshape(x, {-1, 5}), std::invalid_argument, message_has({"reshape", "(2,3,4)"}));
  BOOST_CHECK_EXCEPTION(reshape(x, {-1, -1}), std::invalid_argument, message_has({"reshape", "-1"}));
  BOOST_CHECK_EXCEPTION(reshape(x, {-2, 12}), std::invalid_argument, message_has({"reshape", "-2"}));
  BOOST_CHECK_EXCEPTION(reshape(x, {}), std::invalid_argument, message_has({"reshape", "(2,3,4)", "()"}));
}

// ---- transpose and permute ------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(transpose_swaps_last_two_axes_by_default) {
  Tape<double> tape;
  const auto m = tape.leaf(Tensor<double>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}));
  BOOST_TEST(values_are(transpose(m).value(), Shape{3, 2}, {1, 4, 2, 5, 3, 6}));

  const Tensor<double> x_value = random_tensor(Shape{2, 3, 4}, 5);
  const auto x = tape.leaf(x_value);
  const auto y = transpose(x);  // (2,4,3): y(b,j,i) = x(b,i,j)
  std::vector<double> expected;
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t j = 0; j < 4; ++j)
      for (std::size_t i = 0; i < 3; ++i) expected.push_back(x_value.at({b, i, j}));
  BOOST_TEST(values_are(y.value(), Shape{2, 4, 3}, expected));
}

BOOST_AUTO_TEST_CASE(transpose_explicit_axes_on_rank3) {
  const Tensor<double> x_value = random_tensor(Shape{2, 3, 4}, 6);
  Tape<double> tape;
  const auto x = tape.leaf(x_value);
  std::vector<double> outer_swapped;  // axes 0 and 2: (4,3,2), y(k,j,i) = x(i,j,k)
  for (std::size_t k = 0; k < 4; ++k)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t i = 0; i < 2; ++i) outer_swapped.push_back(x_value.at({i, j, k}));
  BOOST_TEST(values_are(transpose(x, 0, 2).value(), Shape{4, 3, 2}, outer_swapped));
  BOOST_TEST(values_are(transpose(x, -1, -3).value(), Shape{4, 3, 2}, outer_swapped));
  std::vector<double> first_swapped;  // axes 0 and 1: (3,2,4), y(j,i,k) = x(i,j,k)
  for (std::size_t j = 0; j < 3; ++j)
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t k = 0; k < 4; ++k) first_swapped.push_back(x_value.at({i, j, k}));
  BOOST_TEST(values_are(transpose(x, 1, 0).value(), Shape{3, 2, 4}, first_swapped));
}

BOOST_AUTO_TEST_CASE(transpose_gradients) {
  check_gradients([](const Variable<double>& x) { return transpose(x); }, Shape{2, 3}, 7);
  check_gradients([](const Variable<double>& x) { return transpose(x); }, Shape{2, 3, 4}, 8);
  check_gradients([](const Variable<double>& x) { return transpose(x, 0, 2); }, Shape{2, 3, 4}, 9);
  check_accumulates([](const Variable<double>& x) { return transpose(x); }, Shape{2, 3}, 10);
}

BOOST_AUTO_TEST_CASE(transpose_rejects_bad_axes) {
  Tape<double> tape;
  const auto v = tape.constant(Tensor<double>(Shape{3}));
  const auto x = tape.constant(Tensor<double>(Shape{2, 3, 4}));
  BOOST_CHECK_EXCEPTION(transpose(v), std::invalid_argument, message_has({"transpose", "axis -2", "rank 1"}));
  BOOST_CHECK_EXCEPTION(transpose(x, 0, 3), std::invalid_argument, message_has({"transpose", "axis 3"}));
}

BOOST_AUTO_TEST_CASE(permute_rank3_values) {
  // perm (2,0,1): axis k of y is axis perm[k] of x, so y(a,b,c) = x(b,c,a)
  Tape<double> tape;
  BOOST_TEST(values_are(permute(tape.leaf(iota(Shape{2, 2, 2})), {2, 0, 1}).value(), Shape{2, 2, 2},
                        {0, 2, 4, 6, 1, 3, 5, 7}));
  const Tensor<double> x_value = random_tensor(Shape{2, 3, 4}, 10);
  std::vector<double> expected;
  for (std::size_t a = 0; a < 4; ++a)
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t c = 0; c < 3; ++c) expected.push_back(x_value.at({b, c, a}));
  BOOST_TEST(values_are(permute(tape.leaf(x_value), {2, 0, 1}).value(), Shape{4, 2, 3}, expected));
}

BOOST_AUTO_TEST_CASE(permute_rank4_values) {
  // (N,C,H,W) → (N,H,W,C) with perm (0,2,3,1): y(n,h,w,c) = x(n,c,h,w)
  const Tensor<double> x_value = random_tensor(Shape{2, 3, 4, 5}, 11);
  Tape<double> tape;
  std::vector<double> expected;
  for (std::size_t n = 0; n < 2; ++n)
    for (std::size_t h = 0; h < 4; ++h)
      for (std::size_t w = 0; w < 5; ++w)
        for (std::size_t c = 0; c < 3; ++c) expected.push_back(x_value.at({n, c, h, w}));
  const auto x = tape.leaf(x_value);
  const auto y = permute(x, {0, 2, 3, 1});
  BOOST_TEST(values_are(y.value(), Shape{2, 4, 5, 3}, expected));
  // the inverse permutation (0,3,1,2) brings x back
  BOOST_TEST(values_are(permute(y, {0, 3, 1, 2}).value(), Shape{2, 3, 4, 5}, elements(x_value)));
}

BOOST_AUTO_TEST_CASE(permute_gradients) {
  check_gradients([](const Variable<double>& x) { return permute(x, {2, 0, 1}); }, Shape{2, 3, 4}, 12);
  check_gradients([](const Variable<double>& x) { return permute(x, {0, 2, 3, 1}); }, Shape{2, 3, 2, 4}, 13);
  check_gradients([](const Variable<double>& x) { return permute(x, {3, 2, 1, 0}); }, Shape{1, 2, 3, 2}, 14);
  check_accumulates([](const Variable<double>& x) { return permute(x, {2, 0, 1}); }, Shape{2, 3, 4}, 15);
}

BOOST_AUTO_TEST_CASE(permute_rejects_invalid_permutations) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{2, 3, 4}));
  BOOST_CHECK_EXCEPTION(permute(x, {0, 0, 1}), std::invalid_argument, message_has({"permute", "(0,0,1)", "(2,3,4)"}));
  BOOST_CHECK_EXCEPTION(permute(x, {1, 0}), std::invalid_argument, message_has({"permute", "(1,0)", "(2,3,4)"}));
  BOOST_CHECK_EXCEPTION(permute(x, {0, 1, 3}), std::invalid_argument, message_has({"permute", "(0,1,3)"}));
  BOOST_CHECK_EXCEPTION(permute(x, {1, 0, 2, 3}), std::invalid_argument, message_has({"permute", "(1,0,2,3)"}));
}

// ---- concat and stack -----------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(concat_values_along_axis_0_1_and_minus_1) {
  Tape<double> tape;
  const auto a = tape.leaf(Tensor<double>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}));
  const auto b = tape.leaf(Tensor<double>(Shape{1, 3}, {7, 8, 9}));
  const auto c = tape.leaf(Tensor<double>(Shape{2, 1}, {10, 20}));
  BOOST_TEST(values_are(concat(Vars{a, b}, 0).value(), Shape{3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  BOOST_TEST(values_are(concat(Vars{b, a, b}, 0).value(), Shape{4, 3}, {7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  BOOST_TEST(values_are(concat(Vars{a, c}, 1).value(), Shape{2, 4}, {1, 2, 3, 10, 4, 5, 6, 20}));
  BOOST_TEST(values_are(concat(Vars{c, a}, -1).value(), Shape{2, 4}, {10, 1, 2, 3, 20, 4, 5, 6}));
  const auto p = tape.leaf(Tensor<double>(Shape{2, 2, 1}, {1, 2, 3, 4}));
  const auto q = tape.leaf(Tensor<double>(Shape{2, 2, 2}, {10, 11, 20, 21, 30, 31, 40, 41}));
  BOOST_TEST(values_are(concat(Vars{p, q}, -1).value(), Shape{2, 2, 3}, {1, 10, 11, 2, 20, 21, 3, 30, 31, 4, 40, 41}));
}

BOOST_AUTO_TEST_CASE(concat_splits_the_gradient_back) {
  Tape<double> tape;
  const auto a = tape.leaf(Tensor<double>(Shape{2, 3}));
  const auto c = tape.leaf(Tensor<double>(Shape{2, 1}));
  tape.backward(concat(Vars{a, c}, 1), Tensor<double>(Shape{2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
  BOOST_TEST(values_are(a.grad(), Shape{2, 3}, {1, 2, 3, 5, 6, 7}));
  BOOST_TEST(values_are(c.grad(), Shape{2, 1}, {4, 8}));
  // the same input twice gets both slices
  tape.backward(concat(Vars{c, c}, 0), Tensor<double>(Shape{4, 1}, {1, 2, 30, 40}));
  BOOST_TEST(values_are(c.grad(), Shape{2, 1}, {31, 42}));
}

BOOST_AUTO_TEST_CASE(concat_gradients) {
  check_list_gradients([](const Vars& v) { return concat(v, 0); }, {Shape{2, 3}, Shape{1, 3}, Shape{3, 3}}, 15);
  check_list_gradients([](const Vars& v) { return concat(v, 1); }, {Shape{2, 3}, Shape{2, 1}}, 18);
  check_list_gradients([](const Vars& v) { return concat(v, -1); }, {Shape{2, 2, 1}, Shape{2, 2, 2}}, 20);
  check_list_gradients([](const Vars& v) { return concat(v, 1); }, {Shape{2, 1, 3}, Shape{2, 2, 3}}, 22);
  check_accumulates([](const Variable<double>& x) { return concat(Vars{x, x}, 1); }, Shape{2, 3}, 23);
}

BOOST_AUTO_TEST_CASE(concat_rejects_mismatched_inputs) {
  Tape<double> tape;
  const auto a = tape.constant(Tensor<double>(Shape{2, 3}));
  const auto b = tape.constant(Tensor<double>(Shape{3, 2}));
  const auto r3 = tape.constant(Tensor<double>(Shape{2, 3, 1}));
  BOOST_CHECK_EXCEPTION(concat(Vars{a, a, b}, 0), std::invalid_argument,
                        message_has({"concat", "input 2", "(3,2)", "(2,3)"}));
  BOOST_CHECK_EXCEPTION(concat(Vars{a, b}, 1), std::invalid_argument, message_has({"concat", "input 1", "(3,2)"}));
  BOOST_CHECK_EXCEPTION(concat(Vars{a, r3}, 0), std::invalid_argument, message_has({"concat", "input 1", "(2,3,1)"}));
  BOOST_CHECK_EXCEPTION(concat(Vars{a, a}, 2), std::invalid_argument, message_has({"concat", "axis 2"}));
  BOOST_CHECK_EXCEPTION(concat(Vars{}, 0), std::invalid_argument, message_has({"concat"}));
}

BOOST_AUTO_TEST_CASE(stack_values_along_new_first_middle_and_last_axis) {
  Tape<double> tape;
  const auto a = tape.leaf(Tensor<double>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}));
  const auto b = tape.leaf(Tensor<double>(Shape{2, 3}, {7, 8, 9, 10, 11, 12}));
  BOOST_TEST(values_are(stack(Vars{a, b}, 0).value(), Shape{2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  BOOST_TEST(values_are(stack(Vars{a, b}, 1).value(), Shape{2, 2, 3}, {1, 2, 3, 7, 8, 9, 4, 5, 6, 10, 11, 12}));
  BOOST_TEST(values_are(stack(Vars{a, b}, -1).value(), Shape{2, 3, 2}, {1, 7, 2, 8, 3, 9, 4, 10, 5, 11, 6, 12}));
  BOOST_TEST(values_are(stack(Vars{a, b}, 2).value(), Shape{2, 3, 2}, {1, 7, 2, 8, 3, 9, 4, 10, 5, 11, 6, 12}));

  tape.backward(stack(Vars{a, b}, -1), Tensor<double>(Shape{2, 3, 2}, {1, 7, 2, 8, 3, 9, 4, 10, 5, 11, 6, 12}));
  BOOST_TEST(values_are(a.grad(), Shape{2, 3}, {1, 2, 3, 4, 5, 6}));
  BOOST_TEST(values_are(b.grad(), Shape{2, 3}, {7, 8, 9, 10, 11, 12}));
}

BOOST_AUTO_TEST_CASE(stack_gradients) {
  check_list_gradients([](const Vars& v) { return stack(v, 0); }, {Shape{2, 3}, Shape{2, 3}, Shape{2, 3}}, 24);
  check_list_gradients([](const Vars& v) { return stack(v, -1); }, {Shape{4}, Shape{4}}, 27);
  check_list_gradients([](const Vars& v) { return stack(v, 1); }, {Shape{2, 1, 3}, Shape{2, 1, 3}}, 29);
  check_accumulates([](const Variable<double>& x) { return stack(Vars{x, x}, 0); }, Shape{2, 3}, 30);
}

BOOST_AUTO_TEST_CASE(stack_rejects_unequal_shapes) {
  Tape<double> tape;
  const auto a = tape.constant(Tensor<double>(Shape{2, 3}));
  const auto b = tape.constant(Tensor<double>(Shape{3, 2}));
  const auto c = tape.constant(Tensor<double>(Shape{2, 3, 1}));
  BOOST_CHECK_EXCEPTION(stack(Vars{a, b}, 0), std::invalid_argument,
                        message_has({"stack", "input 1", "(3,2)", "(2,3)"}));
  BOOST_CHECK_EXCEPTION(stack(Vars{a, a, c}, 0), std::invalid_argument, message_has({"stack", "input 2", "(2,3,1)"}));
  BOOST_CHECK_EXCEPTION(stack(Vars{a, a}, 3), std::invalid_argument, message_has({"stack", "axis 3"}));
  BOOST_CHECK_EXCEPTION(stack(Vars{}, 0), std::invalid_argument, message_has({"stack"}));
}

// ---- slice and select -----------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(slice_values_and_gradient) {
  Tape<double> tape;
  const auto x = tape.leaf(iota(Shape{3, 4}));  // rows 0..3, 4..7, 8..11
  BOOST_TEST(values_are(slice(x, 0, 1, 3).value(), Shape{2, 4}, {4, 5, 6, 7, 8, 9, 10, 11}));
  BOOST_TEST(values_are(slice(x, -1, 0, 1).value(), Shape{3, 1}, {0, 4, 8}));
  BOOST_TEST(values_are(slice(x, 1, 2, 2).value(), Shape{3, 0}, {}));  // an empty range is allowed
  const auto y = slice(x, 1, 1, 3);
  BOOST_TEST(values_are(y.value(), Shape{3, 2}, {1, 2, 5, 6, 9, 10}));
  tape.backward(y, Tensor<double>(Shape{3, 2}, {-1, -2, -3, -4, -5, -6}));
  BOOST_TEST(values_are(x.grad(), Shape{3, 4}, {0, -1, -2, 0, 0, -3, -4, 0, 0, -5, -6, 0}));
}

BOOST_AUTO_TEST_CASE(slice_gradients) {
  check_gradients([](const Variable<double>& x) { return slice(x, 1, 1, 3); }, Shape{3, 4}, 31);
  check_gradients([](const Variable<double>& x) { return slice(x, -1, 0, 2); }, Shape{2, 3, 4}, 32);
  check_gradients([](const Variable<double>& x) { return slice(x, 0, 1, 2); }, Shape{2, 3, 4}, 33);
  check_accumulates([](const Variable<double>& x) { return slice(x, 1, 1, 3); }, Shape{3, 4}, 34);
}

BOOST_AUTO_TEST_CASE(slice_rejects_ranges_outside_the_axis) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{3, 4}));
  BOOST_CHECK_EXCEPTION(slice(x, 1, 3, 1), std::invalid_argument, message_has({"slice", "[3, 1)", "(3,4)"}));
  BOOST_CHECK_EXCEPTION(slice(x, 1, 2, 5), std::invalid_argument, message_has({"slice", "[2, 5)", "(3,4)"}));
  BOOST_CHECK_EXCEPTION(slice(x, 0, 4, 4), std::invalid_argument, message_has({"slice", "[4, 4)"}));
  BOOST_CHECK_EXCEPTION(slice(x, 2, 0, 1), std::invalid_argument, message_has({"slice", "axis 2"}));
}

BOOST_AUTO_TEST_CASE(select_time_step_of_batch_time_feature) {
  // x(b,t,f) = 100 b + 10 t + f for (batch 2, time 3, feature 4)
  Tensor<double> x_value(Shape{2, 3, 4});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < 3; ++t)
      for (std::size_t f = 0; f < 4; ++f) x_value.at({b, t, f}) = 100.0 * b + 10.0 * t + f;
  Tape<double> tape;
  const auto x = tape.leaf(x_value);
  for (std::size_t j = 0; j < 3; ++j) {
    std::vector<double> expected;
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t f = 0; f < 4; ++f) expected.push_back(100.0 * b + 10.0 * j + f);
    BOOST_TEST(values_are(select(x, 1, j).value(), Shape{2, 4}, expected), "time step " << j);
  }
  BOOST_TEST(
      values_are(select(x, 0, 1).value(), Shape{3, 4}, {100, 101, 102, 103, 110, 111, 112, 113, 120, 121, 122, 123}));
  BOOST_TEST(values_are(select(x, -1, 3).value(), Shape{2, 3}, {3, 13, 23, 103, 113, 123}));

  // the gradient lands on time step 2 only
  tape.backward(select(x, 1, 2), Tensor<double>(Shape{2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
  std::vector<double> dx_expected(24, 0.0);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t f = 0; f < 4; ++f) dx_expected[(b * 3 + 2) * 4 + f] = static_cast<double>(b * 4 + f + 1);
  BOOST_TEST(values_are(x.grad(), Shape{2, 3, 4}, dx_expected));

  // stacking every time step along axis 1 rebuilds x
  BOOST_TEST(values_are(stack(Vars{select(x, 1, 0), select(x, 1, 1), select(x, 1, 2)}, 1).value(), Shape{2, 3, 4},
                        elements(x_value)));
}

BOOST_AUTO_TEST_CASE(select_gradients) {
  check_gradients([](const Variable<double>& x) { return select(x, 1, 2); }, Shape{2, 3, 4}, 34);
  check_gradients([](const Variable<double>& x) { return select(x, -1, 0); }, Shape{2, 3}, 35);
  check_gradients([](const Variable<double>& x) { return select(x, 0, 1); }, Shape{3}, 36);  // to a scalar
  check_accumulates([](const Variable<double>& x) { return select(x, 1, 2); }, Shape{2, 3, 4}, 37);
}

BOOST_AUTO_TEST_CASE(select_rejects_index_out_of_range) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{2, 3, 4}));
  BOOST_CHECK_EXCEPTION(select(x, 1, 3), std::invalid_argument, message_has({"select", "index 3", "(2,3,4)"}));
  BOOST_CHECK_EXCEPTION(select(x, -1, 4), std::invalid_argument, message_has({"select", "index 4", "(2,3,4)"}));
  BOOST_CHECK_EXCEPTION(select(x, 3, 0), std::invalid_argument, message_has({"select", "axis 3"}));
}

// ---- embedding ------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(embedding_gathers_rows) {
  // W(r,e) = 10 r + e - 20 for a (5,4) table; ids (2,3) = [[0,4,2],[2,2,1]]
  Tensor<double> w_value(Shape{5, 4});
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t e = 0; e < 4; ++e) w_value.at({r, e}) = 10.0 * r + e - 20;
  const Ids ids(Shape{2, 3}, {0, 4, 2, 2, 2, 1});
  Tape<double> tape;
  const auto y = embedding(tape.leaf(w_value), ids);
  BOOST_TEST(values_are(y.value(), Shape{2, 3, 4}, {-20, -19, -18, -17, 20, 21, 22, 23, 0,   1,  2,  3,  //
                                                    0,   1,   2,   3,   0,  1,  2,  3,  -10, -9, -8, -7}));
  const auto scalar_id = embedding(tape.leaf(w_value), Ids::scalar(3));
  BOOST_TEST(values_are(scalar_id.value(), Shape{4}, {10, 11, 12, 13}));
}

BOOST_AUTO_TEST_CASE(embedding_repeated_ids_accumulate_gradient) {
  // ids [[0,4,2],[2,2,1]]: row 2 is used three times, rows 0, 1 and 4 once, row 3 never
  const Ids ids(Shape{2, 3}, {0, 4, 2, 2, 2, 1});
  Tape<double> tape;
  const auto w = tape.leaf(Tensor<double>(Shape{5, 4}));
  const auto y = embedding(w, ids);
  tape.backward(y, Tensor<double>(Shape{2, 3, 4}, 1.0));
  BOOST_TEST(values_are(w.grad(), Shape{5, 4}, {1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1}));

  // dy at lookup n is n + 1: row 2 collects lookups 2, 3 and 4, i.e. 3 + 4 + 5
  Tensor<double> dy(Shape{2, 3, 4});
  for (std::size_t n = 0; n < 6; ++n)
    for (std::size_t e = 0; e < 4; ++e) dy.data()[n * 4 + e] = static_cast<double>(n + 1);
  tape.backward(y, dy);
  BOOST_TEST(values_are(w.grad(), Shape{5, 4}, {1, 1, 1, 1, 6, 6, 6, 6, 12, 12, 12, 12, 0, 0, 0, 0, 2, 2, 2, 2}));

  // a Parameter's gradient accumulates the same way
  Parameter<double> table(Tensor<double>(Shape{5, 4}));
  tape.backward(sum(embedding(tape.param(table), Ids(Shape{4}, {3, 3, 0, 3}))));
  BOOST_TEST(values_are(table.grad, Shape{5, 4}, {1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 3, 3, 0, 0, 0, 0}));
}

BOOST_AUTO_TEST_CASE(embedding_gradients) {
  for (const Ids& ids : {Ids(Shape{2, 3}, {0, 4, 2, 2, 2, 1}), Ids(Shape{4}, {3, 3, 0, 3}),
                         Ids(Shape{2, 2, 2}, {1, 0, 1, 4, 4, 4, 2, 1})}) {
    BOOST_TEST_CONTEXT("ids of shape " << to_string(ids.shape())) {
      const GradcheckFn f = [ids](Tape<double>&, const Vars& v) { return embedding(v[0], ids); };
      const std::vector<Tensor<double>> inputs{random_tensor(Shape{5, 4}, 37)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
  const Ids repeated(Shape{2, 3}, {0, 4, 2, 2, 2, 1});
  check_accumulates([repeated](const Variable<double>& w) { return embedding(w, repeated); }, Shape{5, 4}, 38);
}

BOOST_AUTO_TEST_CASE(embedding_rejects_bad_ids_and_tables) {
  Tape<double> tape;
  const auto w = tape.constant(Tensor<double>(Shape{5, 4}));
  BOOST_CHECK_EXCEPTION(embedding(w, Ids(Shape{2, 2}, {0, 1, 5, 2})), std::invalid_argument,
                        message_has({"embedding", "id 5", "5 rows"}));
  BOOST_CHECK_EXCEPTION(embedding(w, Ids(Shape{3}, {1, -1, 0})), std::invalid_argument,
                        message_has({"embedding", "id -1"}));
  const auto not_a_table = tape.constant(Tensor<double>(Shape{5, 4, 1}));
  BOOST_CHECK_EXCEPTION(embedding(not_a_table, Ids(Shape{1}, {0})), std::invalid_argument,
                        message_has({"embedding", "(5,4,1)"}));
  BOOST_CHECK_EXCEPTION(embedding(w, Ids(Shape{1, 1, 1, 1})), std::invalid_argument,
                        message_has({"embedding", "(1,1,1,1)"}));
}

BOOST_AUTO_TEST_CASE(embedding_padding_row_gets_no_gradient) {
  Tape<double> tape;
  const auto W = tape.leaf(random_tensor(Shape{4, 2}, 41));
  const Ids ids(Shape{2, 3}, {1, 0, 0, 3, 0, 1});  // 0 is the padding id
  const auto y = embedding(W, ids, 0);
  // the forward pass still reads row 0 (it is whatever the table holds; nn::Embedding keeps it at zero)
  BOOST_TEST(y.value().at({0, 1, 0}) == W.value().at({0, 0}));
  tape.backward(sum(y));
  BOOST_TEST(values_are(W.grad(), Shape{4, 2}, {0, 0, 2, 2, 0, 0, 1, 1}));
}

BOOST_AUTO_TEST_SUITE_END()
