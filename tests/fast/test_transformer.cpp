// The Transformer's ops (fast/transformer.cpp): layer_norm and scaled_dot_product_attention, each equal to its
// composition from the small ops (value and every gradient, float and double), gradient-checked in double, on a hand
// case, and with the masks' promises tested one by one: masked weights exactly 0, a fully padded query row finite and
// leaking no gradient, a future key changing no earlier output. Reference: docs/reference/ops.md.
#include <cmath>
#include <functional>

#include "fast/composed.hpp"
#include "fast/fused.hpp"
#include "tests/autograd/helpers.hpp"

using namespace attend;
using attend::testing::float_types;
using attend::testing::message_has;
using attend::testing::random_tensor;
using attend::testing::values_are;
using attend::testing::Vars;

namespace {

template <class T>
Tensor<T> converted(const Tensor<double>& t) {
  Tensor<T> out(t.shape(), uninitialized);
  for (std::size_t i = 0; i < t.size(); ++i) out.data()[i] = static_cast<T>(t.data()[i]);
  return out;
}

template <class T>
std::vector<double> elements(const Tensor<T>& t) {
  return std::vector<double>(t.data(), t.data() + t.size());
}

template <class T>
using Build = std::function<Variable<T>(const std::vector<Variable<T>>&)>;

// y and the gradient of every input for the fixed random seed gradient dy.
template <class T>
std::pair<Tensor<T>, std::vector<Tensor<T>>> run(const Build<T>& f, const std::vector<Tensor<double>>& inputs) {
  Tape<T> tape;
  std::vector<Variable<T>> xs;
  for (const Tensor<double>& x : inputs) xs.push_back(tape.leaf(converted<T>(x)));
  const Variable<T> y = f(xs);
  tape.backward(y, converted<T>(random_tensor(y.shape(), 77)));
  std::vector<Tensor<T>> grads;
  for (const Variable<T>& x : xs) grads.push_back(x.grad());
  return {y.value(), grads};
}

template <class T>
void check_equal(const Build<T>& fused, const Build<T>& composed, const std::vector<Tensor<double>>& inputs,
                 const std::string& what) {
  const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  const auto [ya, ga] = run(fused, inputs);
  const auto [yb, gb] = run(composed, inputs);
  BOOST_TEST(values_are(ya, yb.shape(), elements(yb), tol), what << ": value");
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    BOOST_TEST(values_are(ga[k], gb[k].shape(), elements(gb[k]), tol), what << ": gradient of input " << k);
  }
}

// The mask of the composed attention: (B·H, T_q, T_k), 1 where query i of batch entry b may see key k.
Mask composed_mask(const AttentionOptions& o, std::size_t B, std::size_t Tq, std::size_t Tk) {
  Mask m(Shape{B * o.heads, Tq, Tk});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < o.heads; ++h)
      for (std::size_t i = 0; i < Tq; ++i)
        for (std::size_t k = 0; k < Tk; ++k) {
          const bool real = o.key_padding.size() == 0 || o.key_padding.at({b, k}) != 0;
          m.data()[((b * o.heads + h) * Tq + i) * Tk + k] = real && (!o.causal || k <= i);
        }
  return m;
}

// (B, T, H·d) → (B·H, T, d) and back
template <class T>
Variable<T> split_heads(const Variable<T>& x, std::size_t H) {
  const auto B = static_cast<std::int64_t>(x.shape()[0]), Tn = static_cast<std::int64_t>(x.shape()[1]);
  const auto d = static_cast<std::int64_t>(x.shape()[2] / H), h = static_cast<std::int64_t>(H);
  return reshape(transpose(reshape(x, {B, Tn, h, d}), 1, 2), {B * h, Tn, d});
}
template <class T>
Variable<T> merge_heads(const Variable<T>& x, std::size_t B) {
  const auto b = static_cast<std::int64_t>(B), h = static_cast<std::int64_t>(x.shape()[0] / B);
  const auto Tn = static_cast<std::int64_t>(x.shape()[1]), d = static_cast<std::int64_t>(x.shape()[2]);
  return reshape(transpose(reshape(x, {b, h, Tn, d}), 1, 2), {b, Tn, h * d});
}

// scaled_dot_product_attention written with the small ops: per-head batched matmuls and the masked softmax
template <class T>
Variable<T> attention_composed(const Variable<T>& q, const Variable<T>& k, const Variable<T>& v,
                               const AttentionOptions& o) {
  const std::size_t B = q.shape()[0], H = o.heads;
  const Variable<T> Q = split_heads(q, H), K = split_heads(k, H), V = split_heads(v, H);
  const T scale = T(1) / std::sqrt(static_cast<T>(Q.shape()[2]));
  const Variable<T> e = matmul(Q, transpose(K)) * scale;
  const Variable<T> alpha = softmax(e, -1, composed_mask(o, B, q.shape()[1], k.shape()[1]));
  return merge_heads(matmul(alpha, V), B);
}

Mask padding(std::vector<std::vector<std::uint8_t>> rows) {
  Mask m(Shape{rows.size(), rows.front().size()});
  for (std::size_t b = 0; b < rows.size(); ++b)
    for (std::size_t k = 0; k < rows[b].size(); ++k) m.at({b, k}) = rows[b][k];
  return m;
}

// Option sets the attention tests go through: plain, padding, causal, both, one head and three.
std::vector<std::pair<std::string, AttentionOptions>> attention_cases() {
  std::vector<std::pair<std::string, AttentionOptions>> cases;
  AttentionOptions o;
  o.heads = 2;
  cases.emplace_back("2 heads", o);
  o.key_padding = padding({{1, 1, 1, 1}, {1, 1, 0, 0}});
  cases.emplace_back("2 heads, padding", o);
  o.key_padding = Mask();
  o.causal = true;
  cases.emplace_back("2 heads, causal", o);
  o.key_padding = padding({{1, 1, 1, 0}, {1, 0, 1, 1}});
  cases.emplace_back("2 heads, causal and padding", o);
  o.heads = 1;
  cases.emplace_back("1 head, causal and padding", o);
  return cases;
}

}  // namespace

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

BOOST_AUTO_TEST_CASE_TEMPLATE(layer_norm_equals_composed, T, float_types) {
  for (const double eps : {1e-5, 0.5}) {
    const Build<T> fused = [&](const auto& x) { return layer_norm(x[0], x[1], x[2], eps); };
    const Build<T> composed = [&](const auto& x) { return layer_norm_composed(x[0], x[1], x[2], eps); };
    // rows with a large common offset (the centring must be exact) and of different scales
    Tensor<double> x = random_tensor(Shape{2, 3, 7}, 1, -3.0, 3.0);
    for (std::size_t i = 0; i < 7; ++i) x.data()[i] += 100.0;
    check_equal(fused, composed, {x, random_tensor(Shape{7}, 2), random_tensor(Shape{7}, 3)},
                "layer_norm eps " + std::to_string(eps));
  }
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

BOOST_AUTO_TEST_CASE_TEMPLATE(attention_equals_composed, T, float_types) {
  for (const auto& [name, options] : attention_cases()) {
    const AttentionOptions o = options;
    const Build<T> fused = [&](const auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], o); };
    const Build<T> composed = [&](const auto& x) { return attention_composed(x[0], x[1], x[2], o); };
    // B 2, T_q = T_k = 4 (a causal mask needs both equal), H·d = 6, H·d_v = 4 (or 2 with one head)
    const std::size_t dv = o.heads == 1 ? 2 : 4;
    check_equal(
        fused, composed,
        {random_tensor(Shape{2, 4, 6}, 10), random_tensor(Shape{2, 4, 6}, 11), random_tensor(Shape{2, 4, dv}, 12)},
        name);
  }
  // cross-attention: T_q ≠ T_k, with padding
  AttentionOptions cross;
  cross.heads = 3;
  cross.key_padding = padding({{1, 1, 1, 1, 1}, {1, 1, 1, 0, 0}});
  const Build<T> fused = [&](const auto& x) { return scaled_dot_product_attention(x[0], x[1], x[2], cross); };
  const Build<T> composed = [&](const auto& x) { return attention_composed(x[0], x[1], x[2], cross); };
  check_equal(fused, composed,
              {random_tensor(Shape{2, 3, 6}, 13), random_tensor(Shape{2, 5, 6}, 14), random_tensor(Shape{2, 5, 9}, 15)},
              "cross-attention, 3 heads, T_q 3, T_k 5");
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
