// The check of exercise 5.1 (exercises/05/1.hpp): the contexts (5.1) against a plain triple loop, the changed table
// row by row, the predicted steps against the contexts the library computes from both tables, and the bag of
// annotations against uniform weights, on the chapter's annotations and on others (T_x = 6, H = 3).
#include "exercises/05/1.hpp"

#include <algorithm>
#include <cmath>
#define yours reference
#include "exercises/05/1.hpp"
#undef yours
#include "exercises/chapter_encoder.hpp"
#include "exercises/check.hpp"

using namespace attend;

namespace {

// The chapter's oracle's table: "the European Economic Area" → "la zone économique européenne".
const std::vector<std::vector<double>> oracle{
    {0.7, 0.0, 0.0, 0.3}, {0.0, 0.0, 0.0, 1.0}, {0.0, 0.0, 1.0, 0.0}, {0.0, 0.8, 0.0, 0.2}};

std::vector<double> values(const Variable<double>& v) { return {v.value().flat().begin(), v.value().flat().end()}; }

// (5.1) as a plain loop: Σ_t α_t h_t for h (1, T_x, H).
std::vector<double> by_loop(const std::vector<double>& alpha, const Tensor<double>& h) {
  const std::size_t T_x = h.shape()[1], H = h.shape()[2];
  std::vector<double> c(H, 0.0);
  for (std::size_t t = 0; t < T_x; ++t)
    for (std::size_t d = 0; d < H; ++d) c[d] += alpha[t] * h.at({0, t, d});
  return c;
}

void check_contexts(exercise::Check& check, const std::string& name, const std::vector<std::vector<double>>& alpha,
                    const Variable<double>& h) {
  const std::vector<Variable<double>> c = yours::contexts(alpha, h);
  check.that(c.size() == alpha.size(), name + ": one context per row of α",
             std::to_string(c.size()) + " contexts for " + std::to_string(alpha.size()) + " rows");
  for (std::size_t j = 0; j < alpha.size() && j < c.size(); ++j) {
    check.near(name + ": c_" + std::to_string(j + 1) + " = Σ_t α_" + std::to_string(j + 1) + "t h_t (5.1)",
               values(c[j]), by_loop(alpha[j], h.value()), 1e-15);
  }
}

void check_table(exercise::Check& check, const std::string& name, const std::vector<std::vector<double>>& alpha) {
  const std::vector<std::vector<double>> changed = yours::changed_table(alpha);
  const std::size_t T_x = alpha[0].size();
  std::vector<double> one_hot(T_x, 0.0), uniform(T_x, 1.0 / static_cast<double>(T_x));
  one_hot[0] = 1.0;
  check.that(changed.size() == alpha.size(), name + ": the changed table has as many rows",
             std::to_string(changed.size()) + " rows for " + std::to_string(alpha.size()));
  for (std::size_t j = 0; j < alpha.size() && j < changed.size(); ++j) {
    const std::vector<double>& expected = j == 0 ? one_hot : j == 3 ? uniform : alpha[j];
    const std::string row = "row " + std::to_string(j + 1) +
                            (j == 0   ? " (\"la\") one-hot on \"the\""
                             : j == 3 ? " (\"européenne\") uniform, 1/T_x each"
                                      : " kept as it was");
    check.near(name + ": " + row, changed[j], expected, 0.0);
  }
}

// The steps whose context differs between two tables, measured with the library.
std::vector<std::size_t> measured_changes(const std::vector<std::vector<double>>& a,
                                          const std::vector<std::vector<double>>& b, const Variable<double>& h) {
  Tape<double>& tape = h.tape();
  std::vector<std::size_t> steps;
  for (std::size_t j = 0; j < a.size(); ++j) {
    const Shape row{1, a[j].size()};
    const std::vector<double> c_a = values(models::context(tape.constant(Tensor<double>(row, a[j])), h));
    const std::vector<double> c_b = values(models::context(tape.constant(Tensor<double>(row, b[j])), h));
    if (c_a != c_b) steps.push_back(j + 1);
  }
  return steps;
}

std::string list(const std::vector<std::size_t>& steps) {
  std::string s = "{";
  for (std::size_t k = 0; k < steps.size(); ++k) s += (k ? ", " : "") + std::to_string(steps[k]);
  return s + "}";
}

void check_bag(exercise::Check& check, const std::string& name, const Variable<double>& h) {
  const std::size_t T_x = h.shape()[1];
  const Variable<double> bag = yours::bag_of_annotations(h);
  check.that(bag.shape() == Shape{1, h.shape()[2]}, name + ": the bag is (1, H)", to_string(bag.shape()));
  const std::vector<double> uniform(T_x, 1.0 / static_cast<double>(T_x));
  // the library's (5.1) with uniform weights, at every step j of a table of uniform rows
  for (std::size_t j = 0; j < 4; ++j) {
    const Variable<double> c_j = models::context(h.tape().constant(Tensor<double>(Shape{1, T_x}, uniform)), h);
    check.near(name + ": c_" + std::to_string(j + 1) + " with α_" + std::to_string(j + 1) +
                   "t = 1/T_x = the bag (1/T_x) Σ_t h_t",
               values(bag), values(c_j), 1e-15);
  }
}

}  // namespace

int main() {
  exercise::Check check("5.1", "another oracle, and the bag of annotations");
  Tape<double> tape;
  const Variable<double> h = tape.constant(exercise::chapter_annotations());
  Rng rng(51);
  const Variable<double> h_6 = tape.leaf(rng.normal_tensor<double>(Shape{1, 6, 3}, 0, 1));
  std::vector<std::vector<double>> table_6(3, std::vector<double>(6));
  for (auto& row : table_6) {
    double total = 0;
    for (double& a : row) total += a = rng.uniform();
    for (double& a : row) a /= total;
  }
  std::vector<std::vector<double>> other(5, std::vector<double>(4));  // another oracle: 5 rows over 4 words
  for (auto& row : other) {
    double total = 0;
    for (double& a : row) total += a = rng.uniform();
    for (double& a : row) a /= total;
  }

  check.run("the chapter's oracle: contexts", [&] { check_contexts(check, "the chapter's oracle", oracle, h); });
  check.run("another case: 3 rows over T_x = 6, H = 3: contexts",
            [&] { check_contexts(check, "another case: 3 rows over T_x = 6, H = 3", table_6, h_6); });
  check.run("the chapter's oracle, changed", [&] { check_table(check, "the chapter's oracle, changed", oracle); });
  check.run("another case: another oracle's 5 rows, changed",
            [&] { check_table(check, "another case: another oracle's 5 rows, changed", other); });
  check.run("your prediction: the steps whose c_j changes", [&] {
    const std::vector<std::size_t> yours = yours::changed_steps();
    const std::vector<std::size_t> measured = measured_changes(oracle, reference::changed_table(oracle), h);
    check.that(yours == measured, "your prediction: the steps j whose c_j changes, as the library computes them",
               "yours " + list(yours) + ", measured " + list(measured));
  });
  check.run("the bag of annotations", [&] { check_bag(check, "the chapter's h", h); });
  check.run("another case: the bag over T_x = 6, H = 3",
            [&] { check_bag(check, "another case: T_x = 6, H = 3", h_6); });
  check.run("another case: the annotations listed in reverse", [&] {
    Tensor<double> reversed(h.shape());
    for (std::size_t t = 0; t < 4; ++t)
      for (std::size_t d = 0; d < 4; ++d) reversed.at({0, t, d}) = h.value().at({0, 3 - t, d});
    const std::vector<double> bag = values(yours::bag_of_annotations(h));
    const std::vector<double> bag_reversed = values(yours::bag_of_annotations(tape.constant(reversed)));
    check.near("another case: the bag of h_4, h_3, h_2, h_1 = the bag of h_1, h_2, h_3, h_4 (the order is lost)",
               bag_reversed, bag, 1e-15);
  });
  return check.verdict();
}
