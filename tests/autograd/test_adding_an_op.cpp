// docs/reference/adding-an-op.md's code, compiled as the page shows it (the page quotes this file's regions): the
// headers it names, softsign's declaration and definition, and its test. Included first, before anything else, so
// that the page's headers are shown to be enough on their own.
// [docs:includes]
#include <xtensor/xmath.hpp>     // xt::abs
#include <xtensor/xnoalias.hpp>  // xt::noalias

#include "autograd/autograd.hpp"  // Variable, Tape, BackwardContext, gradcheck
// [docs:end]

namespace attend {

// [docs:declaration]
// y = x / (1 + |x|)
// dx += dy / (1 + |x|)²
template <class T>
Variable<T> softsign(const Variable<T>& x);
// [docs:end]

// [docs:definition]
template <class T>
Variable<T> softsign(const Variable<T>& x) {
  Tape<T>& tape = tape_of("softsign", {&x});  // valid handle? one tape? (names the op on error)
  Tensor<T> y(x.shape(), uninitialized);      // every element is written just below
  // one vectorised xtensor expression; noalias: y does not appear on the right, so no temporary is needed
  xt::noalias(y.flat()) = x.value().flat() / (T(1) + xt::abs(x.value().flat()));
  return tape.record("softsign", std::move(y), {x}, [](BackwardContext<T>& c) {
    const auto d = T(1) + xt::abs(c.x(0).flat());  // a lazy expression, used at once: fine
    xt::noalias(c.dx(0).flat()) += c.dy().flat() / (d * d);
  });
}
// [docs:end]

}  // namespace attend

#include "helpers.hpp"

using namespace attend;

BOOST_AUTO_TEST_SUITE(adding_an_op)

// [docs:test]
BOOST_AUTO_TEST_CASE(softsign_gradient) {
  auto f = [](Tape<double>&, const std::vector<Variable<double>>& x) { return softsign(x[0]); };
  ATTEND_CHECK_GRADIENTS(f, {testing::random_tensor(Shape{3, 4}, 1, -3.0, 3.0)});
}
// [docs:end]

// The values on a hand-computed case: softsign(1) = 1/2, softsign(-3) = -3/4, softsign(0) = 0.
BOOST_AUTO_TEST_CASE(softsign_values) {
  Tape<double> tape;
  Tensor<double> x(Shape{3});
  x.data()[0] = 1.0;
  x.data()[1] = -3.0;
  x.data()[2] = 0.0;
  const Variable<double> y = softsign(tape.leaf(x));
  BOOST_TEST(y.value().data()[0] == 0.5);
  BOOST_TEST(y.value().data()[1] == -0.75);
  BOOST_TEST(y.value().data()[2] == 0.0);
}

BOOST_AUTO_TEST_SUITE_END()
