// Tests of the optimizers, gradient clipping and learning-rate schedules (nn/optim.hpp): PyTorch's own three steps
// replayed from the fixtures of tests/reference/make_optim_reference.py (float and double), single steps computed by
// hand, clipping fused into the step against clip_grad_norm and then step(), schedules against hand-computed
// learning-rate sequences, a state round trip that must resume bit-identically, and the error cases.
#include <algorithm>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "nn/checkpoint.hpp"
#include "nn/optim.hpp"
#include "nn/parallel.hpp"
#include "tests/autograd/helpers.hpp"
#include "tests/nn/reference.hpp"

namespace bdata = boost::unit_test::data;
using namespace attend;
using namespace attend::nn;
using attend::testing::float_types;
using attend::testing::load_reference;
using attend::testing::message_has;
using attend::testing::values_are;

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Replaying PyTorch

// The optimizer cases of make_optim_reference.py, with the same hyper-parameters (keep the two in step).
const std::vector<std::string> pytorch_cases = {"sgd_momentum",      "sgd_nesterov", "sgd_dampening", "adam",
                                                "adam_weight_decay", "adam_amsgrad", "adamw"};

template <class T>
std::unique_ptr<Optimizer<T>> make_optimizer(const std::string& name, const NamedParameters<T>& params) {
  if (name == "sgd_momentum") {
    SgdOptions o;
    o.lr = 0.1;
    o.momentum = 0.9;
    return std::make_unique<Sgd<T>>(params, o);
  }
  if (name == "sgd_nesterov") {
    SgdOptions o;
    o.lr = 0.1;
    o.momentum = 0.9;
    o.nesterov = true;
    o.weight_decay = 0.01;
    return std::make_unique<Sgd<T>>(params, o);
  }
  if (name == "sgd_dampening") {
    SgdOptions o;
    o.lr = 0.05;
    o.momentum = 0.8;
    o.dampening = 0.3;
    o.weight_decay = 0.1;
    return std::make_unique<Sgd<T>>(params, o);
  }
  if (name == "adam") {
    AdamOptions o;
    o.lr = 0.01;
    return std::make_unique<Adam<T>>(params, o);
  }
  if (name == "adam_weight_decay") {
    AdamOptions o;
    o.lr = 0.01;
    o.beta1 = 0.8;
    o.beta2 = 0.99;
    o.eps = 1e-3;  // large enough that its placement shows at 1e-5
    o.weight_decay = 0.1;
    return std::make_unique<Adam<T>>(params, o);
  }
  if (name == "adam_amsgrad") {
    AdamOptions o;
    o.lr = 0.01;
    o.beta2 = 0.9;
    o.amsgrad = true;
    return std::make_unique<Adam<T>>(params, o);
  }
  if (name == "adamw") {
    AdamWOptions o;
    o.lr = 0.01;
    o.weight_decay = 0.1;
    return std::make_unique<AdamW<T>>(params, o);
  }
  throw std::invalid_argument("make_optimizer: unknown case " + name);
}

// Step k (0-based) of a fixture stacked over steps, (steps, ...), as a tensor of `shape`.
template <class T>
Tensor<T> step_slice(const Tensor<T>& stacked, std::size_t k, const Shape& shape) {
  Tensor<T> out(shape);
  std::copy_n(stacked.data() + k * shape.size(), shape.size(), out.data());
  return out;
}

// Element by element |actual − expected| ≤ rtol · |expected| (strictly relative: the fixtures hold no value that
// comes from a cancellation, see make_optim_reference.py); on failure names the worst element.
template <class T>
boost::test_tools::predicate_result close_to(const Tensor<T>& actual, const Tensor<T>& expected, double rtol) {
  boost::test_tools::predicate_result result(true);
  if (actual.shape() != expected.shape()) {
    result = false;
    result.message() << "shape " << to_string(actual.shape()) << ", expected " << to_string(expected.shape());
    return result;
  }
  double worst = 0.0;
  std::size_t worst_index = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = static_cast<double>(actual.data()[i]), e = static_cast<double>(expected.data()[i]);
    if (a == e) continue;                                          // includes 0 == 0
    const double excess = std::abs(a - e) / (rtol * std::abs(e));  // > 1: out of tolerance (NaN counts as a failure)
    if (!(excess <= 1.0)) {
      if (!(excess <= worst)) {
        worst = std::isnan(excess) ? std::numeric_limits<double>::infinity() : excess;
        worst_index = i;
      }
      result = false;
    }
  }
  if (!result) {
    result.message() << "flat element " << worst_index << ": got " << static_cast<double>(actual.data()[worst_index])
                     << ", expected " << static_cast<double>(expected.data()[worst_index]) << " (relative tolerance "
                     << rtol << ")";
  }
  return result;
}

// Element by element bit-identical.
template <class T>
boost::test_tools::predicate_result identical(const Tensor<T>& a, const Tensor<T>& b) {
  boost::test_tools::predicate_result result(a.shape() == b.shape() &&
                                             std::equal(a.data(), a.data() + a.size(), b.data()));
  if (!result) result.message() << "tensors differ";
  return result;
}

// Sets both gradients to those PyTorch used at step k, steps the optimizer, and compares both parameters with
// PyTorch's after that step; after the third step compares the optimizer's state with PyTorch's.
template <class T>
void replay_pytorch(const std::string& case_name) {
  const std::string folder = "optim_" + case_name;
  Parameter<T> w(load_reference<T>(folder, "init_w"));  // (3, 4)
  Parameter<T> b(load_reference<T>(folder, "init_b"));  // (4,)
  const NamedParameters<T> params{{"w", &w}, {"b", &b}};
  const auto optimizer = make_optimizer<T>(case_name, params);
  const Tensor<T> grad_w = load_reference<T>(folder, "grad_w"), grad_b = load_reference<T>(folder, "grad_b");
  const Tensor<T> expected_w = load_reference<T>(folder, "w"), expected_b = load_reference<T>(folder, "b");
  const double rtol = 1e-5;
  for (std::size_t k = 0; k < 3; ++k) {
    w.grad = step_slice(grad_w, k, w.value.shape());
    b.grad = step_slice(grad_b, k, b.value.shape());
    optimizer->step();
    BOOST_TEST(close_to(w.value, step_slice(expected_w, k, w.value.shape()), rtol), "w after step " << k + 1);
    BOOST_TEST(close_to(b.value, step_slice(expected_b, k, b.value.shape()), rtol), "b after step " << k + 1);
  }
  BOOST_TEST(optimizer->step_count() == 3);

  // The state: "optimizer.<kind>.<quantity>.<w|b>" ↔ PyTorch's state[p][quantity], saved as state_<quantity>_<w|b>.
  std::set<std::string> ours, theirs;
  for (const auto& [name, tensor] : optimizer->state()) {
    const std::size_t kind_end = name.find('.', std::string("optimizer.").size());
    const std::string rest = name.substr(kind_end + 1);  // "<quantity>.<param>" or "step"
    if (rest == "step") {
      BOOST_TEST(tensor->data()[0] == T(3));
      continue;
    }
    const std::size_t dot = rest.rfind('.');
    const std::string file = "state_" + rest.substr(0, dot) + "_" + rest.substr(dot + 1);
    ours.insert(file);
    if (!std::filesystem::exists(attend::testing::reference_path(folder, file))) continue;
    BOOST_TEST(close_to(*tensor, load_reference<T>(folder, file), rtol), name);
  }
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(ATTEND_SOURCE_DIR) + "/tests/reference/data/" + folder)) {
    const std::string stem = entry.path().stem().string();
    if (stem.rfind("state_", 0) == 0) theirs.insert(stem);
  }
  BOOST_TEST(ours == theirs, "the optimizer keeps the same state tensors as PyTorch");
}

// ---------------------------------------------------------------------------------------------------------------
// Small models for hand-computed steps and round trips

template <class T>
Tensor<T> vector_of(std::initializer_list<T> values) {
  return Tensor<T>(Shape{values.size()}, values);
}

// A gradient that depends on the parameter, so that two runs only agree if their parameters do:
// g = w³ − w/2 + 0.1 (elementwise), times `scale`.
template <class T>
void set_test_gradient(Parameter<T>& p, double scale) {
  const auto& w = p.value.flat();
  p.grad.flat() = static_cast<T>(scale) * (w * w * w - T(0.5) * w + T(0.1));
}

// Two parameters, (3, 4) and (5,), with seeded values in [-2, 2).
template <class T>
struct TwoParameters {
  Parameter<T> W, v;
  explicit TwoParameters(std::uint64_t seed) {
    Rng rng(seed);
    W = Parameter<T>(rng.uniform_tensor<T>({3, 4}, -2.0, 2.0));
    v = Parameter<T>(rng.uniform_tensor<T>({5}, -2.0, 2.0));
  }
  NamedParameters<T> parameters() { return {{"W", &W}, {"v", &v}}; }
};

template <class T>
void step_with_test_gradients(TwoParameters<T>& model, Optimizer<T>& optimizer, double scale) {
  set_test_gradient(model.W, scale);
  set_test_gradient(model.v, scale);
  optimizer.step();
}

// lr after each of `metrics`, from lr = 1
std::vector<double> plateau_lrs(const ReduceLROnPlateauOptions& options, const std::vector<double>& metrics) {
  Parameter<double> w(vector_of<double>({0.0}));
  SgdOptions o;
  o.lr = 1.0;
  Sgd<double> sgd({{"w", &w}}, o);
  ReduceLROnPlateau schedule(sgd, options);
  std::vector<double> lrs;
  for (const double metric : metrics) {
    schedule.step(metric);
    lrs.push_back(sgd.lr);
  }
  return lrs;
}

// Three steps, the parameters and the optimizer state copied into a fresh model and optimizer, two more steps in
// both: bit-identical parameters and state.
template <class T>
void check_resume(const std::function<std::unique_ptr<Optimizer<T>>(const NamedParameters<T>&)>& make) {
  TwoParameters<T> model(7);
  const auto optimizer = make(model.parameters());
  const std::vector<double> scales = {1.0, 0.3, 2.0, 0.05, 1.5};
  for (std::size_t k = 0; k < 3; ++k) step_with_test_gradients(model, *optimizer, scales[k]);

  TwoParameters<T> restored(99);  // other initial values: everything must come from the copy
  restored.W.value = model.W.value;
  restored.v.value = model.v.value;
  const auto resumed = make(restored.parameters());
  const auto saved = optimizer->state();
  const auto slots = resumed->state_slots();
  BOOST_TEST_REQUIRE(saved.size() == slots.size());
  for (std::size_t i = 0; i < saved.size(); ++i) {
    BOOST_TEST_REQUIRE(saved[i].first == slots[i].first);
    *slots[i].second = *saved[i].second;
  }
  BOOST_TEST(resumed->step_count() == 3);

  // without the state, the same parameters go elsewhere (so the comparison below means something)
  TwoParameters<T> fresh(99);
  fresh.W.value = model.W.value;
  fresh.v.value = model.v.value;
  const auto restarted = make(fresh.parameters());

  for (std::size_t k = 3; k < 5; ++k) {
    step_with_test_gradients(model, *optimizer, scales[k]);
    step_with_test_gradients(restored, *resumed, scales[k]);
    step_with_test_gradients(fresh, *restarted, scales[k]);
  }
  BOOST_TEST(identical(model.W.value, restored.W.value));
  BOOST_TEST(identical(model.v.value, restored.v.value));
  BOOST_TEST(!identical(model.W.value, fresh.W.value));
  const auto end_a = optimizer->state(), end_b = resumed->state();
  for (std::size_t i = 0; i < end_a.size(); ++i) {
    BOOST_TEST(identical(*end_a[i].second, *end_b[i].second), end_a[i].first);
  }
  BOOST_TEST(resumed->step_count() == 5);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(optim)

// ---------------------------------------------------------------------------------------------------------------
// PyTorch references

BOOST_DATA_TEST_CASE(pytorch_three_steps_float, bdata::make(pytorch_cases), case_name) {
  replay_pytorch<float>(case_name);
}

// The same gradients in double: PyTorch's float32 results differ from exact arithmetic by a few float ulps only.
BOOST_DATA_TEST_CASE(pytorch_three_steps_double, bdata::make(pytorch_cases), case_name) {
  replay_pytorch<double>(case_name);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(pytorch_clip_grad_norm, T, float_types) {
  Parameter<T> w(Tensor<T>(Shape{3, 4})), b(Tensor<T>(Shape{4}));
  w.grad = load_reference<T>("optim_clip", "grad_w");
  b.grad = load_reference<T>("optim_clip", "grad_b");
  const T norm = clip_grad_norm<T>({{"w", &w}, {"b", &b}}, 2.5);
  BOOST_TEST(close_to(Tensor<T>(Shape{1}, {norm}), load_reference<T>("optim_clip", "norm"), 1e-6));
  BOOST_TEST(close_to(w.grad, load_reference<T>("optim_clip", "clipped_w"), 1e-5));
  BOOST_TEST(close_to(b.grad, load_reference<T>("optim_clip", "clipped_b"), 1e-5));
}

// ---------------------------------------------------------------------------------------------------------------
// Hand-computed steps

BOOST_AUTO_TEST_CASE_TEMPLATE(sgd_plain_step, T, float_types) {
  // w ← w − η g with η = 0.1
  Parameter<T> w(vector_of<T>({1, -2, 0.5}));
  w.grad = vector_of<T>({0.5, 0.25, -4});
  SgdOptions o;
  o.lr = 0.1;
  Sgd<T> sgd({{"w", &w}}, o);
  sgd.step();
  BOOST_TEST(values_are(w.value, Shape{3}, {0.95, -2.025, 0.9}, 1e-6));
  BOOST_TEST(sgd.state().size() == 1u);  // only the step count: no momentum buffer without momentum
  sgd.zero_grad();
  BOOST_TEST(values_are(w.grad, Shape{3}, {0, 0, 0}));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(sgd_momentum_first_and_second_step, T, float_types) {
  // η = 0.1, μ = 0.9. Step 1: b = g1 (not (1 − τ) g1, not μ·0 + g1 by accident), w -= η b.
  // Step 2: b = μ b + g2 = 0.9 (1, 2) + (0.5, −1) = (1.4, 0.8); w = (0.9, −1.2) − 0.1 (1.4, 0.8) = (0.76, −1.28).
  Parameter<T> w(vector_of<T>({1, -1}));
  SgdOptions o;
  o.lr = 0.1;
  o.momentum = 0.9;
  Sgd<T> sgd({{"w", &w}}, o);
  w.grad = vector_of<T>({1, 2});
  sgd.step();
  BOOST_TEST(values_are(w.value, Shape{2}, {0.9, -1.2}, 1e-6));
  w.grad = vector_of<T>({0.5, -1});
  sgd.step();
  BOOST_TEST(values_are(w.value, Shape{2}, {0.76, -1.28}, 1e-6));
  const auto state = sgd.state();
  BOOST_TEST_REQUIRE(state.size() == 2u);
  BOOST_TEST(state[1].first == "optimizer.sgd.momentum_buffer.w");
  BOOST_TEST(values_are(*state[1].second, Shape{2}, {1.4, 0.8}, 1e-6));
}

BOOST_AUTO_TEST_CASE(sgd_dampening_does_not_apply_to_the_first_step) {
  // PyTorch starts the buffer at the undampened gradient: b = g at t = 1, then b = μ b + (1 − τ) g.
  Parameter<double> w(vector_of<double>({0.0}));
  SgdOptions o;
  o.lr = 1.0;
  o.momentum = 0.5;
  o.dampening = 0.75;
  Sgd<double> sgd({{"w", &w}}, o);
  w.grad = vector_of<double>({2.0});
  sgd.step();  // b = 2, w = −2
  BOOST_TEST(values_are(w.value, Shape{1}, {-2.0}));
  sgd.step();  // b = 0.5 · 2 + 0.25 · 2 = 1.5, w = −3.5
  BOOST_TEST(values_are(w.value, Shape{1}, {-3.5}));
}

BOOST_AUTO_TEST_CASE(sgd_nesterov_first_step) {
  // t = 1: b = g, d = g + μ b = 1.9 g, w -= η d
  Parameter<double> w(vector_of<double>({1.0, 0.0}));
  w.grad = vector_of<double>({1.0, -2.0});
  SgdOptions o;
  o.lr = 0.1;
  o.momentum = 0.9;
  o.nesterov = true;
  Sgd<double> sgd({{"w", &w}}, o);
  sgd.step();
  BOOST_TEST(values_are(w.value, Shape{2}, {1.0 - 0.19, 0.38}, 1e-15));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(adam_first_step_moves_each_weight_by_about_lr, T, float_types) {
  // t = 1: m̂ = g and v̂ = g², so Δw = −η g / (|g| + ε) ≈ −η sign(g) whatever the gradient's size; 0 for g = 0.
  Parameter<T> w(vector_of<T>({1, 1, 1, 1, 1}));
  w.grad = vector_of<T>({1e-3, -5, 100, 0.2, 0});
  AdamOptions o;
  o.lr = 0.01;
  Adam<T> adam({{"w", &w}}, o);
  adam.step();
  BOOST_TEST(values_are(w.value, Shape{5}, {0.99, 1.01, 0.99, 0.99, 1.0}, 1e-6));
}

BOOST_AUTO_TEST_CASE(adam_eps_is_added_to_the_bias_corrected_root) {
  // η = 1, β = (0.9, 0.999), ε = 0.1, g = 0.2, t = 1: m = 0.02, v = 4e-5, √v / √(1 − β₂) = 0.2,
  // Δw = −(1 / 0.1) · 0.02 / (0.2 + 0.1) = −2/3. (TensorFlow's ε̂ form would give −0.0595.)
  Parameter<double> w(vector_of<double>({0.0}));
  w.grad = vector_of<double>({0.2});
  AdamOptions o;
  o.lr = 1.0;
  o.eps = 0.1;
  Adam<double> adam({{"w", &w}}, o);
  adam.step();
  BOOST_TEST(values_are(w.value, Shape{1}, {-2.0 / 3.0}, 1e-12));
}

BOOST_AUTO_TEST_CASE(adamw_decays_the_weights_and_adam_adds_the_decay_to_the_gradient) {
  // Zero gradient, η = 0.1, λ = 0.5, w = (4, −0.5).
  // AdamW: w ← w (1 − ηλ) = 0.95 w, then the Adam step of g = 0 is 0.
  // Adam: g = λ w, so the first step moves w by η against sign(w).
  AdamWOptions decoupled;
  decoupled.lr = 0.1;
  decoupled.weight_decay = 0.5;
  Parameter<double> a(vector_of<double>({4.0, -0.5}));
  AdamW<double> adamw({{"w", &a}}, decoupled);
  adamw.step();
  BOOST_TEST(values_are(a.value, Shape{2}, {3.8, -0.475}, 1e-15));

  AdamOptions l2;
  l2.lr = 0.1;
  l2.weight_decay = 0.5;
  Parameter<double> b(vector_of<double>({4.0, -0.5}));
  Adam<double> adam({{"w", &b}}, l2);
  adam.step();
  BOOST_TEST(values_are(b.value, Shape{2}, {3.9, -0.4}, 1e-7));

  BOOST_TEST(AdamWOptions{}.weight_decay == 1e-2);  // PyTorch's AdamW default; Adam's is 0
  BOOST_TEST(AdamOptions{}.weight_decay == 0.0);
}

BOOST_AUTO_TEST_CASE(adam_amsgrad_keeps_the_largest_second_moment) {
  // β₂ = 0.5: v₁ = 0.5 · 4 = 2, then g = 0 gives v₂ = 1 while v̂₂ = max(2, 1) = 2.
  Parameter<double> w(vector_of<double>({0.0}));
  AdamOptions o;
  o.lr = 1.0;
  o.beta1 = 0.0;  // m = g: the second step (g = 0) moves nothing, only the moments are compared
  o.beta2 = 0.5;
  o.amsgrad = true;
  Adam<double> adam({{"w", &w}}, o);
  w.grad = vector_of<double>({2.0});
  adam.step();
  w.grad = vector_of<double>({0.0});
  adam.step();
  const auto state = adam.state();  // step, exp_avg.w, exp_avg_sq.w, max_exp_avg_sq.w
  BOOST_TEST_REQUIRE(state.size() == 4u);
  BOOST_TEST(state[2].first == "optimizer.adam.exp_avg_sq.w");
  BOOST_TEST(values_are(*state[2].second, Shape{1}, {1.0}));
  BOOST_TEST(state[3].first == "optimizer.adam.max_exp_avg_sq.w");
  BOOST_TEST(values_are(*state[3].second, Shape{1}, {2.0}));
}

// ---------------------------------------------------------------------------------------------------------------
// Gradient clipping

BOOST_AUTO_TEST_CASE_TEMPLATE(clip_grad_norm_returns_the_norm_before_clipping, T, float_types) {
  // grads (3, 4) and (12,): global norm √(9 + 16 + 144) = 13; max_norm 6.5 halves them (up to the 1e-6)
  Parameter<T> a(Tensor<T>(Shape{2})), b(Tensor<T>(Shape{1}));
  a.grad = vector_of<T>({3, 4});
  b.grad = vector_of<T>({12});
  const NamedParameters<T> params{{"a", &a}, {"b", &b}};
  const T norm = clip_grad_norm(params, 6.5);
  BOOST_TEST(norm == T(13));
  BOOST_TEST(values_are(a.grad, Shape{2}, {1.5, 2.0}, 1e-6));
  BOOST_TEST(values_are(b.grad, Shape{1}, {6.0}, 1e-6));
  // now the norm is 6.5 − 1e-6·…: under a limit of 10 nothing changes, bit for bit
  const Tensor<T> before_a = a.grad, before_b = b.grad;
  BOOST_TEST(std::abs(static_cast<double>(clip_grad_norm(params, 10.0)) - 6.5) < 1e-5);
  BOOST_TEST(identical(a.grad, before_a));
  BOOST_TEST(identical(b.grad, before_b));
}

BOOST_AUTO_TEST_CASE(clip_grad_norm_accumulates_float_in_double) {
  // 3e20² overflows float; the norm 5e20 does not
  Parameter<float> a(Tensor<float>(Shape{2}));
  a.grad = vector_of<float>({3e20f, -4e20f});
  const float norm = clip_grad_norm<float>({{"a", &a}}, 1.0);
  BOOST_TEST(norm == 5e20f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(values_are(a.grad, Shape{2}, {0.6, -0.8}, 1e-6));
}

BOOST_AUTO_TEST_CASE(clip_grad_norm_leaves_non_finite_gradients_alone) {
  Parameter<double> a(Tensor<double>(Shape{3})), b(Tensor<double>(Shape{1}));
  a.grad = vector_of<double>({1.0, std::numeric_limits<double>::infinity(), 2.0});
  b.grad = vector_of<double>({5.0});
  const NamedParameters<double> params{{"a", &a}, {"b", &b}};
  BOOST_TEST(std::isinf(clip_grad_norm(params, 1.0)));
  BOOST_TEST(b.grad.data()[0] == 5.0);
  BOOST_TEST(a.grad.data()[2] == 2.0);
  a.grad.data()[1] = std::numeric_limits<double>::quiet_NaN();
  BOOST_TEST(std::isnan(clip_grad_norm(params, 1.0)));
  BOOST_TEST(b.grad.data()[0] == 5.0);
  BOOST_TEST(a.grad.data()[0] == 1.0);
}

// Σ g² in the order optim.hpp documents, spelled out: each parameter in chunks of 2¹⁶ elements, a chunk's squares in
// eight partial sums (element 8j + l into sum l), those in order, then the chunk's last n mod 8; the chunks' sums in
// the order of the list.
template <class T>
double squares_in_documented_order(const NamedParameters<T>& parameters) {
  double total = 0;
  for (const auto& named : parameters) {
    const Tensor<T>& g = named.second->grad;
    for (std::size_t at = 0; at < g.size(); at += 65536) {
      const std::size_t n = std::min<std::size_t>(65536, g.size() - at), whole = n / 8 * 8;
      double partial[8] = {}, chunk = 0;
      for (std::size_t k = 0; k < whole; ++k) partial[k % 8] += double(g.data()[at + k]) * double(g.data()[at + k]);
      for (const double p : partial) chunk += p;
      for (std::size_t k = whole; k < n; ++k) chunk += double(g.data()[at + k]) * double(g.data()[at + k]);
      total += chunk;
    }
  }
  return total;
}

// clip_grad_norm in parts (gradient_squares, clip_factor, StepExtras::gradient_factor), as a training loop fuses it:
// every optimizer of the PyTorch cases and plain SGD, three steps over parameters cut into several chunks (70,001 and
// 7 × 10,000 elements), the gradient clipped on some steps and not on others, gives the bits of clip_grad_norm and
// then step(), and leaves p.grad as it was; gradient_squares adds in the documented order on any executor. `updated`
// is called once for every element, after its update — from three threads at once on BatchParallel's executor.
BOOST_AUTO_TEST_CASE_TEMPLATE(clipping_inside_the_step_equals_clip_grad_norm_then_step, T, float_types) {
  BatchParallel<T> threads(3);
  std::vector<std::string> cases = pytorch_cases;
  cases.push_back("sgd_plain");
  for (const std::string& name : cases) {
    std::vector<Parameter<T>> apart, fused;
    for (auto* set : {&apart, &fused}) {
      Rng rng(3);
      set->emplace_back(rng.uniform_tensor<T>(Shape{70001}, -1.0, 1.0));
      set->emplace_back(rng.uniform_tensor<T>(Shape{7, 10000}, -1.0, 1.0));
      set->emplace_back(rng.uniform_tensor<T>(Shape{3}, -1.0, 1.0));
    }
    const auto named = [](std::vector<Parameter<T>>& set) {
      return NamedParameters<T>{{"a", &set[0]}, {"b", &set[1]}, {"c", &set[2]}};
    };
    const auto make = [&](const NamedParameters<T>& params) -> std::unique_ptr<Optimizer<T>> {
      if (name == "sgd_plain") return std::make_unique<Sgd<T>>(params, SgdOptions{0.1, 0.0, 0.0, 0.0, false});
      return make_optimizer<T>(name, params);
    };
    const std::unique_ptr<Optimizer<T>> one = make(named(apart)), other = make(named(fused));
    for (int step = 0; step < 3; ++step) {
      Rng grads(10 + step);
      for (std::size_t i = 0; i < apart.size(); ++i) {
        apart[i].grad = grads.uniform_tensor<T>(apart[i].value.shape(), -3.0, 3.0);
        fused[i].grad = apart[i].grad;
      }
      const double max_norm = step == 1 ? 1e4 : 50.0;  // the norm is about 650: step 1 is not clipped
      const double squares = gradient_squares(named(fused), step == 2 ? threads.executor() : Executor{});
      BOOST_TEST(squares == squares_in_documented_order(named(fused)), name << " step " << step);
      const T norm = clip_grad_norm(named(apart), max_norm);
      BOOST_TEST(static_cast<T>(std::sqrt(squares)) == norm, name << " step " << step);
      StepExtras extras;
      extras.gradient_factor = clip_factor<T>(std::sqrt(squares), max_norm);
      BOOST_TEST((extras.gradient_factor == 1.0) == (step == 1), name << " step " << step);
      std::vector<std::vector<int>> calls;  // per element of each parameter
      for (const Parameter<T>& p : fused) calls.emplace_back(p.value.size(), 0);
      std::vector<Tensor<T>> seen;  // the values `updated` saw
      for (const Parameter<T>& p : fused) seen.push_back(p.value);
      std::mutex mutex;
      extras.updated = [&](std::size_t i, std::size_t begin, std::size_t end) {
        const std::lock_guard lock(mutex);
        for (std::size_t e = begin; e < end; ++e) ++calls[i][e], seen[i].data()[e] = fused[i].value.data()[e];
      };
      one->step();
      other->step(step == 0 ? Executor{} : threads.executor(), extras);
      for (std::size_t i = 0; i < apart.size(); ++i) {
        BOOST_TEST(identical(apart[i].value, fused[i].value), name << " step " << step << " parameter " << i);
        BOOST_TEST(identical(seen[i], fused[i].value), name << " step " << step << " parameter " << i);
        BOOST_TEST((std::count(calls[i].begin(), calls[i].end(), 1) == std::ptrdiff_t(calls[i].size())));
        // p.grad is left as it was: the unclipped gradient, where clip_grad_norm scaled apart's
        BOOST_TEST(!identical(fused[i].grad, apart[i].grad) == (step != 1), name << " step " << step);
      }
    }
    for (const double bad : {-0.5, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
      StepExtras extras;
      extras.gradient_factor = bad;
      BOOST_CHECK_EXCEPTION(other->step({}, extras), std::invalid_argument, message_has({"invalid gradient factor"}));
    }
  }
}

BOOST_AUTO_TEST_CASE(clip_factor_is_clip_grad_norms) {
  BOOST_TEST(clip_factor<float>(13.0, 6.5) == static_cast<float>(6.5 / (13.0 + 1e-6)));
  BOOST_TEST(clip_factor<double>(13.0, 6.5) == 6.5 / (13.0 + 1e-6));
  BOOST_TEST(clip_factor<double>(6.5, 6.5) < 1.0);  // 6.5 / (6.5 + 1e-6): clipped by a hair
  BOOST_TEST(clip_factor<double>(6.4, 6.5) == 1.0);
  BOOST_TEST(clip_factor<double>(0.0, 0.0) == 0.0);
  BOOST_TEST(clip_factor<float>(std::numeric_limits<double>::infinity(), 1.0) == 1.0f);
  BOOST_TEST(clip_factor<float>(std::numeric_limits<double>::quiet_NaN(), 1.0) == 1.0f);
  BOOST_CHECK_EXCEPTION(clip_factor<float>(13.0, -1.0), std::invalid_argument,
                        message_has({"clip_factor", "max_norm -1", ">= 0"}));
}

// ---------------------------------------------------------------------------------------------------------------
// Schedules (sequences checked against PyTorch 1.13 by hand)

BOOST_AUTO_TEST_CASE(step_lr_decays_every_step_size_epochs) {
  Parameter<double> w(vector_of<double>({0.0}));
  SgdOptions o;
  o.lr = 1.0;
  Sgd<double> sgd({{"w", &w}}, o);
  StepLR schedule(sgd, 2, 0.5);
  std::vector<double> lrs;
  for (int epoch = 1; epoch <= 7; ++epoch) {
    schedule.step();
    lrs.push_back(sgd.lr);
  }
  const std::vector<double> expected = {1.0, 0.5, 0.5, 0.25, 0.25, 0.125, 0.125};
  BOOST_TEST(lrs == expected, boost::test_tools::per_element());

  // γ = 0.1 every 3 epochs from 0.1: PyTorch's chainable form multiplies the current lr, giving 0.1 · 0.1 in
  // double (0.010000000000000002), not 0.1 · 0.1^1 computed another way
  o.lr = 0.1;
  Sgd<double> second({{"w", &w}}, o);
  StepLR decay(second, 3, 0.1);
  for (int epoch = 1; epoch <= 3; ++epoch) decay.step();
  BOOST_TEST(second.lr == 0.1 * 0.1);
  BOOST_TEST(decay.state().epoch == 3);
}

// PyTorch's MultiStepLR(milestones=[5, 3], gamma=0.5) from lr 1: η = 1 · 0.5^k after s steps, k the milestones ≤ s —
// 1, 1, 0.5, 0.5, 0.25, 0.25, 0.25 — whatever order the milestones come in; a milestone given twice drops twice.
BOOST_AUTO_TEST_CASE(multi_step_lr_drops_at_its_milestones_and_resumes) {
  Parameter<double> w(vector_of<double>({0.0}));
  SgdOptions o;
  o.lr = 1.0;
  Sgd<double> sgd({{"w", &w}}, o);
  MultiStepLR schedule(sgd, {5, 3}, 0.5);
  BOOST_TEST(sgd.lr == 1.0);
  std::vector<double> lrs;
  for (int s = 1; s <= 7; ++s) {
    schedule.step();
    lrs.push_back(sgd.lr);
  }
  const std::vector<double> expected = {1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.25};
  BOOST_TEST(lrs == expected, boost::test_tools::per_element());
  BOOST_TEST(schedule.state().epoch == 7);

  // resumed from its state (the optimizer's lr as a fresh run has it): the same η from there on
  o.lr = 1.0;
  Sgd<double> other({{"w", &w}}, o);
  MultiStepLR resumed(other, {3, 5}, 0.5);
  resumed.load_state(MultiStepLR::State{4});
  BOOST_TEST(other.lr == 0.5);
  resumed.step();
  BOOST_TEST(other.lr == 0.25);

  // a milestone given twice drops twice at once: [2, 2] with γ = 0.1 gives 0.1 ** 2 = 0.010000000000000002; and
  // milestone 0 drops before the first step, as PyTorch's (its constructor's step() reaches epoch 0)
  o.lr = 1.0;
  Sgd<double> twice({{"w", &w}}, o);
  MultiStepLR repeated(twice, {2, 2}, 0.1);
  repeated.step();
  BOOST_TEST(twice.lr == 1.0);
  repeated.step();
  BOOST_TEST(twice.lr == std::pow(0.1, 2.0));
  o.lr = 1.0;
  Sgd<double> at_once({{"w", &w}}, o);
  MultiStepLR from_the_start(at_once, {0}, 0.5);
  BOOST_TEST(at_once.lr == 0.5);
}

// η(s) = d^−0.5 · min(s^−0.5, s · w^−1.5) · factor: linear warm-up to the peak (d·w)^−0.5 · factor at s = w, then
// 1/√s. d = 64, w = 4, factor 2: η(1) = 2/8 · 1/8 = 1/32, η(2) = 1/16, η(4) = 1/8 (peak), η(16) = 2/8 · 1/4 = 1/16.
BOOST_AUTO_TEST_CASE(noam_lr_warms_up_then_decays_and_resumes) {
  Parameter<double> w(vector_of<double>({0.0}));
  Sgd<double> sgd({{"w", &w}}, SgdOptions{});
  NoamLR schedule(sgd, 64, 4, 2.0);
  std::vector<double> lrs{sgd.lr};
  for (int s = 2; s <= 16; ++s) {
    schedule.step();
    lrs.push_back(sgd.lr);
  }
  BOOST_TEST(lrs[0] == 1.0 / 32);
  BOOST_TEST(lrs[1] == 1.0 / 16);
  BOOST_TEST(lrs[3] == 1.0 / 8);
  BOOST_TEST(lrs[15] == 1.0 / 16);
  BOOST_TEST(static_cast<long>(std::max_element(lrs.begin(), lrs.end()) - lrs.begin()) == 3L);  // peak at s = w
  for (std::size_t i = 4; i < lrs.size(); ++i) BOOST_TEST(lrs[i] < lrs[i - 1]);
  BOOST_TEST(schedule.state().step == 16);
  // resumed from its state on another optimizer: the same η from there on
  Sgd<double> other({{"w", &w}}, SgdOptions{});
  NoamLR resumed(other, 64, 4, 2.0);
  resumed.load_state(schedule.state());
  BOOST_TEST(other.lr == sgd.lr);
  schedule.step();
  resumed.step();
  BOOST_TEST(other.lr == sgd.lr);
  BOOST_TEST(resumed.lr_at(100) == 2.0 / 8 / 10);
}

BOOST_AUTO_TEST_CASE(reduce_lr_on_plateau_patience_and_cooldown) {
  // min mode, patience 2, cooldown 1, factor 0.5. Epoch 1–2 improve; 3, 4 bad; 5 is the third bad epoch (> 2):
  // halve, cooldown 1. Epoch 6 is bad but in cooldown (does not count); 7, 8 bad; 9 halves again, cooldown.
  // Epoch 10 (cooldown), 11 improves (8 < 9 · (1 − 1e-4)); 12, 13 bad; 14 halves.
  ReduceLROnPlateauOptions options;
  options.factor = 0.5;
  options.patience = 2;
  options.cooldown = 1;
  const std::vector<double> lrs = plateau_lrs(options, {10, 9, 9, 9, 9, 9, 9, 9, 9, 9, 8, 8, 8, 8});
  const std::vector<double> expected = {1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.25, 0.125};
  BOOST_TEST(lrs == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(reduce_lr_on_plateau_max_mode_abs_threshold_and_min_lr) {
  // max mode, an improvement must exceed best + 0.1; patience 0 (every bad epoch reduces); min_lr 0.3.
  // 1.05 is not > 1 + 0.1: halve to 0.5. 1.2 improves. Next bad epoch: max(0.25, 0.3) = 0.3. Then max(0.15, 0.3) = 0.3
  // lowers nothing.
  ReduceLROnPlateauOptions options;
  options.mode = PlateauMode::max;
  options.threshold_mode = ThresholdMode::abs;
  options.threshold = 0.1;
  options.factor = 0.5;
  options.patience = 0;
  options.min_lr = 0.3;
  const std::vector<double> lrs = plateau_lrs(options, {1, 1.05, 1.2, 1.2, 1.2, 1.2, 1.2});
  const std::vector<double> expected = {1, 0.5, 0.5, 0.3, 0.3, 0.3, 0.3};
  BOOST_TEST(lrs == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(reduce_lr_on_plateau_eps_and_pytorch_quirks) {
  // A reduction smaller than eps is skipped: 1 → 0.1 lowers by 0.9 < eps = 0.95.
  ReduceLROnPlateauOptions skip;
  skip.patience = 0;
  skip.eps = 0.95;
  BOOST_TEST(plateau_lrs(skip, {5, 5, 5, 5}) == std::vector<double>({1, 1, 1, 1}), boost::test_tools::per_element());
  // min/rel with negative metrics: best · (1 − threshold) is above best, so an equal metric counts as an improvement
  // (PyTorch's formula, kept as it is).
  ReduceLROnPlateauOptions negative;
  negative.patience = 0;
  negative.factor = 0.5;
  BOOST_TEST(plateau_lrs(negative, {-10, -10, -10}) == std::vector<double>({1, 1, 1}),
             boost::test_tools::per_element());
  // A NaN metric is a bad epoch.
  BOOST_TEST(plateau_lrs(negative, {1, std::nan("")}) == std::vector<double>({1, 0.5}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(schedule_state_round_trip) {
  // Stop a plateau schedule in the middle of a cooldown, restore its state (and lr) elsewhere: same lrs after.
  ReduceLROnPlateauOptions options;
  options.factor = 0.5;
  options.patience = 1;
  options.cooldown = 2;
  const std::vector<double> metrics = {3, 3, 3, 3, 2, 2, 2, 2, 2};
  Parameter<double> w(vector_of<double>({0.0}));
  SgdOptions o;
  o.lr = 1.0;
  Sgd<double> first({{"w", &w}}, o), second({{"w", &w}}, o);
  ReduceLROnPlateau a(first, options), b(second, options);
  for (std::size_t i = 0; i < 4; ++i) a.step(metrics[i]);
  BOOST_TEST(a.in_cooldown());
  b.load_state(a.state());
  second.lr = first.lr;
  for (std::size_t i = 4; i < metrics.size(); ++i) {
    a.step(metrics[i]);
    b.step(metrics[i]);
    BOOST_TEST(first.lr == second.lr);
  }
  BOOST_TEST(b.state().epoch == 9);
  BOOST_TEST(b.state().best == 2.0);
}

// ---------------------------------------------------------------------------------------------------------------
// Optimizer state for checkpoints

BOOST_AUTO_TEST_CASE(state_names_and_checkpoint_types) {
  TwoParameters<float> model(1);
  AdamOptions o;
  o.amsgrad = true;
  Adam<float> adam(model.parameters(), o);
  std::vector<std::string> names;
  for (const auto& [name, tensor] : adam.state()) names.push_back(name);
  const std::vector<std::string> expected = {"optimizer.adam.step",
                                             "optimizer.adam.exp_avg.W",
                                             "optimizer.adam.exp_avg.v",
                                             "optimizer.adam.exp_avg_sq.W",
                                             "optimizer.adam.exp_avg_sq.v",
                                             "optimizer.adam.max_exp_avg_sq.W",
                                             "optimizer.adam.max_exp_avg_sq.v"};
  BOOST_TEST(names == expected, boost::test_tools::per_element());
  // state() is what save_checkpoint takes as `extra`, state_slots() what load_checkpoint fills
  static_assert(std::is_same_v<decltype(adam.state()), NamedTensors<float>>);
  static_assert(std::is_same_v<decltype(adam.state_slots()), NamedTensorSlots<float>>);
  // every tensor exists before the first step (a fresh optimizer can be restored into), shaped like its parameter
  const auto slots = adam.state_slots();
  const Shape W_shape{3, 4}, v_shape{5}, step_shape{1};
  BOOST_TEST(slots[1].second->shape() == W_shape);
  BOOST_TEST(slots[2].second->shape() == v_shape);
  BOOST_TEST(slots[0].second->shape() == step_shape);
  AdamW<float> adamw(model.parameters(), AdamWOptions{});
  BOOST_TEST(adamw.state()[0].first == "optimizer.adamw.step");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(state_round_trip_resumes_bit_identically, T, float_types) {
  check_resume<T>([](const NamedParameters<T>& params) -> std::unique_ptr<Optimizer<T>> {
    SgdOptions o;
    o.lr = 0.05;
    o.momentum = 0.9;
    o.nesterov = true;
    o.weight_decay = 1e-3;
    return std::make_unique<Sgd<T>>(params, o);
  });
  check_resume<T>([](const NamedParameters<T>& params) -> std::unique_ptr<Optimizer<T>> {
    AdamOptions o;
    o.lr = 0.02;
    o.weight_decay = 0.01;
    o.amsgrad = true;
    return std::make_unique<Adam<T>>(params, o);
  });
  check_resume<T>([](const NamedParameters<T>& params) -> std::unique_ptr<Optimizer<T>> {
    AdamWOptions o;
    o.lr = 0.02;
    return std::make_unique<AdamW<T>>(params, o);
  });
}

BOOST_AUTO_TEST_CASE(restored_state_of_the_wrong_shape_or_count_throws_at_step) {
  TwoParameters<double> model(3);
  Adam<double> adam(model.parameters(), AdamOptions{});
  set_test_gradient(model.W, 1.0);
  set_test_gradient(model.v, 1.0);
  auto slots = adam.state_slots();
  *slots[2].second = Tensor<double>(Shape{4});  // exp_avg.v should be (5,)
  BOOST_CHECK_EXCEPTION(adam.step(), std::runtime_error,
                        message_has({"Adam", "optimizer.adam.exp_avg.v", "(4,)", "(5,)"}));
  *slots[2].second = Tensor<double>(Shape{5});
  slots[0].second->data()[0] = 2.5;
  BOOST_CHECK_EXCEPTION(adam.step(), std::runtime_error, message_has({"optimizer.adam.step", "2.5"}));
  for (const double bad : {-1.0, 1e300, std::nan("")}) {
    slots[0].second->data()[0] = bad;
    BOOST_CHECK_THROW(adam.step(), std::runtime_error);
    BOOST_CHECK_THROW(adam.step_count(), std::runtime_error);
  }
  const Tensor<double> untouched = model.W.value;
  slots[0].second->data()[0] = 0;
  adam.step();
  BOOST_TEST(adam.step_count() == 1);
  BOOST_TEST(!identical(model.W.value, untouched));
}

// ---------------------------------------------------------------------------------------------------------------
// Errors

BOOST_AUTO_TEST_CASE(invalid_hyper_parameters_throw) {
  Parameter<float> w(Tensor<float>(Shape{2}));
  const NamedParameters<float> params{{"w", &w}};
  auto sgd = [&](double lr, double momentum, double dampening, double weight_decay, bool nesterov) {
    SgdOptions o;
    o.lr = lr;
    o.momentum = momentum;
    o.dampening = dampening;
    o.weight_decay = weight_decay;
    o.nesterov = nesterov;
    Sgd<float> optimizer(params, o);
  };
  BOOST_CHECK_EXCEPTION(sgd(-1, 0, 0, 0, false), std::invalid_argument, message_has({"Sgd", "learning rate", "-1"}));
  BOOST_CHECK_EXCEPTION(sgd(std::nan(""), 0, 0, 0, false), std::invalid_argument,
                        message_has({"Sgd", "learning rate", "nan"}));
  BOOST_CHECK_EXCEPTION(sgd(0.1, -0.5, 0, 0, false), std::invalid_argument, message_has({"Sgd", "momentum", "-0.5"}));
  BOOST_CHECK_EXCEPTION(sgd(0.1, 0, 0, -0.01, false), std::invalid_argument,
                        message_has({"Sgd", "weight_decay", "-0.01"}));
  BOOST_CHECK_EXCEPTION(sgd(0.1, 0, 0, 0, true), std::invalid_argument, message_has({"Sgd", "nesterov", "momentum 0"}));
  BOOST_CHECK_EXCEPTION(sgd(0.1, 0.9, 0.1, 0, true), std::invalid_argument,
                        message_has({"Sgd", "nesterov", "dampening 0.1"}));
  BOOST_CHECK_NO_THROW(sgd(0.1, 0.9, 0, 0, true));

  auto adam = [&](double lr, double beta1, double beta2, double eps, double weight_decay) {
    AdamOptions o{lr, beta1, beta2, eps, weight_decay, false};
    Adam<float> optimizer(params, o);
  };
  BOOST_CHECK_EXCEPTION(adam(-0.1, 0.9, 0.999, 1e-8, 0), std::invalid_argument,
                        message_has({"Adam", "learning rate", "-0.1"}));
  BOOST_CHECK_EXCEPTION(adam(0.1, 1.0, 0.999, 1e-8, 0), std::invalid_argument, message_has({"Adam", "beta1", "1 "}));
  BOOST_CHECK_EXCEPTION(adam(0.1, -0.1, 0.999, 1e-8, 0), std::invalid_argument, message_has({"Adam", "beta1", "-0.1"}));
  BOOST_CHECK_EXCEPTION(adam(0.1, 0.9, 1.5, 1e-8, 0), std::invalid_argument, message_has({"Adam", "beta2", "1.5"}));
  BOOST_CHECK_EXCEPTION(adam(0.1, 0.9, 0.999, -1e-8, 0), std::invalid_argument, message_has({"Adam", "eps", "-1e-08"}));
  BOOST_CHECK_EXCEPTION(adam(0.1, 0.9, 0.999, 1e-8, -1), std::invalid_argument,
                        message_has({"Adam", "weight_decay", "-1"}));
  AdamWOptions bad_adamw;
  bad_adamw.beta2 = 1.0;
  BOOST_CHECK_EXCEPTION(AdamW<float>(params, bad_adamw), std::invalid_argument, message_has({"AdamW", "beta2", "1 "}));

  // lr is checked again at each step, since schedules and users change it
  Sgd<float> valid(params, SgdOptions{});
  valid.lr = -0.5;
  BOOST_CHECK_EXCEPTION(valid.step(), std::invalid_argument, message_has({"Sgd", "learning rate", "-0.5"}));

  BOOST_CHECK_EXCEPTION(clip_grad_norm(params, -1.0), std::invalid_argument,
                        message_has({"clip_grad_norm", "max_norm", "-1"}));
  BOOST_CHECK_EXCEPTION(StepLR(valid, 0, 0.5), std::invalid_argument, message_has({"StepLR", "step_size", "0"}));
  BOOST_CHECK_EXCEPTION(StepLR(valid, 2, -0.5), std::invalid_argument, message_has({"StepLR", "gamma", "-0.5"}));
  BOOST_CHECK_EXCEPTION(MultiStepLR(valid, {3, -1}), std::invalid_argument,
                        message_has({"MultiStepLR", "milestone", "-1"}));
  BOOST_CHECK_EXCEPTION(MultiStepLR(valid, {3}, -0.5), std::invalid_argument,
                        message_has({"MultiStepLR", "gamma", "-0.5"}));
  MultiStepLR multi(valid, {3});
  BOOST_CHECK_EXCEPTION(multi.load_state(MultiStepLR::State{-1}), std::invalid_argument,
                        message_has({"MultiStepLR", "epoch"}));
  BOOST_CHECK_EXCEPTION(NoamLR(valid, 0, 4), std::invalid_argument, message_has({"NoamLR", "d_model", "0"}));
  BOOST_CHECK_EXCEPTION(NoamLR(valid, 8, 0), std::invalid_argument, message_has({"NoamLR", "warmup", "0"}));
  BOOST_CHECK_EXCEPTION(NoamLR(valid, 8, 4, 0.0), std::invalid_argument, message_has({"NoamLR", "factor", "0"}));
  NoamLR noam(valid, 8, 4);
  BOOST_CHECK_EXCEPTION(noam.load_state(NoamLR::State{0}), std::invalid_argument, message_has({"NoamLR", "step"}));
  ReduceLROnPlateauOptions plateau;
  plateau.factor = 1.0;
  BOOST_CHECK_EXCEPTION(ReduceLROnPlateau(valid, plateau), std::invalid_argument,
                        message_has({"ReduceLROnPlateau", "factor", "1 "}));
  plateau.factor = 0.1;
  plateau.patience = -1;
  BOOST_CHECK_EXCEPTION(ReduceLROnPlateau(valid, plateau), std::invalid_argument, message_has({"patience", "-1"}));
  plateau.patience = 10;
  plateau.min_lr = -1e-3;
  BOOST_CHECK_EXCEPTION(ReduceLROnPlateau(valid, plateau), std::invalid_argument, message_has({"min_lr", "-0.001"}));
}

BOOST_AUTO_TEST_CASE(invalid_parameter_lists_throw) {
  Parameter<double> w(Tensor<double>(Shape{2})), b(Tensor<double>(Shape{3}));
  BOOST_CHECK_EXCEPTION(Adam<double>({}, AdamOptions{}), std::invalid_argument,
                        message_has({"Adam", "empty parameter list"}));
  BOOST_CHECK_EXCEPTION(Adam<double>({{"w", &w}, {"b", nullptr}}, AdamOptions{}), std::invalid_argument,
                        message_has({"Adam", "\"b\"", "null"}));
  BOOST_CHECK_EXCEPTION(Sgd<double>({{"w", &w}, {"w2", &w}}, SgdOptions{}), std::invalid_argument,
                        message_has({"Sgd", "\"w2\"", "twice"}));
  BOOST_CHECK_EXCEPTION(Sgd<double>({{"w", &w}, {"w", &b}}, SgdOptions{}), std::invalid_argument,
                        message_has({"Sgd", "named \"w\""}));
  // a gradient that does not match its parameter
  Sgd<double> sgd({{"w", &w}, {"b", &b}}, SgdOptions{});
  b.grad = Tensor<double>(Shape{2});
  BOOST_CHECK_EXCEPTION(sgd.step(), std::invalid_argument, message_has({"Sgd", "\"b\"", "(3,)", "(2,)"}));
}

// An executor (nn::BatchParallel::executor(), here a plain one that cuts the work in uneven ranges and runs them in
// reverse order) changes no number: Adam's and AdamW's steps, zero_grad and clip_grad_norm give the same bits as on one
// thread, over parameters large enough (2 × 70,001 elements) to be cut inside a parameter.
BOOST_AUTO_TEST_CASE(an_executor_gives_the_same_bits) {
  const Executor uneven = [](std::size_t count, const std::function<void(std::size_t, std::size_t)>& f) {
    const std::size_t cuts[] = {0, count / 7, count / 3, count / 3, count - 5 < count ? count - 5 : count, count};
    for (std::size_t k = 5; k-- > 0;) {
      if (cuts[k] < cuts[k + 1]) f(cuts[k], cuts[k + 1]);
    }
  };
  for (const bool decoupled : {false, true}) {
    std::vector<Parameter<float>> plain, shared;
    for (int copy = 0; copy < 2; ++copy) {
      Rng rng(3);
      auto& set = copy == 0 ? plain : shared;
      set.emplace_back(rng.uniform_tensor<float>(Shape{70001}, -1.0, 1.0));
      set.emplace_back(rng.uniform_tensor<float>(Shape{7, 10000}, -1.0, 1.0));
      set.emplace_back(rng.uniform_tensor<float>(Shape{3}, -1.0, 1.0));
    }
    const auto named = [](std::vector<Parameter<float>>& set) {
      return NamedParameters<float>{{"a", &set[0]}, {"b", &set[1]}, {"c", &set[2]}};
    };
    const AdamWOptions options{1e-2, 0.9, 0.999, 1e-8, 0.1, false};
    std::unique_ptr<Optimizer<float>> one, many;
    if (decoupled) {
      one = std::make_unique<AdamW<float>>(named(plain), options);
      many = std::make_unique<AdamW<float>>(named(shared), options);
    } else {
      one = std::make_unique<Adam<float>>(named(plain), AdamOptions{1e-2, 0.9, 0.999, 1e-8, 0.1, true});
      many = std::make_unique<Adam<float>>(named(shared), AdamOptions{1e-2, 0.9, 0.999, 1e-8, 0.1, true});
    }
    for (int step = 0; step < 3; ++step) {
      Rng grads(10 + step);
      for (std::size_t i = 0; i < plain.size(); ++i) {
        plain[i].grad = grads.uniform_tensor<float>(plain[i].value.shape(), -3.0, 3.0);
        shared[i].grad = plain[i].grad;
      }
      const float n1 = clip_grad_norm(named(plain), 50.0), n2 = clip_grad_norm(named(shared), 50.0, uneven);
      BOOST_TEST(n1 == n2);
      one->step();
      many->step(uneven);
      for (std::size_t i = 0; i < plain.size(); ++i) {
        BOOST_TEST((plain[i].grad.flat() == shared[i].grad.flat()), "clipped gradient " << i);
        BOOST_TEST((plain[i].value.flat() == shared[i].value.flat()), "step " << step << " parameter " << i);
      }
    }
    many->zero_grad(uneven);
    for (const Parameter<float>& p : shared) BOOST_TEST((p.grad.flat() == Tensor<float>(p.value.shape()).flat()));
  }
}

BOOST_AUTO_TEST_SUITE_END()
