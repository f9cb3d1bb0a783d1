// The check of exercise 1.3 (exercises/01/3.hpp): softsign's values against x / (1 + |x|), one node on the tape, and
// its derivative by attend::gradcheck on the tensor the task names and on others (negative, large, 3-d).
#include "exercises/01/3.hpp"

#include <cmath>
#include <cstring>
#define yours reference
#include "exercises/01/3.hpp"
#undef yours
#include "exercises/check.hpp"

using namespace attend;

namespace {

Tensor<double> uniform(const Shape& shape, std::uint64_t seed, double low, double high) {
  Rng rng(seed);
  return rng.uniform_tensor<double>(shape, low, high);
}

void check_values(exercise::Check& check, const std::string& name, const Tensor<double>& x) {
  Tape<double> tape;
  const Variable<double> v = tape.leaf(x);
  const std::size_t before = tape.size();
  const Variable<double> y = yours::softsign(v);
  check.that(
      tape.size() == before + 1 && std::strcmp(tape.node(y.index()).op, "softsign") == 0,
      name + ": softsign records one node, named \"softsign\"",
      std::to_string(tape.size() - before) + " node(s) recorded, the last named \"" + tape.node(y.index()).op + "\"");
  std::vector<double> yours_y(y.value().flat().begin(), y.value().flat().end()), expected;
  for (const double e : x.flat()) expected.push_back(e / (1 + std::abs(e)));
  check.near(name + ": y = x / (1 + |x|)", yours_y, expected, 1e-15);
}

void check_gradient(exercise::Check& check, const std::string& name, const Tensor<double>& x) {
  const GradcheckResult result =
      gradcheck([](Tape<double>&, const std::vector<Variable<double>>& in) { return yours::softsign(in[0]); }, {x});
  check.that(result.passed, name + ": gradcheck of softsign",
             result.passed ? "largest |analytic − numeric| " + exercise::number(result.worst_abs_error) + " over " +
                                 std::to_string(result.checked) + " elements"
                           : result.message);
}

}  // namespace

int main() {
  exercise::Check check("1.3", "softsign as a new op, checked by gradcheck");
  const Tensor<double> task = uniform(Shape{3, 4}, 1, -3.0, 3.0);
  const Tensor<double> far = uniform(Shape{2, 5, 3}, 2, -40.0, 40.0);
  Tensor<double> small(Shape{4});
  small.data()[0] = -0.25, small.data()[1] = 0.125, small.data()[2] = 2.0, small.data()[3] = -1.0;
  const std::pair<const char*, const Tensor<double>*> inputs[] = {
      {"x of shape (3,4) in [−3, 3]", &task},
      {"another case: x of shape (2,5,3) in [−40, 40]", &far},
      {"another case: x = (−0.25, 0.125, 2, −1)", &small}};
  for (const auto& input : inputs) {  // (not a structured binding: clang 14 does not let a lambda capture one)
    const std::string name = input.first;
    const Tensor<double>& x = *input.second;
    check.run(name + ": values", [&] { check_values(check, name, x); });
    check.run(name + ": gradient", [&] { check_gradient(check, name, x); });
  }
  check.run("the reference solution on the same x", [&] {
    Tape<double> tape;
    const Variable<double> v = tape.leaf(task);
    const Tensor<double> y = yours::softsign(v).value(), expected = reference::softsign(v).value();
    check.near("softsign(x) = the reference's", std::vector<double>(y.flat().begin(), y.flat().end()),
               std::vector<double>(expected.flat().begin(), expected.flat().end()), 0.0);
  });
  return check.verdict();
}
