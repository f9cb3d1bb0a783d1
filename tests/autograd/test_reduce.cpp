// Tests of the reductions (autograd/reduce.cpp): sum and mean of everything or along one axis (with and without
// keepdims, negative axes included), and max along an axis, whose gradient goes to the first position of the maximum.
// Values are compared with hand-computed cases and with plain index loops over a rank-3 tensor; gradients with
// finite differences (inputs without ties for max, plus one test of exact ties); bad axes must throw naming the op.
// Chapter: docs/01-autograd.md.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/autograd/helpers.hpp"

namespace tt = boost::test_tools;
using namespace attend;
using namespace attend::testing;

namespace {

// The shape of a reduction of `shape` along `axis` (already normalised), written out independently of the library.
Shape reduced(const Shape& shape, std::size_t axis, bool keepdims) {
  std::vector<std::size_t> dims;
  for (std::size_t a = 0; a < shape.rank(); ++a) {
    if (a != axis)
      dims.push_back(shape[a]);
    else if (keepdims)
      dims.push_back(1);
  }
  return Shape(dims);
}

// Position of element (i, j, k) of a (d0, d1, d2) tensor in the result of reducing `axis` (row-major, axis dropped).
std::size_t reduced_offset(const Shape& shape, std::size_t axis, std::size_t i, std::size_t j, std::size_t k) {
  if (axis == 0) return j * shape[2] + k;
  if (axis == 1) return i * shape[2] + k;
  return i * shape[1] + j;
}

// Sum, mean or max of a rank-3 tensor along an axis with index loops, and for max the flat position of the first
// maximum of each output element.
struct ByHand {
  std::vector<double> sum, mean, max;
  std::vector<std::size_t> argmax;
};
ByHand reduce_by_hand(const Tensor<double>& x, std::size_t axis) {
  const Shape& s = x.shape();
  const std::size_t n_out = s.size() / s[axis];
  ByHand r{std::vector<double>(n_out, 0.0), {}, std::vector<double>(n_out, -INFINITY), std::vector<std::size_t>(n_out)};
  for (std::size_t i = 0; i < s[0]; ++i)
    for (std::size_t j = 0; j < s[1]; ++j)
      for (std::size_t k = 0; k < s[2]; ++k) {
        const std::size_t o = reduced_offset(s, axis, i, j, k);
        const double v = x.at({i, j, k});
        r.sum[o] += v;
        if (v > r.max[o]) {
          r.max[o] = v;
          r.argmax[o] = (i * s[1] + j) * s[2] + k;
        }
      }
  for (const double total : r.sum) r.mean.push_back(total / static_cast<double>(s[axis]));
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reduce)

// ---- sum ------------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(sum_all_values_and_gradient) {
  Tape<double> tape;
  const auto x = tape.leaf(Tensor<double>(Shape{2, 3}, {-1.5, 0, 2, 1e3, -1e-3, 7}));
  const auto y = sum(x);
  BOOST_TEST(values_are(y.value(), Shape{}, {1007.499}, 1e-15));
  tape.backward(y, Tensor<double>::scalar(-2.5));
  BOOST_TEST(values_are(x.grad(), Shape{2, 3}, std::vector<double>(6, -2.5)));  // dy reaches every element
}

BOOST_AUTO_TEST_CASE(sum_all_gradients) {
  const GradcheckFn f = [](Tape<double>&, const Vars& v) { return sum(v[0]); };
  for (const Shape& shape : {Shape{2, 3}, Shape{4, 1, 5}, Shape{}}) {
    BOOST_TEST_CONTEXT("shape " << to_string(shape)) {
      const std::vector<Tensor<double>> inputs{random_tensor(shape, 1)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
}

BOOST_AUTO_TEST_CASE(sum_along_axis_hand_computed) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}));
  BOOST_TEST(values_are(sum(x, 0).value(), Shape{3}, {5, 7, 9}));
  BOOST_TEST(values_are(sum(x, 1).value(), Shape{2}, {6, 15}));
  BOOST_TEST(values_are(sum(x, -1).value(), Shape{2}, {6, 15}));
  BOOST_TEST(values_are(sum(x, -2).value(), Shape{3}, {5, 7, 9}));
  BOOST_TEST(values_are(sum(x, 0, true).value(), Shape{1, 3}, {5, 7, 9}));
  BOOST_TEST(values_are(sum(x, -1, true).value(), Shape{2, 1}, {6, 15}));
  // an empty axis sums to 0
  const auto empty = tape.constant(Tensor<double>(Shape{2, 0}));
  BOOST_TEST(values_are(sum(empty, 1).value(), Shape{2}, {0, 0}));
}

BOOST_AUTO_TEST_CASE(sum_along_axis_rank3_matches_index_loops) {
  const Tensor<double> x_value = random_tensor(Shape{2, 3, 4}, 2);
  for (const std::ptrdiff_t axis_arg : {0, 1, 2, -1, -2, -3}) {
    const std::size_t axis = static_cast<std::size_t>(axis_arg < 0 ? axis_arg + 3 : axis_arg);
    const ByHand expected = reduce_by_hand(x_value, axis);
    for (const bool keepdims : {false, true}) {
      BOOST_TEST_CONTEXT("axis " << axis_arg << ", keepdims " << keepdims) {
        Tape<double> tape;
        const auto x = tape.leaf(x_value);
        const auto y = sum(x, axis_arg, keepdims);
        BOOST_TEST(values_are(y.value(), reduced(x_value.shape(), axis, keepdims), expected.sum, 1e-15));
        // dx[i,j,k] = dy at the reduced position
        const Tensor<double> dy = random_tensor(y.shape(), 3);
        tape.backward(y, dy);
        std::vector<double> dx_expected;
        for (std::size_t i = 0; i < 2; ++i)
          for (std::size_t j = 0; j < 3; ++j)
            for (std::size_t k = 0; k < 4; ++k) {
              dx_expected.push_back(dy.data()[reduced_offset(x_value.shape(), axis, i, j, k)]);
            }
        BOOST_TEST(values_are(x.grad(), Shape{2, 3, 4}, dx_expected));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(sum_along_axis_gradients) {
  struct Case {
    Shape shape;
    std::ptrdiff_t axis;
    bool keepdims;
  };
  for (const Case& c : {Case{Shape{2, 3, 4}, 0, false}, Case{Shape{2, 3, 4}, 1, true}, Case{Shape{2, 3, 4}, -1, false},
                        Case{Shape{5}, 0, false}, Case{Shape{3, 1}, 1, true}, Case{Shape{2, 1, 2, 3}, -3, false}}) {
    BOOST_TEST_CONTEXT("shape " << to_string(c.shape) << ", axis " << c.axis << ", keepdims " << c.keepdims) {
      const GradcheckFn f = [c](Tape<double>&, const Vars& v) { return sum(v[0], c.axis, c.keepdims); };
      const std::vector<Tensor<double>> inputs{random_tensor(c.shape, 4)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
}

// ---- mean -----------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(mean_all_values_and_gradient) {
  Tape<double> tape;
  const auto x = tape.leaf(Tensor<double>(Shape{2, 3}, {1, 2, 3, 4, 5, -1e3}));
  const auto y = mean(x);
  BOOST_TEST(values_are(y.value(), Shape{}, {-985.0 / 6}, 1e-15));
  tape.backward(y);
  BOOST_TEST(values_are(x.grad(), Shape{2, 3}, std::vector<double>(6, 1.0 / 6), 1e-15));

  const GradcheckFn f = [](Tape<double>&, const Vars& v) { return mean(v[0]); };
  for (const Shape& shape : {Shape{2, 3}, Shape{4, 1, 5}, Shape{}}) {
    BOOST_TEST_CONTEXT("shape " << to_string(shape)) {
      const std::vector<Tensor<double>> inputs{random_tensor(shape, 5)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
}

BOOST_AUTO_TEST_CASE(mean_along_axis_hand_computed) {
  Tape<double> tape;
  const auto x = tape.leaf(Tensor<double>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}));
  BOOST_TEST(values_are(mean(x, 0).value(), Shape{3}, {2.5, 3.5, 4.5}));
  BOOST_TEST(values_are(mean(x, -1).value(), Shape{2}, {2, 5}, 1e-15));
  BOOST_TEST(values_are(mean(x, -2, true).value(), Shape{1, 3}, {2.5, 3.5, 4.5}));
  const auto y = mean(x, 1, true);
  BOOST_TEST(values_are(y.value(), Shape{2, 1}, {2, 5}, 1e-15));
  tape.backward(y, Tensor<double>(Shape{2, 1}, {3, -6}));
  BOOST_TEST(values_are(x.grad(), Shape{2, 3}, {1, 1, 1, -2, -2, -2}, 1e-15));  // dy / n with n = 3
}

BOOST_AUTO_TEST_CASE(mean_along_axis_rank3_matches_index_loops) {
  const Tensor<double> x_value = random_tensor(Shape{2, 3, 4}, 6);
  for (const std::ptrdiff_t axis_arg : {0, 1, -1}) {
    const std::size_t axis = static_cast<std::size_t>(axis_arg < 0 ? axis_arg + 3 : axis_arg);
    BOOST_TEST_CONTEXT("axis " << axis_arg) {
      Tape<double> tape;
      const auto x = tape.constant(x_value);
      BOOST_TEST(values_are(mean(x, axis_arg).value(), reduced(x_value.shape(), axis, false),
                            reduce_by_hand(x_value, axis).mean, 1e-15));
    }
  }
}

BOOST_AUTO_TEST_CASE(mean_along_axis_gradients) {
  struct Case {
    Shape shape;
    std::ptrdiff_t axis;
    bool keepdims;
  };
  for (const Case& c : {Case{Shape{2, 3, 4}, 1, true}, Case{Shape{2, 3, 4}, -1, false}, Case{Shape{4}, 0, false}}) {
    BOOST_TEST_CONTEXT("shape " << to_string(c.shape) << ", axis " << c.axis << ", keepdims " << c.keepdims) {
      const GradcheckFn f = [c](Tape<double>&, const Vars& v) { return mean(v[0], c.axis, c.keepdims); };
      const std::vector<Tensor<double>> inputs{random_tensor(c.shape, 7)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
}

// ---- max ------------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(max_along_axis_hand_computed) {
  // rows: [1, -5, 3] and [-2, -1e3, -7]
  Tape<double> tape;
  const auto x = tape.leaf(Tensor<double>(Shape{2, 3}, {1, -5, 3, -2, -1e3, -7}));
  BOOST_TEST(values_are(max(x, 0).value(), Shape{3}, {1, -5, 3}));
  BOOST_TEST(values_are(max(x, -2, true).value(), Shape{1, 3}, {1, -5, 3}));
  const auto row_max = max(x, 1);
  BOOST_TEST(values_are(row_max.value(), Shape{2}, {3, -2}));
  BOOST_TEST(values_are(max(x, -1, true).value(), Shape{2, 1}, {3, -2}));

  tape.backward(row_max, Tensor<double>(Shape{2}, {10, 20}));
  BOOST_TEST(values_are(x.grad(), Shape{2, 3}, {0, 0, 10, 20, 0, 0}));  // dy goes to the maximum only
  tape.backward(max(x, 0), Tensor<double>(Shape{3}, {1, 2, 3}));
  BOOST_TEST(values_are(x.grad(), Shape{2, 3}, {1, 2, 3, 0, 0, 0}));
}

BOOST_AUTO_TEST_CASE(max_along_axis_rank3_matches_index_loops) {
  const Tensor<double> x_value = random_tensor(Shape{2, 3, 4}, 8);
  for (const std::ptrdiff_t axis_arg : {0, 1, 2, -2}) {
    const std::size_t axis = static_cast<std::size_t>(axis_arg < 0 ? axis_arg + 3 : axis_arg);
    const ByHand expected = reduce_by_hand(x_value, axis);
    BOOST_TEST_CONTEXT("axis " << axis_arg) {
      Tape<double> tape;
      const auto x = tape.leaf(x_value);
      const auto y = max(x, axis_arg, true);
      BOOST_TEST(values_are(y.value(), reduced(x_value.shape(), axis, true), expected.max));
      const Tensor<double> dy = random_tensor(y.shape(), 9);
      tape.backward(y, dy);
      std::vector<double> dx_expected(24, 0.0);
      for (std::size_t o = 0; o < expected.argmax.size(); ++o) dx_expected[expected.argmax[o]] = dy.data()[o];
      BOOST_TEST(values_are(x.grad(), Shape{2, 3, 4}, dx_expected));
    }
  }
}

BOOST_AUTO_TEST_CASE(max_gradients_without_ties) {
  // random inputs: no two elements of a row within the finite-difference step of each other
  struct Case {
    Shape shape;
    std::ptrdiff_t axis;
    bool keepdims;
  };
  for (const Case& c : {Case{Shape{3, 4}, 1, false}, Case{Shape{2, 3, 4}, 0, true}, Case{Shape{2, 3, 4}, -2, false},
                        Case{Shape{5}, 0, false}}) {
    BOOST_TEST_CONTEXT("shape " << to_string(c.shape) << ", axis " << c.axis << ", keepdims " << c.keepdims) {
      const GradcheckFn f = [c](Tape<double>&, const Vars& v) { return max(v[0], c.axis, c.keepdims); };
      const std::vector<Tensor<double>> inputs{random_tensor(c.shape, 10, -100.0, 100.0)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
}

BOOST_AUTO_TEST_CASE(max_with_exact_ties_sends_gradient_to_first_maximum) {
  Tape<double> tape;
  const auto x = tape.leaf(Tensor<double>(Shape{2, 4}, {2, 5, 5, 1, 7, 7, 7, 7}));
  const auto y = max(x, 1);
  BOOST_TEST(values_are(y.value(), Shape{2}, {5, 7}));
  tape.backward(y, Tensor<double>(Shape{2}, {1, -3}));
  BOOST_TEST(values_are(x.grad(), Shape{2, 4}, {0, 1, 0, 0, -3, 0, 0, 0}));
  // along axis 0: column 0 ties (3, 3), column 1 does not
  const auto z = tape.leaf(Tensor<double>(Shape{2, 2}, {3, 1, 3, 2}));
  tape.backward(max(z, 0), Tensor<double>(Shape{2}, {4, 5}));
  BOOST_TEST(values_are(z.grad(), Shape{2, 2}, {4, 0, 0, 5}));
}

BOOST_AUTO_TEST_CASE(reductions_accumulate_into_existing_gradients) {
  // y = reduce(x) + x: the later add node hands x its gradient first, so the reduction's backward must add to it
  const std::vector<std::pair<const char*, std::function<Variable<double>(const Variable<double>&)>>> ops{
      {"sum", [](const Variable<double>& x) { return sum(x); }},
      {"sum along an axis", [](const Variable<double>& x) { return sum(x, 1, true); }},
      {"mean", [](const Variable<double>& x) { return mean(x); }},
      {"mean along an axis", [](const Variable<double>& x) { return mean(x, 0, true); }},
      {"max", [](const Variable<double>& x) { return max(x, -1, true); }},
  };
  for (const auto& [name, op] : ops) {
    BOOST_TEST_CONTEXT(name) {
      const GradcheckFn f = [op = op](Tape<double>&, const Vars& v) { return add(op(v[0]), v[0]); };
      const std::vector<Tensor<double>> inputs{random_tensor(Shape{3, 4}, 11)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
}

BOOST_AUTO_TEST_CASE(reductions_work_in_float) {
  Tape<float> tape;
  const auto x = tape.leaf(Tensor<float>(Shape{2, 2}, {1.5f, -2.0f, 0.25f, 4.0f}));
  BOOST_TEST(values_are(sum(x).value(), Shape{}, {3.75}));
  BOOST_TEST(values_are(mean(x, 0).value(), Shape{2}, {0.875, 1.0}));
  BOOST_TEST(values_are(max(x, 1).value(), Shape{2}, {1.5, 4.0}));
  tape.backward(mean(x));
  BOOST_TEST(values_are(x.grad(), Shape{2, 2}, {0.25, 0.25, 0.25, 0.25}));
}

// ---- errors ---------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(reductions_reject_bad_axes) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{2, 3}));
  BOOST_CHECK_EXCEPTION(sum(x, 2), std::invalid_argument, message_has({"sum", "axis 2", "rank 2"}));
  BOOST_CHECK_EXCEPTION(sum(x, -3, true), std::invalid_argument, message_has({"sum", "axis -3"}));
  BOOST_CHECK_EXCEPTION(mean(x, 2), std::invalid_argument, message_has({"mean", "axis 2"}));
  BOOST_CHECK_EXCEPTION(mean(x, -3), std::invalid_argument, message_has({"mean", "axis -3"}));
  BOOST_CHECK_EXCEPTION(max(x, 5), std::invalid_argument, message_has({"max", "axis 5"}));
  BOOST_CHECK_EXCEPTION(max(x, -3), std::invalid_argument, message_has({"max", "axis -3"}));
  const auto scalar = tape.constant(Tensor<double>::scalar(1.0));
  BOOST_CHECK_EXCEPTION(sum(scalar, 0), std::invalid_argument, message_has({"sum", "rank 0"}));
}

BOOST_AUTO_TEST_CASE(mean_and_max_reject_empty_axes) {
  Tape<double> tape;
  const auto empty_row = tape.constant(Tensor<double>(Shape{2, 0}));
  BOOST_CHECK_EXCEPTION(max(empty_row, 1), std::invalid_argument, message_has({"max", "(2,0)"}));
  BOOST_CHECK_EXCEPTION(mean(empty_row, -1), std::invalid_argument, message_has({"mean", "(2,0)"}));
  BOOST_CHECK_EXCEPTION(mean(empty_row), std::invalid_argument, message_has({"mean", "(2,0)"}));
}

BOOST_AUTO_TEST_SUITE_END()
