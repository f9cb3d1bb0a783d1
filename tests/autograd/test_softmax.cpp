// Tests of softmax, log_softmax (plain and masked) and nll_loss (autograd/softmax.cpp). Values are checked on
// hand-computed cases, along the last and a middle axis; masks of the input's shape and broadcast masks must give
// masked positions exactly zero weight and exactly zero gradient, a single unmasked position weight exactly 1, and a
// fully masked row zeros without NaN; logits of ±1e4 must stay finite in float and double. (The fused cross_entropy
// is tested in tests/ops/test_losses.cpp.) Chapter: docs/07 (attention weights) for the masks.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/ops.hpp"
#include "tests/autograd/helpers.hpp"

namespace tt = boost::test_tools;
using namespace attend;
using namespace attend::testing;

namespace {

std::vector<double> elements(const Tensor<double>& t) { return std::vector<double>(t.data(), t.data() + t.size()); }

// softmax(x)_k = exp(x_k) / Σ_j exp(x_j), written out with the textbook formula (moderate x only).
std::vector<double> softmax_by_hand(const std::vector<double>& x) {
  double total = 0;
  for (const double v : x) total += std::exp(v);
  std::vector<double> y;
  for (const double v : x) y.push_back(std::exp(v) / total);
  return y;
}

// Softmax (or log-softmax) of a rank-3 tensor along the last axis with index loops, over the positions where
// keep(b, t, s) is true; masked positions are 0.
std::vector<double> masked_softmax_by_hand(const Tensor<double>& x,
                                           const std::function<bool(std::size_t, std::size_t, std::size_t)>& keep,
                                           bool take_log) {
  const Shape& s = x.shape();
  std::vector<double> y(x.size(), 0.0);
  for (std::size_t b = 0; b < s[0]; ++b)
    for (std::size_t t = 0; t < s[1]; ++t) {
      double total = 0;
      for (std::size_t k = 0; k < s[2]; ++k)
        if (keep(b, t, k)) total += std::exp(x.at({b, t, k}));
      for (std::size_t k = 0; k < s[2]; ++k)
        if (keep(b, t, k)) {
          const double v = x.at({b, t, k});
          y[(b * s[1] + t) * s[2] + k] = take_log ? v - std::log(total) : std::exp(v) / total;
        }
    }
  return y;
}

// softmax(x) and its gradient dx for a seed dy, on a fresh tape, with or without a mask.
struct Result {
  Tensor<double> y, dx;
};
Result run(bool take_log, const Tensor<double>& x, std::ptrdiff_t axis, const Mask* mask, const Tensor<double>& dy) {
  Tape<double> tape;
  const auto xv = tape.leaf(x);
  const auto y = mask == nullptr ? (take_log ? log_softmax(xv, axis) : softmax(xv, axis))
                                 : (take_log ? log_softmax(xv, axis, *mask) : softmax(xv, axis, *mask));
  tape.backward(y, dy);
  return {y.value(), xv.grad()};
}

// Gradient checks of softmax and log_softmax of `shape` along `axis` (masked when `mask` is given).
void check_softmax_gradients(const Shape& shape, std::ptrdiff_t axis, std::uint64_t seed, const Mask* mask = nullptr,
                             double low = -3.0, double high = 3.0) {
  for (const bool take_log : {false, true}) {
    BOOST_TEST_CONTEXT((take_log ? "log_softmax" : "softmax")
                       << " of " << to_string(shape) << " along axis " << axis << (mask ? " with a mask" : "")) {
      std::optional<Mask> m;
      if (mask != nullptr) m = *mask;
      const GradcheckFn f = [take_log, axis, m](Tape<double>&, const Vars& v) {
        if (m) return take_log ? log_softmax(v[0], axis, *m) : softmax(v[0], axis, *m);
        return take_log ? log_softmax(v[0], axis) : softmax(v[0], axis);
      };
      const std::vector<Tensor<double>> inputs{random_tensor(shape, seed, low, high)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(softmax)

// The suite is the namespace ::softmax: name the op explicitly so that softmax(...) calls it.
using attend::softmax;

// ---- softmax and log_softmax ----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE_TEMPLATE(softmax_last_axis_hand_computed, T, float_types) {
  // softmax([1,2,3]) = e^k / (e + e² + e³); a constant row gives 1/3 each
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-15;
  Tape<T> tape;
  const auto x = tape.constant(Tensor<T>(Shape{2, 3}, {1, 2, 3, -7, -7, -7}));
  const double third = 1.0 / 3;
  BOOST_TEST(values_are(softmax(x).value(), Shape{2, 3},
                        {0.09003057317038046, 0.24472847105479764, 0.6652409557748218, third, third, third}, tol));
  const double log3 = std::log(3.0);
  BOOST_TEST(values_are(log_softmax(x, -1).value(), Shape{2, 3},
                        {-2.4076059644443806, -1.4076059644443806, -0.4076059644443806, -log3, -log3, -log3}, tol));
}

BOOST_AUTO_TEST_CASE(softmax_middle_axis_hand_computed) {
  // x (2,3,2) along axis 1: the columns x(b,:,i) are [1,2,3], [0,0,0], [3,1,2] and [5,5,5]
  const Tensor<double> x(Shape{2, 3, 2}, {1, 0, 2, 0, 3, 0, 3, 5, 1, 5, 2, 5});
  const double p1 = 0.09003057317038046, p2 = 0.24472847105479764, p3 = 0.6652409557748218, third = 1.0 / 3;
  const std::vector<double> expected{p1, third, p2, third, p3, third, p3, third, p1, third, p2, third};
  Tape<double> tape;
  const auto xv = tape.constant(x);
  BOOST_TEST(values_are(softmax(xv, 1).value(), Shape{2, 3, 2}, expected, 1e-15));
  BOOST_TEST(values_are(softmax(xv, -2).value(), Shape{2, 3, 2}, expected, 1e-15));
  std::vector<double> logs;
  for (const double p : expected) logs.push_back(std::log(p));
  BOOST_TEST(values_are(log_softmax(xv, 1).value(), Shape{2, 3, 2}, logs, 1e-14));
}

BOOST_AUTO_TEST_CASE(softmax_rows_sum_to_one_and_log_softmax_is_its_log) {
  Tape<double> tape;
  const auto x = tape.constant(random_tensor(Shape{4, 5}, 1, -50.0, 50.0));
  const auto rows = sum(softmax(x), -1);
  BOOST_TEST(values_are(rows.value(), Shape{4}, std::vector<double>(4, 1.0), 1e-14));
  const auto y = tape.constant(random_tensor(Shape{3, 4, 5}, 2, -5.0, 5.0));
  BOOST_TEST(values_are(sum(softmax(y, 1), 1).value(), Shape{3, 5}, std::vector<double>(15, 1.0), 1e-14));
  BOOST_TEST(values_are(log_softmax(y, 1).value(), Shape{3, 4, 5}, elements(log(softmax(y, 1)).value()), 1e-14));
  // the same numbers as the textbook formula
  const Tensor<double> row = random_tensor(Shape{1, 1, 6}, 3);
  BOOST_TEST(values_are(softmax(tape.constant(row)).value(), Shape{1, 1, 6}, softmax_by_hand(elements(row)), 1e-15));
}

BOOST_AUTO_TEST_CASE(softmax_gradients) {
  check_softmax_gradients(Shape{2, 5}, -1, 4);
  check_softmax_gradients(Shape{3, 4, 2}, 1, 5);
  check_softmax_gradients(Shape{4}, 0, 6);
  check_softmax_gradients(Shape{2, 3}, 0, 7, nullptr, -20.0, 20.0);  // large logits: some weights near 0 and 1
}

BOOST_AUTO_TEST_CASE(softmax_ops_accumulate_into_existing_gradients) {
  // y = op(x) + x: the later add node hands x its gradient first, so the op's backward must add to it
  const Mask mask(Shape{4}, {1, 0, 1, 1});
  const std::vector<std::pair<const char*, std::function<Variable<double>(const Variable<double>&)>>> ops{
      {"softmax", [](const Variable<double>& x) { return softmax(x, -1); }},
      {"log_softmax", [](const Variable<double>& x) { return log_softmax(x, 0); }},
      {"masked softmax", [mask](const Variable<double>& x) { return softmax(x, -1, mask); }},
      {"masked log_softmax", [mask](const Variable<double>& x) { return log_softmax(x, -1, mask); }},
  };
  for (const auto& [name, op] : ops) {
    BOOST_TEST_CONTEXT(name) {
      const GradcheckFn f = [op = op](Tape<double>&, const Vars& v) { return add(op(v[0]), v[0]); };
      const std::vector<Tensor<double>> inputs{random_tensor(Shape{3, 4}, 20)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
}

BOOST_AUTO_TEST_CASE(softmax_rejects_bad_axis) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{2, 3}));
  BOOST_CHECK_EXCEPTION(softmax(x, 2), std::invalid_argument, message_has({"softmax", "axis 2"}));
  BOOST_CHECK_EXCEPTION(log_softmax(x, -3), std::invalid_argument, message_has({"log_softmax", "axis -3"}));
}

// ---- masks ----------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(masked_positions_get_exactly_zero_weight_and_gradient) {
  // mask of x's shape (1,2,4): the unmasked positions are normalised among themselves
  const Tensor<double> x = random_tensor(Shape{1, 2, 4}, 8);
  const Mask mask(Shape{1, 2, 4}, {1, 0, 1, 1, 1, 1, 1, 0});
  const auto keep = [&mask](std::size_t b, std::size_t t, std::size_t s) { return mask.at({b, t, s}) != 0; };
  const Tensor<double> dy = random_tensor(Shape{1, 2, 4}, 9);
  for (const bool take_log : {false, true}) {
    BOOST_TEST_CONTEXT((take_log ? "log_softmax" : "softmax")) {
      const Result r = run(take_log, x, -1, &mask, dy);
      BOOST_TEST(values_are(r.y, Shape{1, 2, 4}, masked_softmax_by_hand(x, keep, take_log), 1e-14));
      BOOST_TEST(r.y.data()[1] == 0.0);
      BOOST_TEST(r.y.data()[7] == 0.0);
      BOOST_TEST(r.dx.data()[1] == 0.0);
      BOOST_TEST(r.dx.data()[7] == 0.0);
    }
  }
  check_softmax_gradients(Shape{1, 2, 4}, -1, 10, &mask);
  // a masked position does not take part even when its logit is by far the largest
  Tape<double> tape;
  const auto big = tape.constant(Tensor<double>(Shape{3}, {1e4, 0, 1}));
  BOOST_TEST(values_are(softmax(big, 0, Mask(Shape{3}, {0, 1, 1})).value(), Shape{3},
                        {0, 0.2689414213699951, 0.7310585786300049}, 1e-15));
}

BOOST_AUTO_TEST_CASE(broadcast_masks_over_batch_and_time) {
  // input (B,T,S) = (2,3,4); mask (S,) shared by every row, and (B,1,S) shared by the time steps of one batch entry
  const Tensor<double> x = random_tensor(Shape{2, 3, 4}, 11);
  const Tensor<double> dy = random_tensor(Shape{2, 3, 4}, 12);
  const Mask per_source(Shape{4}, {1, 1, 0, 1});
  const Mask per_batch(Shape{2, 1, 4}, {1, 1, 1, 0, 0, 1, 1, 1});
  struct Case {
    const char* name;
    const Mask* mask;
    std::function<bool(std::size_t, std::size_t, std::size_t)> keep;
  };
  const std::vector<Case> cases{
      {"mask (S,)", &per_source, [&](std::size_t, std::size_t, std::size_t s) { return per_source.at({s}) != 0; }},
      {"mask (B,1,S)", &per_batch,
       [&](std::size_t b, std::size_t, std::size_t s) {
         return per_batch.at({b, 0, s}) != 0;
       }},
  };
  for (const Case& c : cases) {
    for (const bool take_log : {false, true}) {
      BOOST_TEST_CONTEXT(c.name << (take_log ? ", log_softmax" : ", softmax")) {
        const Result r = run(take_log, x, -1, c.mask, dy);
        BOOST_TEST(values_are(r.y, Shape{2, 3, 4}, masked_softmax_by_hand(x, c.keep, take_log), 1e-14));
        std::size_t masked = 0;
        for (std::size_t b = 0; b < 2; ++b)
          for (std::size_t t = 0; t < 3; ++t)
            for (std::size_t s = 0; s < 4; ++s) {
              if (c.keep(b, t, s)) continue;
              ++masked;
              BOOST_TEST(r.y.at({b, t, s}) == 0.0);
              BOOST_TEST(r.dx.at({b, t, s}) == 0.0);
            }
        BOOST_TEST(masked == 6u);
      }
    }
    check_softmax_gradients(Shape{2, 3, 4}, -1, 13, c.mask);
  }
}

BOOST_AUTO_TEST_CASE(one_unmasked_position_gets_weight_exactly_one) {
  // row 0 keeps only position 2; row 1 keeps everything
  const Tensor<double> x(Shape{1, 2, 4}, {-1e3, 50, 0.25, 1e3, 1, 2, 3, 4});
  const Mask mask(Shape{1, 2, 4}, {0, 0, 1, 0, 1, 1, 1, 1});
  const Tensor<double> dy = random_tensor(Shape{1, 2, 4}, 14);
  const Result weights = run(false, x, -1, &mask, dy);
  BOOST_TEST(weights.y.at({0, 0, 2}) == 1.0);
  BOOST_TEST(values_are(weights.y, Shape{1, 2, 4},
                        {0, 0, 1, 0, 0.03205860328008499, 0.08714431874203257, 0.23688281808991013, 0.6439142598879724},
                        1e-15));
  for (std::size_t s = 0; s < 4; ++s) BOOST_TEST(weights.dx.at({0, 0, s}) == 0.0);  // a constant weight
  const Result logs = run(true, x, -1, &mask, dy);
  BOOST_TEST(logs.y.at({0, 0, 2}) == 0.0);  // ln 1
  for (std::size_t s = 0; s < 4; ++s) BOOST_TEST(logs.dx.at({0, 0, s}) == 0.0);
}

BOOST_AUTO_TEST_CASE(fully_masked_row_gives_zeros_without_nan) {
  const Tensor<double> x(Shape{2, 3}, {1, 2, 3, -1e4, 0, 1e4});
  const Mask mask(Shape{2, 3}, {0, 0, 0, 1, 0, 1});
  const Tensor<double> dy = random_tensor(Shape{2, 3}, 15);
  for (const bool take_log : {false, true}) {
    BOOST_TEST_CONTEXT((take_log ? "log_softmax" : "softmax")) {
      const Result r = run(take_log, x, -1, &mask, dy);
      BOOST_TEST(all_finite(r.y));
      BOOST_TEST(all_finite(r.dx));
      for (std::size_t k = 0; k < 3; ++k) {
        BOOST_TEST(r.y.at({0, k}) == 0.0);
        BOOST_TEST(r.dx.at({0, k}) == 0.0);
      }
      BOOST_TEST(r.y.at({1, 2}) == (take_log ? 0.0 : 1.0));  // e^-2e4 vanishes next to e^0
    }
  }
}

BOOST_AUTO_TEST_CASE(masks_that_do_not_broadcast_are_rejected) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{2, 4}));
  BOOST_CHECK_EXCEPTION(softmax(x, -1, Mask(Shape{3})), std::invalid_argument,
                        message_has({"softmax", "(3,)", "(2,4)"}));
  BOOST_CHECK_EXCEPTION(log_softmax(x, -1, Mask(Shape{2, 2, 4})), std::invalid_argument,
                        message_has({"log_softmax", "(2,2,4)", "(2,4)"}));
}

// ---- extreme logits -------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE_TEMPLATE(extreme_logits_stay_finite, T, float_types) {
  // ±1e4: e^(1e4) overflows both types, so only the max-subtracted forms can stay finite
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-15;
  const Tensor<T> logits(Shape{2, 3}, {1e4, -1e4, 0, -1e4, -1e4, -1e4});
  const Tensor<T> dy(Shape{2, 3}, {0.5, -1, 2, 1, -0.25, 3});
  const double log3 = std::log(3.0);
  {
    Tape<T> tape;
    const auto x = tape.leaf(logits);
    const auto y = softmax(x);
    BOOST_TEST(values_are(y.value(), Shape{2, 3}, {1, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3}, tol));
    tape.backward(y, dy);
    BOOST_TEST(all_finite(x.grad()));
  }
  {
    Tape<T> tape;
    const auto x = tape.leaf(logits);
    const auto y = log_softmax(x);
    BOOST_TEST(values_are(y.value(), Shape{2, 3}, {0, -2e4, -1e4, -log3, -log3, -log3}, tol));
    tape.backward(y, dy);
    BOOST_TEST(all_finite(x.grad()));
    // row 0: dx = dy - softmax · Σ dy = dy - [1,0,0] · 1.5
    BOOST_TEST(values_are(x.grad(), Shape{2, 3}, {-1, -1, 2, -0.25, -1.5, 1.75}, tol));
  }
}

// ---- nll_loss -----------------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(nll_loss_hand_computed_and_ignores_padding) {
  Tape<double> tape;
  const auto logp = tape.leaf(Tensor<double>(Shape{3, 2}, {-0.1, -2.0, -1.5, -0.3, -0.7, -0.7}));
  const Ids targets(Shape{3}, {0, 1, 5});  // the last row is padding (ignore id 5)
  const auto loss = nll_loss(logp, targets, 5);
  BOOST_TEST(loss.value().item() == (0.1 + 0.3) / 2, tt::tolerance(1e-15));
  tape.backward(loss);
  BOOST_TEST(values_are(logp.grad(), Shape{3, 2}, {-0.5, 0, 0, -0.5, 0, 0}));
  BOOST_CHECK_EXCEPTION(nll_loss(logp, Ids(Shape{3}, {0, 2, 5}), 5), std::invalid_argument,
                        message_has({"nll_loss", "target 2", "position 1"}));
  const Ids rows(Shape{2, 3}, {1, 0, -100, 3, 3, 2});
  const GradcheckFn g = [rows](Tape<double>&, const Vars& v) { return nll_loss(log_softmax(v[0], -1), rows); };
  const std::vector<Tensor<double>> inputs{random_tensor(Shape{2, 3, 4}, 32, -3.0, 3.0)};
  ATTEND_CHECK_GRADIENTS(g, inputs);
}

BOOST_AUTO_TEST_SUITE_END()
