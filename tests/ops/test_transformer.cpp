// The Transformer's ops (ops/transformer.cpp) beyond their equality with the compositions they replace (that is
// test_equals.cpp): layer_norm and scaled_dot_product_attention gradient-checked in double, on a hand case, and with
// the masks' promises tested one by one: masked weights exactly 0, a fully padded query row finite and
// leaking no gradient, a future key changing no earlier output. Reference: docs/reference/ops.md.
#include <cmath>
#include <functional>

#include "ops/fused.hpp"
#include "tests/ops/inputs.hpp"

using namespace attend;
using namespace attend::testing;

BOOST_AUTO_TEST_SUITE(transformer_ops)

BOOST_AUTO_TEST_CASE(layer_norm_on_a_hand_computed_row) {
  Tape<double> tape;
  const auto x = tape.constant(Tensor<double>(Shape{1, 4}, {1, 2, 3, 4}));
  const auto gamma = tape.constant(Tensor<double>(Shape{4}, {1, 2, 1, 1}));
  const auto beta = tape.constant(Tensor<double>(Shape{4}, {0, 0, 0, 10}));
  // μ = 2.5, σ² = (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25 (biased), r = 1/√(1.25 + ε)
  const double r = 1.0 / std::sqrt(1.25 + 1e-5);
  BOOST_TEST(values_are(layer_norm(x, gamma, beta).value(), Shape{1, 4},
                        {-1.5 * r, 2 * -0.5 * r, 0.5 * r, 1.5 * r + 10}, 1e-15));
}

BOOST_AUTO_TEST_CASE(layer_norm_gradcheck) {
  const GradcheckFn f = [](Tape<double>&, const Vars& x) { return layer_norm(x[0], x[1], x[2]); };
  const std::vector<Tensor<double>> inputs = {random_tensor(Shape{3, 5}, 4, -2.0, 2.0), random_tensor(Shape{5}, 5),
                                              random_tensor(Shape{5}, 6)};
  ATTEND_CHECK_GRADIENTS(f, inputs);
  const GradcheckFn rank3 = [](Tape<double>&, const Vars& x) { return layer_norm(x[0], x[1], x[2], 0.1); };
  const std::vector<Tensor<double>> inputs3 = {random_tensor(Shape{2, 3, 4}, 7), random_tensor(Shape{4}, 8),
                                               random_tensor(Shape{4}, 9)};
  ATTEND_CHECK_GRADIENTS(rank3, inputs3);
}

BOOST_AUTO_TEST_CASE(layer_norm_errors) {
  Tape<double> tape;
  const auto x = tape.leaf(Tensor<double>(Shape{2, 4}));
  const auto g4 = tape.leaf(Tensor<double>(Shape{4}));
  const auto g3 = tape.leaf(Tensor<double>(Shape{3}));
  BOOST_CHECK_EXCEPTION(layer_norm(x, g3, g3), std::invalid_argument,
                        message_has({"layer_norm", "x (2,4)", "gamma (3,)", "(D,)"}));
  BOOST_CHECK_EXCEPTION(layer_norm(x, g4, g3), std::invalid_argument, message_has({"layer_norm", "beta (3,)"}));
  BOOST_CHECK_EXCEPTION(layer_norm(x, g4, g4, 0.0), std::invalid_argument, message_has({"layer_norm", "eps"}));
}

BOOST_AUTO_TEST_CASE(attention_gradcheck) {
  for (const auto& [name, options] : attention_cases()) {
    const AttentionOptions o = options;
    const GradcheckFn f = [&](Tape<double>&, const Vars& x) {
      return scaled_dot_product_attention(x[0], x[1], x[2], o);
    };
    const std::vector<Tensor<double>> inputs = {random_tensor(Shape{2, 4, 6}, 20), random_tensor(Shape{2, 4, 6}, 21),
                                                random_tensor(Shape{2, 4, 4}, 22)};
    BOOST_TEST_CONTEXT(name) { ATTEND_CHECK_GRADIENTS(f, inputs); }
  }
}

BOOST_AUTO_TEST_CASE(masked_weights_are_exactly_zero_and_a_future_key_changes_no_earlier_output) {
  Tape<double> tape;
  AttentionOptions o;
  o.heads = 2;
  o.causal = true;
  o.key_padding = padding({{1, 1, 1, 1}, {1, 1, 1, 0}});
  Tensor<double> weights;
  const auto q = tape.leaf(random_tensor(Shape{2, 4, 6}, 30));
  Tensor<double> k_values = random_tensor(Shape{2, 4, 6}, 31), v_values = random_tensor(Shape{2, 4, 4}, 32);
  const Variable<double> y =
      scaled_dot_product_attention(q, tape.constant(k_values), tape.constant(v_values), o, &weights);
  BOOST_TEST(weights.shape() == (Shape{2, 2, 4, 4}));
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t i = 0; i < 4; ++i) {
        double total = 0;
        for (std::size_t k = 0; k < 4; ++k) {
          const double a = weights.at({b, h, i, k});
          total += a;
          if (k > i || (b == 1 && k == 3)) BOOST_TEST(a == 0.0);  // exactly: future and padded keys
        }
        BOOST_TEST(total == 1.0, boost::test_tools::tolerance(1e-14));
      }
  // change the last key and value: outputs at positions 0..2 stay the same to the bit
  for (std::size_t c = 0; c < 6; ++c) k_values.at({0, 3, c}) += 5.0;
  for (std::size_t c = 0; c < 4; ++c) v_values.at({0, 3, c}) -= 5.0;
  const Variable<double> y2 = scaled_dot_product_attention(q, tape.constant(k_values), tape.constant(v_values), o);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t c = 0; c < 4; ++c) BOOST_TEST(y2.value().at({0, i, c}) == y.value().at({0, i, c}));
  BOOST_TEST(y2.value().at({0, 3, 0}) != y.value().at({0, 3, 0}));
}

BOOST_AUTO_TEST_CASE(a_fully_padded_row_is_finite_zero_and_leaks_no_gradient) {
  Tape<double> tape;
  AttentionOptions o;
  o.heads = 2;
  o.key_padding = padding({{1, 1, 1}, {0, 0, 0}});  // batch entry 1 has no real key at all
  const auto q = tape.leaf(random_tensor(Shape{2, 2, 4}, 40));
  const auto k = tape.leaf(random_tensor(Shape{2, 3, 4}, 41));
  const auto v = tape.leaf(random_tensor(Shape{2, 3, 4}, 42));
  const Variable<double> y = scaled_dot_product_attention(q, k, v, o);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t c = 0; c < 4; ++c) BOOST_TEST(y.value().at({1, i, c}) == 0.0);
  tape.backward(sum(y * y) + sum(y));
  for (std::size_t j = 0; j < 2 * 4; ++j) BOOST_TEST(q.grad().data()[2 * 4 + j] == 0.0);
  for (std::size_t j = 0; j < 3 * 4; ++j) {
    BOOST_TEST(k.grad().data()[3 * 4 + j] == 0.0);
    BOOST_TEST(v.grad().data()[3 * 4 + j] == 0.0);
  }
  bool finite = true;
  for (const double g : elements(q.grad())) finite = finite && std::isfinite(g);
  BOOST_TEST(finite);
}

BOOST_AUTO_TEST_CASE(dropout_on_the_weights_is_seeded_checked_and_off_in_evaluation) {
  const Tensor<double> qv = random_tensor(Shape{2, 5, 4}, 50), kv = random_tensor(Shape{2, 5, 4}, 51),
                       vv = random_tensor(Shape{2, 5, 4}, 52);
  auto with_dropout = [&](std::uint64_t seed, bool training, Tensor<double>* weights) {
    Tape<double> tape;
    Rng rng(seed);
    AttentionOptions o;
    o.dropout = 0.5;
    o.training = training;
    o.rng = &rng;
    return scaled_dot_product_attention(tape.constant(qv), tape.constant(kv), tape.constant(vv), o, weights).value();
  };
  BOOST_TEST(elements(with_dropout(3, true, nullptr)) == elements(with_dropout(3, true, nullptr)),
             boost::test_tools::per_element());
  BOOST_TEST(elements(with_dropout(3, true, nullptr)) != elements(with_dropout(4, true, nullptr)));
  Tape<double> tape;
  const Tensor<double> plain =
      scaled_dot_product_attention(tape.constant(qv), tape.constant(kv), tape.constant(vv)).value();
  BOOST_TEST(elements(with_dropout(3, false, nullptr)) == elements(plain), boost::test_tools::per_element());
  // the same mask on every call (a fresh generator of one seed): the gradient check sees one function
  const GradcheckFn f = [](Tape<double>&, const Vars& x) {
    Rng rng(9);
    AttentionOptions o;
    o.dropout = 0.3;
    o.rng = &rng;
    return scaled_dot_product_attention(x[0], x[1], x[2], o);
  };
  const std::vector<Tensor<double>> inputs = {qv, kv, vv};
  ATTEND_CHECK_GRADIENTS(f, inputs);
}

BOOST_AUTO_TEST_CASE(attention_errors) {
  Tape<double> tape;
  const auto q = tape.leaf(Tensor<double>(Shape{2, 3, 6}));
  const auto k = tape.leaf(Tensor<double>(Shape{2, 4, 6}));
  const auto v = tape.leaf(Tensor<double>(Shape{2, 4, 4}));
  AttentionOptions o;
  o.heads = 4;  // 6 columns do not split into 4 heads
  BOOST_CHECK_EXCEPTION(
      scaled_dot_product_attention(q, k, v, o), std::invalid_argument,
      message_has({"scaled_dot_product_attention", "q (2,3,6)", "k (2,4,6)", "v (2,4,4)", "4 heads"}));
  BOOST_CHECK_EXCEPTION(scaled_dot_product_attention(q, tape.leaf(Tensor<double>(Shape{2, 4, 5})), v),
                        std::invalid_argument, message_has({"k (2,4,5)"}));
  o.heads = 2;
  o.key_padding = Mask(Shape{2, 3});
  BOOST_CHECK_EXCEPTION(scaled_dot_product_attention(q, k, v, o), std::invalid_argument,
                        message_has({"key_padding (2,3)", "(2,4)"}));
  o.key_padding = Mask();
  o.causal = true;
  BOOST_CHECK_EXCEPTION(scaled_dot_product_attention(q, k, v, o), std::invalid_argument,
                        message_has({"causal", "T_q = 3", "T_k = 4"}));
  o.causal = false;
  o.dropout = 0.1;
  BOOST_CHECK_EXCEPTION(scaled_dot_product_attention(q, k, v, o), std::invalid_argument,
                        message_has({"dropout 0.1", "options.rng"}));
  o.dropout = 1.0;
  BOOST_CHECK_EXCEPTION(scaled_dot_product_attention(q, k, v, o), std::invalid_argument,
                        message_has({"dropout 1", "[0, 1)"}));
}

BOOST_AUTO_TEST_SUITE_END()
