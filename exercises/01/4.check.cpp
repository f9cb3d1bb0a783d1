// The check of exercise 1.4 (exercises/01/4.hpp): dy/dx of the chain against 1.0001ⁿ (exact mathematics, computed as
// exp(n·log1p(10⁻⁴))), and the predicted node count against the tape's own count of a chain built here.
#include "exercises/01/4.hpp"

#include <cmath>
#define yours reference
#include "exercises/01/4.hpp"
#undef yours
#include "exercises/check.hpp"

using namespace attend;

namespace {

// The tape's node count after recording the chain as the task says.
std::size_t counted_nodes(std::size_t n) {
  Tape<double> tape;
  Variable<double> y = tape.leaf(Tensor<double>::scalar(0.5));
  for (std::size_t i = 0; i < n; ++i) y = y * 1.0001;
  return tape.size();
}

}  // namespace

int main() {
  exercise::Check check("1.4", "a chain of 10,000 nodes");
  const std::pair<std::size_t, double> chains[] = {{10000, 0.5}, {1, -2.0}, {0, 3.0}, {123457, 1.0}};
  for (const auto& [n, x] : chains) {
    const std::string name = (n == 10000 ? "" : "another case: ") + std::string("n = ") + std::to_string(n);
    check.run(name + ": dy/dx", [&, n = n, x = x] {
      const double exact = std::exp(static_cast<double>(n) * std::log1p(1e-4));
      check.near(name + ": dy/dx = 1.0001ⁿ", yours::chain_derivative(n, x), exact, 1e-10 * exact);
    });
  }
  for (const std::size_t n : {std::size_t{10000}, std::size_t{0}, std::size_t{1}, std::size_t{37}}) {
    const std::string name = (n == 10000 ? "" : "another case: ") + std::string("n = ") + std::to_string(n);
    check.run(name + ": the tape's nodes", [&] {
      const std::size_t yours = yours::chain_nodes(n), counted = counted_nodes(n);
      check.that(yours == counted, name + ": your formula gives the tape's node count",
                 "yours " + std::to_string(yours) + ", the tape holds " + std::to_string(counted));
    });
  }
  check.run("the reference solution", [&] {
    check.near("n = 10000: dy/dx = the reference's", yours::chain_derivative(10000, 0.5),
               reference::chain_derivative(10000, 0.5), 0.0);
  });
  return check.verdict();
}
