// Module basics (nested parameter names, counts, zero_grad, train/eval) and the basic layers: Linear, Conv2d,
// Embedding, Dropout and the loss wrappers. Gradient checks in double over every parameter and input; values against
// hand-computed cases. PyTorch reference values for Linear and Embedding are in test_recurrent.cpp's fixtures.
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "nn/layers.hpp"
#include "tests/autograd/helpers.hpp"

using namespace attend;
using namespace attend::testing;
namespace tt = boost::test_tools;

namespace {

// A module with a child and a grandchild, like encoder.cell.W: the names must nest.
template <class T>
struct Block : nn::Module<T> {
  nn::Linear<T> proj;
  nn::Dropout<T> drop;
  Parameter<T> scale;
  explicit Block(Rng& rng) : proj(3, 2, rng), drop(0.5, 7), scale(Tensor<T>(Shape{2}, T(1))) {}
  void visit(nn::ModuleVisitor<T>& v) override {
    v.parameter("scale", scale);
    v.module("proj", proj);
    v.module("drop", drop);
  }
};

template <class T>
struct Model : nn::Module<T> {
  nn::Embedding<T> embed;
  Block<T> block;
  explicit Model(Rng& rng) : embed(5, 3, rng, 0), block(rng) {}
  void visit(nn::ModuleVisitor<T>& v) override {
    v.module("embed", embed);
    v.module("block", block);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(layers)

BOOST_AUTO_TEST_CASE(parameters_have_stable_nested_names) {
  Rng rng(1);
  Model<float> model(rng);
  const auto params = model.parameters();
  std::vector<std::string> names;
  for (const auto& [name, p] : params) names.push_back(name);
  const std::vector<std::string> expected{"embed.W", "block.scale", "block.proj.W", "block.proj.b"};
  BOOST_TEST(names == expected, tt::per_element());
  BOOST_TEST(params[2].second == &model.block.proj.W);
  BOOST_TEST(model.parameter_count() == 5u * 3 + 2 + 2 * 3 + 2);
  // a copy of a module names its own parameters, not the original's
  Model<float> copy = model;
  BOOST_TEST(copy.parameters()[2].second == &copy.block.proj.W);
}

BOOST_AUTO_TEST_CASE(zero_grad_and_train_eval_reach_every_child) {
  Rng rng(2);
  Model<double> model(rng);
  for (const auto& [name, p] : model.parameters()) p->grad.flat().fill(3.0);
  model.zero_grad();
  for (const auto& [name, p] : model.parameters()) BOOST_TEST(xt::sum(xt::abs(p->grad.flat()))() == 0.0, name);
  BOOST_TEST(model.block.drop.training());
  model.eval();
  BOOST_TEST(!model.training());
  BOOST_TEST(!model.block.drop.training());
  model.train();
  BOOST_TEST(model.block.drop.training());
}

BOOST_AUTO_TEST_CASE(linear_default_init_bounds_and_xavier) {
  Rng rng(3);
  nn::Linear<float> layer(16, 8, rng);
  const double bound = 1.0 / std::sqrt(16.0);
  BOOST_TEST(layer.W.value.shape() == (Shape{8, 16}));
  BOOST_TEST(xt::amax(xt::abs(layer.W.value.flat()))() <= bound);
  BOOST_TEST(xt::amax(xt::abs(layer.b.value.flat()))() <= bound);
  BOOST_TEST(xt::amax(xt::abs(layer.W.value.flat()))() > 0.8 * bound);  // actually spread over the range
  nn::Linear<float> xavier(16, 8, rng, true, nn::Init::xavier_uniform);
  BOOST_TEST(xt::amax(xt::abs(xavier.W.value.flat()))() <= nn::xavier_bound(16, 8));
  BOOST_TEST(xt::amax(xt::abs(xavier.W.value.flat()))() > bound);  // √(6/24) = 0.5 > 0.25
  // the same seed gives the same weights
  Rng a(9), b(9);
  BOOST_TEST(nn::Linear<float>(4, 3, a).W.value.flat() == nn::Linear<float>(4, 3, b).W.value.flat(), tt::per_element());
}

BOOST_AUTO_TEST_CASE(linear_forward_and_gradients) {
  Rng rng(4);
  nn::Linear<double> layer(3, 2, rng);
  layer.W.value = Tensor<double>(Shape{2, 3}, {1, 0, -1, 2, 1, 0});
  layer.b.value = Tensor<double>(Shape{2}, {0.5, -0.5});
  Tape<double> tape;
  const auto y = layer(tape.constant(Tensor<double>(Shape{1, 3}, {1, 2, 3})));
  BOOST_TEST(values_are(y.value(), Shape{1, 2}, {-1.5, 3.5}));
  for (const bool bias : {true, false}) {
    nn::Linear<double> l(4, 3, rng, bias);
    BOOST_TEST(l.parameters().size() == (bias ? 2u : 1u));
    const GradcheckFn f = [&l](Tape<double>&, const Vars& v) { return l(v[0]); };
    for (const Shape& shape : {Shape{2, 4}, Shape{2, 3, 4}}) {
      const GradcheckResult r = nn::gradcheck_module(l, f, {random_tensor(shape, 5)});
      BOOST_TEST(r.passed, r.message);
    }
  }
}

BOOST_AUTO_TEST_CASE(linear_rejects_bad_sizes) {
  Rng rng(5);
  BOOST_CHECK_EXCEPTION(nn::Linear<float>(0, 3, rng), std::invalid_argument, message_has({"Linear", "0"}));
  nn::Linear<float> layer(3, 2, rng);
  Tape<float> tape;
  BOOST_CHECK_EXCEPTION(layer(tape.constant(Tensor<float>(Shape{2, 4}))), std::invalid_argument,
                        message_has({"linear", "(2,4)", "(2,3)"}));
}

BOOST_AUTO_TEST_CASE(conv2d_default_init_bounds_and_names) {
  Rng rng(13);
  nn::Conv2d<float> layer(3, 8, 3, rng);
  const double bound = 1.0 / std::sqrt(3.0 * 3 * 3);  // fan_in = in_channels · k · k
  BOOST_TEST(layer.W.value.shape() == (Shape{8, 3, 3, 3}));
  BOOST_TEST(layer.b.value.shape() == (Shape{8}));
  BOOST_TEST(xt::amax(xt::abs(layer.W.value.flat()))() <= bound);
  BOOST_TEST(xt::amax(xt::abs(layer.b.value.flat()))() <= bound);
  BOOST_TEST(xt::amax(xt::abs(layer.W.value.flat()))() > 0.8 * bound);  // actually spread over the range
  std::vector<std::string> names;
  for (const auto& [name, p] : layer.parameters()) names.push_back(name);
  BOOST_TEST(names == (std::vector<std::string>{"W", "b"}), tt::per_element());
  nn::Conv2d<float> no_bias(3, 8, 3, rng, Conv2dOptions{2, 1}, false);
  BOOST_TEST(no_bias.parameters().size() == 1u);
  BOOST_TEST(no_bias.parameter_count() == 8u * 3 * 3 * 3);
  BOOST_TEST(no_bias.options().stride == 2u);
  // the same seed gives the same weights
  Rng a(9), b(9);
  BOOST_TEST(nn::Conv2d<float>(2, 3, 2, a).W.value.flat() == nn::Conv2d<float>(2, 3, 2, b).W.value.flat(),
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(conv2d_forward_and_gradients) {
  Rng rng(14);
  nn::Conv2d<double> layer(1, 1, 2, rng);
  layer.W.value = Tensor<double>(Shape{1, 1, 2, 2}, {1, 0, -1, 2});
  layer.b.value = Tensor<double>(Shape{1}, {0.5});
  Tape<double> tape;
  const auto y = layer(tape.constant(Tensor<double>(Shape{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})));
  BOOST_TEST(values_are(y.value(), Shape{1, 1, 2, 2}, {7.5, 9.5, 13.5, 15.5}));
  for (const bool bias : {true, false}) {
    for (const Conv2dOptions options : {Conv2dOptions{1, 1}, Conv2dOptions{2, 0}}) {
      BOOST_TEST_CONTEXT("bias " << bias << ", stride " << options.stride << ", padding " << options.padding) {
        nn::Conv2d<double> l(2, 3, 3, rng, options, bias);
        const GradcheckFn f = [&l](Tape<double>&, const Vars& v) { return l(v[0]); };
        const GradcheckResult r = nn::gradcheck_module(l, f, {random_tensor(Shape{2, 2, 5, 6}, 15)});
        BOOST_TEST(r.passed, r.message);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(conv2d_rejects_bad_sizes) {
  Rng rng(16);
  BOOST_CHECK_EXCEPTION(nn::Conv2d<float>(0, 3, 3, rng), std::invalid_argument,
                        message_has({"Conv2d", "in_channels 0"}));
  BOOST_CHECK_EXCEPTION(nn::Conv2d<float>(1, 3, 3, rng, Conv2dOptions{0, 0}), std::invalid_argument,
                        message_has({"Conv2d", "stride 0"}));
  nn::Conv2d<float> layer(3, 2, 3, rng);
  Tape<float> tape;
  BOOST_CHECK_EXCEPTION(layer(tape.constant(Tensor<float>(Shape{1, 4, 5, 5}))), std::invalid_argument,
                        message_has({"conv2d", "(1,4,5,5)", "(2,3,3,3)"}));
}

BOOST_AUTO_TEST_CASE(embedding_padding_row_is_zero_and_never_trained) {
  Rng rng(6);
  nn::Embedding<double> embed(5, 3, rng, 2);
  BOOST_TEST(embed.W.value.at({2, 0}) == 0.0);
  BOOST_TEST(embed.W.value.at({2, 2}) == 0.0);
  Tape<double> tape;
  const auto y = embed(tape, Ids(Shape{2, 2}, {2, 4, 4, 2}));
  BOOST_TEST(y.shape() == (Shape{2, 2, 3}));
  tape.backward(sum(y));
  BOOST_TEST(values_are(embed.W.grad, Shape{5, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2}));
  // N(0, 1) initialisation: the other rows are not all zero and have a plausible spread
  nn::Embedding<double> big(100, 10, rng);
  const double mean = xt::mean(big.W.value.flat())(), var = xt::variance(big.W.value.flat())();
  BOOST_TEST(std::abs(mean) < 0.1);
  BOOST_TEST(std::abs(var - 1.0) < 0.15);
  BOOST_CHECK_EXCEPTION(nn::Embedding<float>(4, 2, rng, 4), std::invalid_argument,
                        message_has({"Embedding", "padding_id 4"}));
}

BOOST_AUTO_TEST_CASE(embedding_gradients) {
  Rng rng(7);
  nn::Embedding<double> embed(4, 3, rng);
  const Ids ids(Shape{2, 3}, {0, 3, 3, 1, 0, 2});
  const GradcheckFn f = [&embed, ids](Tape<double>& tape, const Vars&) { return tanh(embed(tape, ids)); };
  const GradcheckResult r = nn::gradcheck_module(embed, f, {});
  BOOST_TEST(r.passed, r.message);
}

BOOST_AUTO_TEST_CASE(dropout_follows_train_and_eval) {
  nn::Dropout<float> drop(0.5, 11);
  Tape<float> tape;
  const auto x = tape.constant(Tensor<float>(Shape{1000}, 1.0f));
  const auto y = drop(x);
  const float kept = xt::sum(y.value().flat())() / 2.0f;  // kept values are scaled by 2
  BOOST_TEST(kept > 400.0f);
  BOOST_TEST(kept < 600.0f);
  drop.eval();
  BOOST_TEST(drop(x).index() == x.index());  // identity: the same node
  BOOST_CHECK_THROW(nn::Dropout<float>(1.5), std::invalid_argument);
  // the same seed gives the same mask
  nn::Dropout<float> a(0.3, 5), b(0.3, 5);
  BOOST_TEST(a(x).value().flat() == b(x).value().flat(), tt::per_element());
}

BOOST_AUTO_TEST_CASE(loss_wrappers_match_the_ops) {
  Tape<double> tape;
  const auto logits = tape.leaf(random_tensor(Shape{3, 4}, 12));
  const Ids targets(Shape{3}, {1, 0, 3});
  const nn::CrossEntropyLoss ce(/*ignore_id=*/0, /*label_smoothing=*/0.1);
  BOOST_TEST(ce.ignore_id() == 0);
  BOOST_TEST(ce.label_smoothing() == 0.1);
  BOOST_TEST(ce(logits, targets).value().item() == cross_entropy(logits, targets, 0, 0.1).value().item());
  const nn::CrossEntropyLoss plain;  // torch.nn.CrossEntropyLoss()'s defaults: ignore -100, no smoothing
  BOOST_TEST(plain(logits, targets).value().item() == cross_entropy(logits, targets).value().item());
  BOOST_CHECK_EXCEPTION(nn::CrossEntropyLoss(0, 1.5), std::invalid_argument,
                        attend::testing::message_has({"CrossEntropyLoss", "label_smoothing 1.5", "[0, 1]"}));
  BOOST_CHECK_EXCEPTION(nn::CrossEntropyLoss(0, -0.1), std::invalid_argument,
                        attend::testing::message_has({"label_smoothing -0.1"}));
  const nn::NLLLoss nll(0);
  BOOST_TEST(nll(log_softmax(logits, -1), targets).value().item() == cross_entropy(logits, targets, 0).value().item(),
             tt::tolerance(1e-14));
}

BOOST_AUTO_TEST_SUITE_END()
