// Tests of dropout (nn/layers.hpp): the same seed gives the same mask and another seed another; each element is
// dropped (0, and no gradient) or scaled by 1/(1 - p); not training or p = 0 records nothing; p = 1 gives zeros; about
// 1 - p of the elements are kept; p outside [0, 1] is refused naming the op; its gradient checked against finite
// differences, alone and added to a gradient its input already has.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "nn/layers.hpp"
#include "tests/autograd/helpers.hpp"

namespace tt = boost::test_tools;
using namespace attend;
using namespace attend::testing;
using attend::nn::dropout;

BOOST_AUTO_TEST_SUITE(dropout_layer)

BOOST_AUTO_TEST_CASE(dropout_same_seed_gives_same_mask) {
  Tape<double> tape;
  const auto x = tape.leaf(away_from_zero(random_tensor(Shape{8, 16}, 5), 0.01));
  Rng rng_a(42), rng_b(42), rng_c(43);
  const Tensor<double> ya = dropout(x, 0.5, true, rng_a).value();
  const Tensor<double> yb = dropout(x, 0.5, true, rng_b).value();
  const Tensor<double> yc = dropout(x, 0.5, true, rng_c).value();
  std::size_t same_ab = 0, same_ac = 0;
  for (std::size_t i = 0; i < ya.size(); ++i) {
    same_ab += ya.data()[i] == yb.data()[i];
    same_ac += ya.data()[i] == yc.data()[i];
  }
  BOOST_TEST(same_ab == ya.size());
  BOOST_TEST(same_ac < ya.size());  // another seed, another mask
}

BOOST_AUTO_TEST_CASE(dropout_zeroes_or_scales_each_element) {
  // y_i is 0 (dropped) or x_i / (1 - p) (kept), and dy flows back through the same mask and scale
  const double p = 0.25;
  Tape<double> tape;
  const auto x = tape.leaf(away_from_zero(random_tensor(Shape{4, 1, 5}, 9), 0.01));
  Rng rng(3);
  const auto y = dropout(x, p, true, rng);
  BOOST_TEST(to_string(y.shape()) == "(4,1,5)");
  tape.backward(sum(y));
  const Tensor<double> dx = x.grad();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < x.value().size(); ++i) {
    const double xi = x.value().data()[i], yi = y.value().data()[i];
    if (yi == 0.0) {
      BOOST_TEST(dx.data()[i] == 0.0);
    } else {
      ++kept;
      BOOST_TEST(yi == xi / (1 - p), tt::tolerance(1e-15));
      BOOST_TEST(dx.data()[i] == 1 / (1 - p), tt::tolerance(1e-15));
    }
  }
  BOOST_TEST(kept > 0u);
  BOOST_TEST(kept < x.value().size());
}

BOOST_AUTO_TEST_CASE(dropout_is_the_same_node_when_not_training_or_p_is_zero) {
  Tape<double> tape;
  const auto x = tape.leaf(random_tensor(Shape{3, 4}, 4));
  const std::size_t nodes = tape.size();
  Rng rng(1);
  const auto eval_mode = dropout(x, 0.5, false, rng);
  const auto no_drop = dropout(x, 0.0, true, rng);
  BOOST_TEST(eval_mode.index() == x.index());
  BOOST_TEST(no_drop.index() == x.index());
  BOOST_TEST(tape.size() == nodes);  // nothing recorded
  BOOST_TEST(values_are(eval_mode.value(), Shape{3, 4}, std::vector<double>(x.value().data(), x.value().data() + 12)));
}

BOOST_AUTO_TEST_CASE(dropout_with_p_one_gives_zeros_and_zero_gradient) {
  Tape<double> tape;
  const auto x = tape.leaf(random_tensor(Shape{2, 3}, 8));
  Rng rng(2);
  const auto y = dropout(x, 1.0, true, rng);
  tape.backward(sum(y));
  BOOST_TEST(values_are(y.value(), Shape{2, 3}, std::vector<double>(6, 0.0)));
  BOOST_TEST(values_are(x.grad(), Shape{2, 3}, std::vector<double>(6, 0.0)));
}

BOOST_AUTO_TEST_CASE(dropout_keeps_about_one_minus_p) {
  const std::size_t n = 100000;
  for (const double p : {0.1, 0.3, 0.8}) {
    BOOST_TEST_CONTEXT("p = " << p) {
      Tape<float> tape;
      const auto x = tape.constant(Tensor<float>(Shape{n}, 1.0f));
      Rng rng(17);
      const Tensor<float> y = dropout(x, p, true, rng).value();
      std::size_t kept = 0;
      double total = 0;
      for (std::size_t i = 0; i < n; ++i) {
        kept += y.data()[i] != 0.0f;
        total += y.data()[i];
      }
      // the standard deviation of the kept fraction is √(p(1-p)/n) ≤ 0.0016: 0.01 is more than 6 of them
      const double kept_fraction = static_cast<double>(kept) / n;
      BOOST_TEST(std::abs(kept_fraction - (1 - p)) < 0.01, "kept fraction " << kept_fraction);
      BOOST_TEST(total / n == 1.0, tt::tolerance(0.05));  // the scale keeps the expected value
    }
  }
}

BOOST_AUTO_TEST_CASE(dropout_rejects_p_outside_unit_interval) {
  Tape<double> tape;
  const auto x = tape.leaf(random_tensor(Shape{2, 2}, 6));
  Rng rng(0);
  BOOST_CHECK_EXCEPTION(dropout(x, -0.1, true, rng), std::invalid_argument, message_has({"dropout", "-0.1"}));
  BOOST_CHECK_EXCEPTION(dropout(x, 1.5, true, rng), std::invalid_argument, message_has({"dropout", "1.5"}));
  BOOST_CHECK_EXCEPTION(dropout(x, std::numeric_limits<double>::quiet_NaN(), true, rng), std::invalid_argument,
                        message_has({"dropout"}));
}

BOOST_AUTO_TEST_CASE(dropout_gradients) {
  // a generator re-created inside f draws the same mask on every evaluation of the finite differences
  for (const double p : {0.3, 0.6}) {
    const GradcheckFn f = [p](Tape<double>&, const Vars& v) {
      Rng rng(2024);
      return dropout(v[0], p, true, rng);
    };
    for (const Shape& shape : {Shape{2, 3}, Shape{4, 1, 5}}) {
      BOOST_TEST_CONTEXT("p = " << p << ", shape " << to_string(shape)) {
        const std::vector<Tensor<double>> inputs{random_tensor(shape, 12)};
        ATTEND_CHECK_GRADIENTS(f, inputs);
      }
    }
  }
  // dropout's backward adds to the gradient x already has from the later add node
  const GradcheckFn g = [](Tape<double>&, const Vars& v) {
    Rng rng(7);
    return add(dropout(v[0], 0.5, true, rng), v[0]);
  };
  const std::vector<Tensor<double>> inputs{random_tensor(Shape{3, 4}, 13)};
  ATTEND_CHECK_GRADIENTS(g, inputs);
}

BOOST_AUTO_TEST_SUITE_END()
