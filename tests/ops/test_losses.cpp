// Tests of the fused cross-entropy from logits (ops/losses.cpp) beyond its equality with nll_loss(log_softmax(...))
// (that is test_equals.cpp): hand-computed values, ignored targets left out of the mean, all targets ignored, (B,T,C)
// logits, logits of ±1e4 finite in float and double, bad targets named, finite-difference gradients (also when the
// gradient adds into an existing one), and label smoothing by hand.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/fused.hpp"
#include "tests/autograd/helpers.hpp"

namespace tt = boost::test_tools;
using namespace attend;
using namespace attend::testing;

namespace {

// -log softmax(x_n)[t_n] averaged over the rows n whose target is not `ignore_id`, for logits (..., C).
double cross_entropy_by_hand(const Tensor<double>& logits, const Ids& targets, std::int64_t ignore_id = -100) {
  const std::size_t classes = logits.shape()[logits.rank() - 1];
  double total = 0;
  std::size_t counted = 0;
  for (std::size_t n = 0; n < targets.size(); ++n) {
    if (targets.data()[n] == ignore_id) continue;
    double sum_exp = 0;
    for (std::size_t k = 0; k < classes; ++k) sum_exp += std::exp(logits.data()[n * classes + k]);
    total += std::log(sum_exp) - logits.data()[n * classes + static_cast<std::size_t>(targets.data()[n])];
    ++counted;
  }
  return total / static_cast<double>(counted);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(losses)

BOOST_AUTO_TEST_CASE_TEMPLATE(cross_entropy_of_extreme_logits_stays_finite, T, float_types) {
  // ±1e4: e^(1e4) overflows both types, so only the max-subtracted form can stay finite
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-15;
  const Tensor<T> logits(Shape{2, 3}, {1e4, -1e4, 0, -1e4, -1e4, -1e4});
  Tape<T> tape;
  const auto x = tape.leaf(logits);
  const auto loss = cross_entropy(x, Ids(Shape{2}, {1, 0}));
  // row 0: 1e4 - (-1e4) = 2e4; row 1: ln 3
  BOOST_TEST(values_are(loss.value(), Shape{}, {10000.549306144334}, tol));
  tape.backward(loss);
  BOOST_TEST(all_finite(x.grad()));
  BOOST_TEST(values_are(x.grad(), Shape{2, 3}, {0.5, -0.5, 0, 1.0 / 6 - 0.5, 1.0 / 6, 1.0 / 6}, tol));
}

BOOST_AUTO_TEST_CASE(cross_entropy_adds_into_an_existing_gradient) {
  // y = cross_entropy(x) + x: the later add node hands x its gradient first, so the op's backward must add to it
  const Ids targets(Shape{3}, {1, -100, 3});
  const GradcheckFn f = [targets](Tape<double>&, const Vars& v) { return add(cross_entropy(v[0], targets), v[0]); };
  const std::vector<Tensor<double>> inputs{random_tensor(Shape{3, 4}, 20)};
  ATTEND_CHECK_GRADIENTS(f, inputs);
}

// The output layer with its loss (linear_cross_entropy: one node in double) against finite differences: with a bias,
// an ignored row and label smoothing; and with x and W also read by later nodes, whose gradients reach them first, so
// that the node's backward must add to theirs.
BOOST_AUTO_TEST_CASE(linear_cross_entropy_gradcheck) {
  const Ids targets(Shape{4}, {2, -100, 6, 0});
  const GradcheckFn f = [targets](Tape<double>&, const Vars& v) {
    return linear_cross_entropy(v[0], v[1], v[2], targets, -100, 0.1);
  };
  const std::vector<Tensor<double>> inputs{random_tensor(Shape{4, 5}, 23), random_tensor(Shape{7, 5}, 24),
                                           random_tensor(Shape{7}, 25)};
  ATTEND_CHECK_GRADIENTS(f, inputs);
  const GradcheckFn g = [targets](Tape<double>&, const Vars& v) {
    const Variable<double> loss = linear_cross_entropy(v[0], v[1], Variable<double>(), targets);
    const Variable<double> sx = sum(v[0]), sw = sum(v[1]);  // recorded after the loss: their backward runs first
    return add(add(loss, sx), sw);
  };
  ATTEND_CHECK_GRADIENTS(g, std::vector<Tensor<double>>(inputs.begin(), inputs.begin() + 2));
}

// linear_cross_entropy checks its input in every precision (float32 products record the two nodes only after): the
// shapes, and ε in [0, 1], each refused in a message that names the op.
BOOST_AUTO_TEST_CASE_TEMPLATE(linear_cross_entropy_names_bad_input, T, float_types) {
  Tape<T> tape;
  const auto x = tape.leaf(Tensor<T>(Shape{2, 3, 4})), W = tape.leaf(Tensor<T>(Shape{5, 4}));
  const auto b = tape.leaf(Tensor<T>(Shape{5}));
  const auto says = [](const std::string& what) {
    return [what](const std::invalid_argument& e) { return std::string(e.what()) == what; };
  };
  BOOST_CHECK_EXCEPTION(linear_cross_entropy(x, W, b, Ids(Shape{2, 3}, 0)), std::invalid_argument,
                        says("linear_cross_entropy: input (2,3,4), weight (5,4), bias (5,): expected input (N, in), "
                             "weight (C, in), bias (C,)"));
  const auto rows = tape.leaf(Tensor<T>(Shape{2, 4}));
  BOOST_CHECK_EXCEPTION(linear_cross_entropy(rows, W, b, Ids(Shape{2}, 0), -100, 1.5), std::invalid_argument,
                        says("linear_cross_entropy: label_smoothing 1.500000 is outside [0, 1]"));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(cross_entropy_hand_computed, T, float_types) {
  // logits [[1,2,3],[1,1,1]], targets [2,0]: (-ln softmax([1,2,3])[2] + ln 3) / 2
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-15;
  Tape<T> tape;
  const auto x = tape.leaf(Tensor<T>(Shape{2, 3}, {1, 2, 3, 1, 1, 1}));
  const auto loss = cross_entropy(x, Ids(Shape{2}, {2, 0}));
  BOOST_TEST(values_are(loss.value(), Shape{}, {0.7531091265562452}, tol));
  tape.backward(loss);
  // (softmax - onehot) / N
  const double sixth = 1.0 / 6;
  BOOST_TEST(values_are(x.grad(), Shape{2, 3},
                        {0.04501528658519023, 0.12236423552739882, -0.1673795221125891, sixth - 0.5, sixth, sixth},
                        tol));
}

BOOST_AUTO_TEST_CASE(cross_entropy_excludes_ignored_targets_from_the_mean) {
  const Tensor<double> logits(Shape{3, 3}, {1, 2, 3, 5, -5, 0, 1, 1, 1});
  Tape<double> tape;
  const auto x = tape.leaf(logits);
  const auto loss = cross_entropy(x, Ids(Shape{3}, {2, -100, 0}));
  // the mean over rows 0 and 2 only, as on the 2×3 case
  BOOST_TEST(values_are(loss.value(), Shape{}, {0.7531091265562452}, 1e-15));
  BOOST_TEST(values_are(loss.value(), Shape{}, {cross_entropy_by_hand(logits, Ids(Shape{3}, {2, -100, 0}))}, 1e-15));
  tape.backward(loss);
  const Tensor<double> dx = x.grad();
  for (std::size_t k = 0; k < 3; ++k) BOOST_TEST(dx.at({1, k}) == 0.0);
  BOOST_TEST(dx.at({2, 0}) == (1.0 / 3 - 1) / 2, tt::tolerance(1e-15));  // divided by 2 rows, not 3

  // another ignore id: 1 is then skipped, -100 would be a bad target
  const auto other = cross_entropy(x, Ids(Shape{3}, {2, 1, 0}), 1);
  BOOST_TEST(values_are(other.value(), Shape{}, {0.7531091265562452}, 1e-15));
}

BOOST_AUTO_TEST_CASE(cross_entropy_all_ignored_gives_zero_and_zero_gradient) {
  Tape<double> tape;
  const auto x = tape.leaf(random_tensor(Shape{2, 3}, 16));
  const auto loss = cross_entropy(x, Ids(Shape{2}, {-100, -100}));
  BOOST_TEST(values_are(loss.value(), Shape{}, {0.0}));
  tape.backward(loss);
  BOOST_TEST(values_are(x.grad(), Shape{2, 3}, std::vector<double>(6, 0.0)));
}

BOOST_AUTO_TEST_CASE(cross_entropy_on_batch_time_class_logits) {
  // logits (B,T,C) = (2,3,4) with targets (B,T): the same as the (B·T, C) rows
  const Tensor<double> logits = random_tensor(Shape{2, 3, 4}, 17, -4.0, 4.0);
  const Ids targets(Shape{2, 3}, {3, 0, 1, -100, 2, 2});
  Tape<double> tape;
  const auto x = tape.leaf(logits);
  const auto loss = cross_entropy(x, targets);
  BOOST_TEST(values_are(loss.value(), Shape{}, {cross_entropy_by_hand(logits, targets)}, 1e-14));
  const auto flat = cross_entropy(reshape(x, {6, 4}), targets.reshaped(Shape{6}));
  BOOST_TEST(values_are(loss.value(), Shape{}, {flat.value().item()}));
}

BOOST_AUTO_TEST_CASE(cross_entropy_rejects_bad_targets) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{2, 3}));
  BOOST_CHECK_EXCEPTION(cross_entropy(x, Ids(Shape{2}, {0, 3})), std::invalid_argument,
                        message_has({"cross_entropy", "target 3", "[0, 3)"}));
  BOOST_CHECK_EXCEPTION(cross_entropy(x, Ids(Shape{2}, {-1, 0})), std::invalid_argument,
                        message_has({"cross_entropy", "target -1"}));
  BOOST_CHECK_EXCEPTION(cross_entropy(x, Ids(Shape{3}, {0, 1, 2})), std::invalid_argument,
                        message_has({"cross_entropy", "(2,3)", "(3,)"}));
  BOOST_CHECK_EXCEPTION(cross_entropy(x, Ids(Shape{2, 1}, {0, 1})), std::invalid_argument,
                        message_has({"cross_entropy", "(2,3)", "(2,1)"}));
}

BOOST_AUTO_TEST_CASE(cross_entropy_gradients) {
  struct Case {
    Shape logits;
    Ids targets;
  };
  for (const Case& c : {Case{Shape{3, 4}, Ids(Shape{3}, {0, 3, 1})},
                        Case{Shape{2, 3, 5}, Ids(Shape{2, 3}, {4, -100, 0, 2, 2, 1})},  // one row ignored
                        Case{Shape{4}, Ids::scalar(2)}}) {
    BOOST_TEST_CONTEXT("logits " << to_string(c.logits)) {
      const Ids targets = c.targets;
      const GradcheckFn f = [targets](Tape<double>&, const Vars& v) { return cross_entropy(v[0], targets); };
      const std::vector<Tensor<double>> inputs{random_tensor(c.logits, 18, -5.0, 5.0)};
      ATTEND_CHECK_GRADIENTS(f, inputs);
    }
  }
}

BOOST_AUTO_TEST_CASE(label_smoothing_hand_computed) {
  // one row, C = 3, ε = 0.3: target distribution q = 0.7 onehot(t) + 0.1; loss = -Σ q_c log p_c
  Tape<double> tape;
  const auto x = tape.leaf(Tensor<double>(Shape{1, 3}, {2.0, -1.0, 0.5}));
  const auto loss = cross_entropy(x, Ids(Shape{1}, {2}), -100, 0.3);
  const double lse = std::log(std::exp(2.0) + std::exp(-1.0) + std::exp(0.5));
  const double logp[3] = {2.0 - lse, -1.0 - lse, 0.5 - lse};
  const double q[3] = {0.1, 0.1, 0.8};
  BOOST_TEST(loss.value().item() == -(q[0] * logp[0] + q[1] * logp[1] + q[2] * logp[2]), tt::tolerance(1e-14));
  tape.backward(loss);
  // dx = softmax(x) - q
  BOOST_TEST(values_are(x.grad(), Shape{1, 3},
                        {std::exp(logp[0]) - q[0], std::exp(logp[1]) - q[1], std::exp(logp[2]) - q[2]}, 1e-14));
}

BOOST_AUTO_TEST_CASE(label_smoothing_gradients_and_errors) {
  const Ids targets(Shape{2, 3}, {1, 0, -100, 3, 3, 2});
  const GradcheckFn f = [targets](Tape<double>&, const Vars& v) { return cross_entropy(v[0], targets, -100, 0.1); };
  const std::vector<Tensor<double>> inputs{random_tensor(Shape{2, 3, 4}, 32, -3.0, 3.0)};
  ATTEND_CHECK_GRADIENTS(f, inputs);
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{1, 3}));
  BOOST_CHECK_EXCEPTION(cross_entropy(x, Ids(Shape{1}, {0}), -100, 1.5), std::invalid_argument,
                        message_has({"cross_entropy", "label_smoothing"}));
}

BOOST_AUTO_TEST_SUITE_END()
