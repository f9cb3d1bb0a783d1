// The gradient checker itself: it passes correct derivatives, and it catches wrong ones — including a mistake that a
// plain sum of the outputs would hide — naming the input and element. Users' own ops are recorded with Tape::record,
// exactly as these test ops are.
#include "helpers.hpp"

using namespace attend;

namespace {

// y = 2x, recorded with a backward function supplied by the test (right or wrong).
Variable<double> doubled(const Variable<double>& x, BackwardFn<double> backward) {
  Tape<double>& tape = tape_of("doubled", {&x});
  Tensor<double> y(x.shape());
  y.flat() = 2.0 * x.value().flat();
  return tape.record("doubled", std::move(y), {x}, std::move(backward));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gradcheck_suite)

BOOST_AUTO_TEST_CASE(passes_a_correct_derivative) {
  auto f = [](Tape<double>&, const std::vector<Variable<double>>& x) {
    return doubled(x[0], [](BackwardContext<double>& c) { c.dx(0).flat() += 2.0 * c.dy().flat(); });
  };
  const GradcheckResult r = gradcheck(f, {testing::random_tensor(Shape{3, 4}, 1)});
  BOOST_TEST(r.passed, r.message);
  BOOST_TEST(r.checked == 12u);
  BOOST_TEST(r.worst_abs_error < 1e-8);
}

BOOST_AUTO_TEST_CASE(fails_a_wrong_derivative_and_names_the_element) {
  auto f = [](Tape<double>&, const std::vector<Variable<double>>& x) {
    return doubled(x[0], [](BackwardContext<double>& c) { c.dx(0).flat() += 2.1 * c.dy().flat(); });
  };
  const GradcheckResult r = gradcheck(f, {testing::random_tensor(Shape{2, 3}, 2)});
  BOOST_TEST(!r.passed);
  BOOST_TEST(r.message.find("input 0") != std::string::npos, r.message);
  BOOST_TEST(r.message.find("shape (2,3)") != std::string::npos, r.message);
  BOOST_TEST(r.message.find("analytic") != std::string::npos, r.message);
}

// The element worst against its tolerance need not be the one with the largest error: the message names both.
BOOST_AUTO_TEST_CASE(names_the_largest_absolute_error_too) {
  // y = x²; the derivative is off by 1e-3 at element 0, where x = 1e-4, and by 1e-2 at element 1, where x = 1
  auto f = [](Tape<double>&, const std::vector<Variable<double>>& x) {
    Tape<double>& tape = tape_of("squared", {&x[0]});
    const Tensor<double> at = x[0].value();
    Tensor<double> y(x[0].shape());
    y.flat() = at.flat() * at.flat();
    return tape.record("squared", std::move(y), {x[0]}, [at](BackwardContext<double>& c) {
      for (std::size_t i = 0; i < 2; ++i) c.dx(0).data()[i] += 2 * at.data()[i] * c.dy().data()[i] + (i ? 1e-2 : 1e-3);
    });
  };
  Tensor<double> x(Shape{2});
  x.data()[0] = 1e-4;
  x.data()[1] = 1.0;
  GradcheckOptions relative;
  relative.atol = 0;
  relative.rtol = 1e-2;
  const GradcheckResult r = gradcheck(f, {x}, relative);
  BOOST_TEST(!r.passed);
  BOOST_TEST(r.message.find("element (0): analytic") != std::string::npos, r.message);  // worst against tolerance
  BOOST_TEST(r.worst_abs_error == 1e-2, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(r.message.find("the largest |difference| of the 2 elements checked: ") != std::string::npos, r.message);
  BOOST_TEST(r.message.find("at input 0 element (1)") != std::string::npos, r.message);
}

BOOST_AUTO_TEST_CASE(catches_a_mistake_a_plain_sum_would_hide) {
  // Backward sends dy_i to x_{n-1-i}: with all dy = 1 (a plain sum) that is indistinguishable from the right answer
  auto f = [](Tape<double>&, const std::vector<Variable<double>>& x) {
    return doubled(x[0], [](BackwardContext<double>& c) {
      const std::size_t n = c.dy().size();
      for (std::size_t i = 0; i < n; ++i) c.dx(0).data()[i] += 2.0 * c.dy().data()[n - 1 - i];
    });
  };
  const GradcheckResult r = gradcheck(f, {testing::random_tensor(Shape{5}, 3)});
  BOOST_TEST(!r.passed);
}

BOOST_AUTO_TEST_CASE(checks_parameters_and_restores_them) {
  Parameter<double> w(testing::random_tensor(Shape{3, 2}, 4));
  Parameter<double> b(testing::random_tensor(Shape{2}, 5));
  w.grad.flat().fill(7.0);  // a gradient the user had accumulated: must survive the check
  const Tensor<double> w_before = w.value;
  auto f = [&](Tape<double>& tape, const std::vector<Variable<double>>& x) {
    return tanh(matmul(x[0], tape.param(w)) + tape.param(b));
  };
  const GradcheckResult r = gradcheck(f, {testing::random_tensor(Shape{4, 3}, 6)}, {}, {{"W", &w}, {"b", &b}});
  BOOST_TEST(r.passed, r.message);
  BOOST_TEST(r.checked == 12u + 6u + 2u);
  BOOST_TEST(w.value.flat() == w_before.flat(), boost::test_tools::per_element());
  BOOST_TEST(w.grad.at({1, 1}) == 7.0);
}

BOOST_AUTO_TEST_CASE(names_a_wrong_parameter_gradient) {
  Parameter<double> w(testing::random_tensor(Shape{2}, 8));
  auto f = [&](Tape<double>& tape, const std::vector<Variable<double>>&) {
    return doubled(tape.param(w), [](BackwardContext<double>& c) { c.dx(0).flat() += c.dy().flat(); });
  };
  const GradcheckResult r = gradcheck(f, {}, {}, {{"encoder.W_z", &w}});
  BOOST_TEST(!r.passed);
  BOOST_TEST(r.message.find("parameter 'encoder.W_z'") != std::string::npos, r.message);
}

BOOST_AUTO_TEST_SUITE_END()
