// Tape behaviour: gradient accumulation for reused values, long chains, parameters, the no-grad scope, detach,
// stale handles, two tapes side by side, and anomaly detection. Chapter: docs/01-autograd.md; rules:
// docs/reference/tape.md.
#include <cmath>
#include <iostream>
#include <sstream>

#include "helpers.hpp"

using namespace attend;

namespace {

bool message_contains(const std::exception& e, const std::string& part) {
  return std::string(e.what()).find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tape)

BOOST_AUTO_TEST_CASE(reused_node_accumulates) {
  // b = a + a; c = b + b: dc/da = 4, a classic bug when backward assigns instead of adding
  Tape<double> tape;
  Variable<double> a = tape.leaf(Tensor<double>::scalar(3.0));
  Variable<double> b = a + a;
  Variable<double> c = b + b;
  tape.backward(c);
  BOOST_TEST(c.value().item() == 12.0);
  BOOST_TEST(a.grad().item() == 4.0);
  BOOST_TEST(b.grad().item() == 2.0);
}

BOOST_AUTO_TEST_CASE(product_of_a_value_with_itself) {
  // y = x ⊙ x: dy/dx = 2x, both inputs of mul are the same node
  Tape<double> tape;
  Variable<double> x = tape.leaf(Tensor<double>(Shape{3}, {-1.5, 0.25, 2.0}));
  tape.backward(sum(x * x));
  BOOST_TEST(x.grad().at({0}) == -3.0);
  BOOST_TEST(x.grad().at({1}) == 0.5);
  BOOST_TEST(x.grad().at({2}) == 4.0);
}

BOOST_AUTO_TEST_CASE(ten_thousand_step_chain) {
  // y_{i+1} = 1.0001 · y_i, 10,000 times: dy/dx = 1.0001^10000, and the reverse loop needs no recursion
  Tape<double> tape;
  Variable<double> x = tape.leaf(Tensor<double>::scalar(1.0));
  Variable<double> y = x;
  for (int i = 0; i < 10000; ++i) y = y * 1.0001;
  BOOST_TEST(tape.size() == 10001u);
  tape.backward(y);
  const double expected = std::pow(1.0001, 10000);
  BOOST_TEST(x.grad().item() == expected, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(y.value().item() == expected, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(long_tanh_chain_float) {
  // An RNN-like unroll in float32: h = tanh(h + x) for 10,000 steps; every step's gradient reaches x
  Tape<float> tape;
  Variable<float> x = tape.leaf(Tensor<float>(Shape{2}, {0.1f, -0.2f}));
  Variable<float> h = tape.constant(Tensor<float>(Shape{2}));
  for (int i = 0; i < 10000; ++i) h = tanh(h * 0.5f + x);
  tape.backward(sum(h));
  for (std::size_t i = 0; i < 2; ++i) {
    BOOST_TEST(std::isfinite(x.grad().at({i})));
    BOOST_TEST(x.grad().at({i}) > 0.0f);
  }
}

BOOST_AUTO_TEST_CASE(parameter_is_one_leaf_per_tape_and_gradient_goes_to_it) {
  Parameter<double> w(Tensor<double>(Shape{2}, {2.0, -1.0}));
  Tape<double> tape;
  Variable<double> w1 = tape.param(w);
  Variable<double> w2 = tape.param(w);
  BOOST_TEST(w1.index() == w2.index());
  BOOST_TEST(tape.size() == 1u);
  // loss = Σ (w ⊙ w + 3w): ∂/∂w = 2w + 3
  tape.backward(sum(w1 * w2 + w1 * 3.0));
  BOOST_TEST(w.grad.at({0}) == 7.0);
  BOOST_TEST(w.grad.at({1}) == 1.0);
  // backward adds into the parameter's gradient, like PyTorch's .grad; zero_grad resets it
  tape.clear();
  tape.backward(sum(tape.param(w) * 3.0));
  BOOST_TEST(w.grad.at({0}) == 10.0);
  w.zero_grad();
  BOOST_TEST(w.grad.at({0}) == 0.0);
  BOOST_TEST(w.value.at({0}) == 2.0);
}

BOOST_AUTO_TEST_CASE(constants_get_no_gradient) {
  Tape<double> tape;
  Variable<double> x = tape.leaf(Tensor<double>::scalar(2.0));
  Variable<double> k = tape.constant(Tensor<double>::scalar(5.0));
  Variable<double> y = x * k;
  BOOST_TEST(!k.requires_grad());
  BOOST_TEST(y.requires_grad());
  tape.backward(y);
  BOOST_TEST(x.grad().item() == 5.0);
  BOOST_TEST(k.grad().item() == 0.0);
  // an op over constants only is itself a constant: nothing to differentiate
  BOOST_TEST(!(k * k).requires_grad());
}

BOOST_AUTO_TEST_CASE(no_grad_scope_records_nothing_to_differentiate) {
  Tape<double> tape;
  Parameter<double> w(Tensor<double>::scalar(3.0));
  Variable<double> x = tape.leaf(Tensor<double>::scalar(2.0));
  Variable<double> y;
  {
    NoGradGuard<double> guard(tape);
    BOOST_TEST(!tape.grad_enabled());
    y = tanh(x * tape.param(w));
    BOOST_TEST(y.value().item() == std::tanh(6.0));
    BOOST_TEST(!y.requires_grad());
    const Node<double>& node = tape.node(y.index());
    BOOST_TEST(node.input_count == 0u);  // no links
    BOOST_TEST(!node.backward);          // no backward function, nothing saved
  }
  BOOST_TEST(tape.grad_enabled());  // restored when the scope ends
  tape.backward(y);
  BOOST_TEST(x.grad().item() == 0.0);
  BOOST_TEST(w.grad.item() == 0.0);
}

BOOST_AUTO_TEST_CASE(parameter_first_used_without_gradients_gets_them_afterwards) {
  Tape<double> tape;
  Parameter<double> w(Tensor<double>::scalar(3.0));
  {
    NoGradGuard<double> guard(tape);
    BOOST_TEST(!tape.param(w).requires_grad());
  }
  Variable<double> w_node = tape.param(w);
  BOOST_TEST(w_node.requires_grad());
  tape.backward(w_node * w_node);
  BOOST_TEST(w.grad.item() == 6.0);
}

BOOST_AUTO_TEST_CASE(detach_stops_the_gradient) {
  // y = x · detach(x): dy/dx = detach(x) only
  Tape<double> tape;
  Variable<double> x = tape.leaf(Tensor<double>::scalar(3.0));
  Variable<double> y = x * detach(x);
  tape.backward(y);
  BOOST_TEST(y.value().item() == 9.0);
  BOOST_TEST(x.grad().item() == 3.0);
}

BOOST_AUTO_TEST_CASE(value_references_survive_recording_more_ops) {
  // v.value() is a reference into the tape; recording thousands of nodes after it must not move it
  Tape<double> tape;
  Variable<double> x = tape.leaf(Tensor<double>(Shape{3}, {1.0, -2.0, 0.5}));
  const Tensor<double>& x_value = x.value();
  Variable<double> y = x;
  for (int i = 0; i < 5000; ++i) y = y + x;
  BOOST_TEST(&x_value == &x.value());
  BOOST_TEST(x_value.at({1}) == -2.0);
  BOOST_TEST(y.value().at({1}) == -2.0 * 5001);
}

BOOST_AUTO_TEST_CASE(stale_handle_throws) {
  Tape<float> tape;
  Variable<float> x = tape.leaf(Tensor<float>::scalar(1.0f));
  tape.clear();
  Variable<float> fresh = tape.leaf(Tensor<float>::scalar(2.0f));  // reuses index 0 of the new generation
  BOOST_CHECK_EXCEPTION(x.value(), std::logic_error,
                        [](const std::logic_error& e) { return message_contains(e, "stale"); });
  BOOST_CHECK_EXCEPTION(tanh(x), std::logic_error, [](const std::logic_error& e) {
    return message_contains(e, "tanh") && message_contains(e, "stale");
  });
  BOOST_CHECK_EXCEPTION(fresh + x, std::logic_error,
                        [](const std::logic_error& e) { return message_contains(e, "stale"); });
  BOOST_CHECK_EXCEPTION(tape.backward(x), std::logic_error,
                        [](const std::logic_error& e) { return message_contains(e, "backward"); });
  BOOST_TEST(fresh.value().item() == 2.0f);
}

// truncate(n) keeps the first n nodes (their handles, values and the parameter nodes among them) and makes the
// dropped ones' handles stale, even once new nodes take their indices; backward then runs over what is kept.
BOOST_AUTO_TEST_CASE(truncate_keeps_the_prefix_and_makes_the_rest_stale) {
  Tape<double> tape;
  Parameter<double> w(Tensor<double>::scalar(3.0));
  const Variable<double> x = tape.leaf(Tensor<double>::scalar(2.0));
  const Variable<double> wx = tape.param(w) * x;  // nodes 0 (x), 1 (w), 2 (w·x)
  const std::size_t mark = tape.size();
  BOOST_TEST(mark == 3u);
  Parameter<double> late(Tensor<double>::scalar(5.0));
  const Variable<double> dropped = tanh(wx) + tape.param(late);
  tape.truncate(mark);
  BOOST_TEST(tape.size() == mark);
  const Variable<double> again = wx * wx;  // takes the dropped nodes' first index
  BOOST_CHECK_EXCEPTION(dropped.value(), std::logic_error,
                        [](const std::logic_error& e) { return message_contains(e, "truncated"); });
  BOOST_TEST(again.value().item() == 36.0);
  BOOST_TEST(tape.param(w).value().item() == 3.0);  // the kept parameter node, the same one
  BOOST_TEST(tape.size() == mark + 1);
  BOOST_TEST(tape.param(late).value().item() == 5.0);  // a dropped parameter node is made again
  tape.backward(again);                                // d(w²x²)/dx = 2w²x = 36, d/dw = 2wx² = 24
  BOOST_TEST(x.grad().item() == 36.0);
  BOOST_TEST(w.grad.item() == 24.0);
  tape.truncate(100);  // beyond the end: nothing changes
  BOOST_TEST(again.value().item() == 36.0);
  tape.truncate(0);
  BOOST_CHECK_THROW(x.value(), std::logic_error);
}

// truncate_keeping: the values a decoding loop carries to its next step survive as new constants, moved (the same
// storage), each node once however often it is named; handles below the mark come back as they were.
BOOST_AUTO_TEST_CASE(truncate_keeping_moves_the_kept_values_into_constants) {
  Tape<double> tape;
  Parameter<double> late(Tensor<double>::scalar(5.0));
  const Variable<double> x = tape.leaf(Tensor<double>(Shape{3}, 2.0));
  const std::size_t mark = tape.size();
  const Variable<double> state = tanh(x) * 2.0;
  const Variable<double> big = exp(x);
  const Variable<double> scratch = state + big;
  const Variable<double> p = tape.param(late);
  const double* storage = state.value().data();
  const double expected = state.value().data()[1];
  const std::vector<Variable<double>> kept = tape.truncate_keeping(mark, {state, x, state, p});
  BOOST_TEST(tape.size() == mark + 2);            // state once, the parameter's value once; x was below the mark
  BOOST_TEST(kept[0].value().data() == storage);  // moved, not copied
  BOOST_TEST(kept[0].value().data()[1] == expected);
  BOOST_TEST(kept[1].index() == x.index());
  BOOST_TEST(kept[2].index() == kept[0].index());
  BOOST_TEST(kept[3].value().item() == 5.0);
  BOOST_TEST(!kept[3].requires_grad());  // a constant now: the parameter's node went
  BOOST_CHECK_THROW(scratch.value(), std::logic_error);
  BOOST_CHECK_THROW(big.value(), std::logic_error);
  BOOST_TEST((kept[0] * 3.0).value().data()[1] == 3.0 * expected);
  BOOST_CHECK_THROW(tape.truncate_keeping(mark, {Variable<double>()}), std::logic_error);
}

BOOST_AUTO_TEST_CASE(empty_handle_throws) {
  Variable<double> nothing;
  BOOST_CHECK_THROW(nothing.value(), std::logic_error);
  BOOST_CHECK_EXCEPTION(exp(nothing), std::logic_error,
                        [](const std::logic_error& e) { return message_contains(e, "exp"); });
}

BOOST_AUTO_TEST_CASE(two_tapes_side_by_side) {
  Tape<double> first, second;
  Variable<double> a = first.leaf(Tensor<double>::scalar(2.0));
  Variable<double> b = second.leaf(Tensor<double>::scalar(5.0));
  Variable<double> ya = a * a;
  Variable<double> yb = b * b * b;
  first.backward(ya);
  second.backward(yb);
  BOOST_TEST(a.grad().item() == 4.0);
  BOOST_TEST(b.grad().item() == 75.0);
  BOOST_CHECK_EXCEPTION(a + b, std::logic_error, [](const std::logic_error& e) {
    return message_contains(e, "add") && message_contains(e, "another tape");
  });
  BOOST_CHECK_EXCEPTION(first.backward(yb), std::logic_error,
                        [](const std::logic_error& e) { return message_contains(e, "another tape"); });
}

BOOST_AUTO_TEST_CASE(backward_needs_a_scalar_or_a_seed) {
  Tape<double> tape;
  Variable<double> x = tape.leaf(Tensor<double>(Shape{2}, {1.0, 2.0}));
  Variable<double> y = x * x;
  BOOST_CHECK_EXCEPTION(tape.backward(y), std::invalid_argument,
                        [](const std::invalid_argument& e) { return message_contains(e, "(2,)"); });
  BOOST_CHECK_THROW(tape.backward(y, Tensor<double>(Shape{3})), std::invalid_argument);
  tape.backward(y, Tensor<double>(Shape{2}, {1.0, -1.0}));
  BOOST_TEST(x.grad().at({0}) == 2.0);
  BOOST_TEST(x.grad().at({1}) == -4.0);
  // a second backward recomputes node gradients from zero (they do not pile up)
  tape.backward(y, Tensor<double>(Shape{2}, {1.0, -1.0}));
  BOOST_TEST(x.grad().at({1}) == -4.0);
}

BOOST_AUTO_TEST_CASE(anomaly_detection_names_the_op) {
  Tape<double> tape;
  Variable<double> x = tape.leaf(Tensor<double>(Shape{2}, {1.0, -1.0}));
  // off (the default): NaN goes through silently, as in PyTorch
  BOOST_TEST(std::isnan(log(x).value().at({1})));
  tape.set_anomaly_detection(true);
  BOOST_CHECK_EXCEPTION(log(x), std::runtime_error, [](const std::runtime_error& e) {
    return message_contains(e, "'log'") && message_contains(e, "output") && message_contains(e, "(2,)");
  });
  // in the backward pass: sqrt(0) is fine, its derivative 1/(2·0) is not
  Variable<double> z = tape.leaf(Tensor<double>(Shape{2}, {0.0, 4.0}));
  Variable<double> s = sum(sqrt(z));
  BOOST_CHECK_EXCEPTION(tape.backward(s), std::runtime_error, [](const std::runtime_error& e) {
    return message_contains(e, "'sqrt'") && message_contains(e, "gradient for input 0");
  });
}

BOOST_AUTO_TEST_CASE(float_and_double_agree) {
  // One code path for both scalar types: the same expression in float32 and float64
  auto run = [](auto tag) {
    using T = decltype(tag);
    Tape<T> tape;
    Variable<T> x = tape.leaf(Tensor<T>(Shape{3}, {T(0.3), T(-1.2), T(2.5)}));
    Variable<T> y = sum(sigmoid(x) * tanh(x) / (x * x + T(1)));
    tape.backward(y);
    return std::make_pair(static_cast<double>(y.value().item()), static_cast<double>(x.grad().at({1})));
  };
  const auto [yf, gf] = run(float{});
  const auto [yd, gd] = run(double{});
  BOOST_TEST(yf == yd, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(gf == gd, boost::test_tools::tolerance(1e-5));
}

BOOST_AUTO_TEST_CASE(readme_usage_example) {
  // The example of README.md, quoted from here by the docs check: a whole training loop on the autograd alone —
  // forward, zero_grad, backward, update — that must compile, run and find the line.
  // [docs:readme-usage]
  // fit y = 3x + 1 by gradient descent on the mean squared error
  Parameter<float> w(Tensor<float>::scalar(0)), b(Tensor<float>::scalar(0));
  const Tensor<float> xs(Shape{4}, {-1, 0, 1, 2}), ys(Shape{4}, {-2, 1, 4, 7});
  Tape<float> tape;
  for (int step = 0; step < 200; ++step) {
    Variable<float> x = tape.constant(xs), y = tape.constant(ys);
    Variable<float> loss = mean(pow(tape.param(w) * x + tape.param(b) - y, 2.0f));
    w.zero_grad();  // backward adds into w.grad (+=): start every step from zero
    b.zero_grad();
    tape.backward(loss);                     // w.grad = ∂loss/∂w, b.grad = ∂loss/∂b
    w.value.flat() -= 0.1f * w.grad.flat();  // w ← w − η ∂loss/∂w
    b.value.flat() -= 0.1f * b.grad.flat();
    tape.clear();  // the next step records a new graph; w and b keep their values
  }
  std::cout << "w = " << w.value.item() << ", b = " << b.value.item() << "\n";  // w = 3, b = 1
  // [docs:end]
  BOOST_TEST(std::fabs(w.value.item() - 3.0f) < 1e-4f);
  BOOST_TEST(std::fabs(b.value.item() - 1.0f) < 1e-4f);
  // without zero_grad every step's gradient adds to all the earlier ones: the same loop never settles on the line
  Parameter<float> w_stale(Tensor<float>::scalar(0)), b_stale(Tensor<float>::scalar(0));
  for (int step = 0; step < 200; ++step) {
    Variable<float> x = tape.constant(xs), y = tape.constant(ys);
    tape.backward(mean(pow(tape.param(w_stale) * x + tape.param(b_stale) - y, 2.0f)));
    w_stale.value.flat() -= 0.1f * w_stale.grad.flat();
    b_stale.value.flat() -= 0.1f * b_stale.grad.flat();
    tape.clear();
  }
  BOOST_TEST(std::fabs(w_stale.value.item() - 3.0f) + std::fabs(b_stale.value.item() - 1.0f) > 0.1f);
}

BOOST_AUTO_TEST_CASE(rng_is_deterministic) {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t va = a.next();
    BOOST_TEST(va == b.next());
    BOOST_TEST(va != c.next());
  }
  Rng u(7);
  double total = 0;
  for (int i = 0; i < 20000; ++i) {
    const double v = u.uniform();
    BOOST_TEST_REQUIRE((v >= 0.0 && v < 1.0));
    total += v;
  }
  BOOST_TEST(total / 20000 == 0.5, boost::test_tools::tolerance(0.02));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(tape_memory_options)

BOOST_AUTO_TEST_CASE(without_retained_gradients_parameters_and_leaves_still_get_theirs) {
  // the same graph on two tapes, one keeping every gradient and one freeing them during backward
  Parameter<double> W(Tensor<double>(Shape{3, 2}, {0.5, -1.0, 0.25, 2.0, -0.75, 1.5}));
  auto run = [&](bool retain, Tensor<double>& leaf_grad, Tensor<double>& param_grad) {
    Tape<double> tape;
    tape.set_retain_gradients(retain);
    W.zero_grad();
    Variable<double> x = tape.leaf(Tensor<double>(Shape{2, 2}, {1.0, -2.0, 0.5, 3.0}));
    Variable<double> h = tanh(linear(x, tape.param(W)));
    tape.backward(sum(h * h));
    leaf_grad = x.grad();
    param_grad = W.grad;
    if (retain) {
      BOOST_TEST(h.grad().size() == 6u);
    } else {
      BOOST_CHECK_THROW(h.grad(), std::logic_error);
    }
  };
  Tensor<double> leaf_a, param_a, leaf_b, param_b;
  run(true, leaf_a, param_a);
  run(false, leaf_b, param_b);
  BOOST_TEST((leaf_a.flat() == leaf_b.flat()));
  BOOST_TEST((param_a.flat() == param_b.flat()));
}

// Frozen parameters: the inputs' gradients as before, the parameters reached by nothing — no gradient on the tape,
// none added — and the linear op's backward not asked for ∂/∂W.
BOOST_AUTO_TEST_CASE(frozen_parameters_are_constants_to_backward) {
  Parameter<double> W(Tensor<double>(Shape{2, 2}, {1.0, 2.0, 3.0, 4.0}));
  Tape<double> tape;
  tape.set_parameters_frozen(true);
  Variable<double> x = tape.leaf(Tensor<double>(Shape{1, 2}, {1.0, -1.0}));
  const Variable<double> W_node = tape.param(W);
  BOOST_TEST(!W_node.requires_grad());
  tape.backward(sum(linear(x, W_node) * 2.0));
  BOOST_TEST(testing::values_are(x.grad(), Shape{1, 2}, {8.0, 12.0}));  // 2 · Σ_o W[o, :]
  BOOST_TEST(tape.parameter_gradients().empty());
  BOOST_TEST(testing::values_are(W.grad, Shape{2, 2}, {0.0, 0.0, 0.0, 0.0}));
  tape.set_parameters_frozen(false);  // a parameter's node made frozen is made anew when a gradient is wanted
  const Variable<double> again = tape.param(W);
  BOOST_TEST(again.requires_grad());
  tape.backward(sum(linear(x, again)));
  BOOST_TEST(testing::values_are(W.grad, Shape{2, 2}, {1.0, -1.0, 1.0, -1.0}));
  tape.set_parameters_frozen(true);  // and one made with a gradient is made anew, frozen, once they are frozen
  const Variable<double> frozen = tape.param(W);
  BOOST_TEST(!frozen.requires_grad());
  tape.backward(sum(linear(x, frozen)));
  BOOST_TEST(testing::values_are(W.grad, Shape{2, 2}, {1.0, -1.0, 1.0, -1.0}));  // nothing added
}

BOOST_AUTO_TEST_CASE(propagate_leaves_parameter_gradients_on_the_tape_until_they_are_added) {
  Parameter<double> W(Tensor<double>(Shape{2, 2}, {1.0, 2.0, 3.0, 4.0}));
  Parameter<double> b(Tensor<double>(Shape{2}, {0.5, -0.5}));
  Parameter<double> unused(Tensor<double>(Shape{3}, {1.0, 2.0, 3.0}));
  Tape<double> tape;
  Variable<double> x = tape.constant(Tensor<double>(Shape{1, 2}, {1.0, -1.0}));
  const Variable<double> W_node = tape.param(W), b_node = tape.param(b);  // b's node comes after W's
  const Variable<double> loss = sum(linear(x, W_node, b_node) * 2.0);
  tape.param(unused);  // on the tape, but after the loss: backward does not reach it
  tape.propagate(loss, Tensor<double>(loss.value().shape(), 1.0));
  BOOST_TEST((W.grad.flat() == Tensor<double>(Shape{2, 2}).flat()));  // p.grad untouched
  BOOST_TEST((b.grad.flat() == Tensor<double>(Shape{2}).flat()));
  const auto gradients = tape.parameter_gradients();
  BOOST_TEST_REQUIRE(gradients.size() == 2u);  // the parameters reached, in the order of first use: W, then b
  BOOST_TEST(gradients[0].first == &W);
  BOOST_TEST(testing::values_are(*gradients[0].second, Shape{2, 2}, {2.0, -2.0, 2.0, -2.0}));
  BOOST_TEST(gradients[1].first == &b);
  BOOST_TEST(testing::values_are(*gradients[1].second, Shape{2}, {2.0, 2.0}));
  tape.add_parameter_gradients();
  BOOST_TEST(testing::values_are(W.grad, Shape{2, 2}, {2.0, -2.0, 2.0, -2.0}));
  BOOST_TEST(testing::values_are(b.grad, Shape{2}, {2.0, 2.0}));
  BOOST_TEST(testing::values_are(unused.grad, Shape{3}, {0.0, 0.0, 0.0}));  // not reached
  tape.backward(sum(linear(x, tape.param(W))));  // backward is propagate, then add: W's second gradient added
  BOOST_TEST(testing::values_are(W.grad, Shape{2, 2}, {3.0, -3.0, 3.0, -3.0}));
  BOOST_TEST(testing::values_are(b.grad, Shape{2}, {2.0, 2.0}));
}

BOOST_AUTO_TEST_SUITE_END()
