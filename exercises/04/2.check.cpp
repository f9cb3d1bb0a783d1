// The check of exercise 4.2 (exercises/04/2.hpp): the area under exact-match curves typed in here, the learner's run
// against the reference solution's, then chapter 4's experiment scaled down (three seeds): H = 16 against H = 32, and
// 300 steps against 900 at H = 16.
#include "exercises/04/2.hpp"

#include <cmath>
#include <string>
#define yours reference
#include "exercises/04/2.hpp"
#undef yours
#include "exercises/check.hpp"

using namespace attend;
using namespace attend::models;

namespace {

using sequences::LengthScore;

// A curve: (length, count, exact) for each test length.
std::vector<LengthScore> curve(std::initializer_list<std::array<std::size_t, 3>> points) {
  std::vector<LengthScore> scores;
  for (const auto& p : points) scores.push_back({p[0], p[1], p[2]});
  return scores;
}

void check_area(exercise::Check& check) {
  check.near("EM = 1, 1, 1, 0, 0 at T_x = 5, 6, 7, 8, 9: 3 lengths copied",
             yours::copied_lengths(curve({{5, 10, 10}, {6, 10, 10}, {7, 10, 10}, {8, 10, 0}, {9, 10, 0}})), 3.0, 1e-12);
  check.near("another case: EM = 1, ½, ¼ at T_x = 5, 10, 15 (spacing 5): 5 · 1.75 = 8.75",
             yours::copied_lengths(curve({{5, 4, 4}, {10, 4, 2}, {15, 4, 1}})), 8.75, 1e-12);
  check.near("another case: one length, EM = 0.3: 0.3", yours::copied_lengths(curve({{12, 10, 3}})), 0.3, 1e-12);
}

// Chapter 4's experiment scaled down: 4 symbols (a..d), 2000 sources of 5 to 10, 100 tests per length.
sequences::LengthExperiment scaled_down(std::uint64_t seed) {
  sequences::LengthExperiment experiment = sequences::bottleneck_experiment(true);
  experiment.task.symbols = 4;
  experiment.task.max_length = 10;
  experiment.train_examples = 2000;
  experiment.test_lengths = {5, 6, 7, 8, 9, 10};
  experiment.test_per_length = 100;
  experiment.seed = experiment.training.seed = seed + 1;
  return experiment;
}

std::string em(const std::vector<LengthScore>& scores) {
  std::string s;
  for (const LengthScore& score : scores)
    s += (s.empty() ? "" : " ") + std::to_string(std::lround(100 * score.exact_match()));
  return s + " %";
}

void compare(exercise::Check& check, std::uint64_t seed) {
  const std::string name = "seed " + std::to_string(seed);
  const sequences::LengthExperiment experiment = scaled_down(seed);
  const std::vector<LengthScore> narrow = yours::exact_match_by_length(experiment, 16, 300);
  const std::vector<LengthScore> wide = yours::exact_match_by_length(experiment, 32, 300);
  const std::vector<LengthScore> longer = yours::exact_match_by_length(experiment, 16, 900);
  if (seed == 0) {
    const std::vector<LengthScore> expected = reference::exact_match_by_length(experiment, 16, 300);
    std::vector<double> yours_em, expected_em;
    for (const LengthScore& s : narrow) yours_em.push_back(s.exact_match());
    for (const LengthScore& s : expected) expected_em.push_back(s.exact_match());
    check.near(name + ": H = 16, 300 steps: your exact match at T_x = 5 … 10 = the reference's run", yours_em,
               expected_em, 0.1);
  }
  const double a_narrow = yours::copied_lengths(narrow), a_wide = yours::copied_lengths(wide),
               a_longer = yours::copied_lengths(longer);
  check.that(a_wide > a_narrow, name + ": doubling H (16 → 32) moves the curve right",
             "exact match at T_x = 5 … 10: H = 16 " + em(narrow) + ", H = 32 " + em(wide) + "; lengths copied " +
                 exercise::number(a_narrow) + " → " + exercise::number(a_wide));
  check.that(a_longer > a_narrow, name + ": at H = 16, three times the steps (300 → 900) moves it right too",
             "exact match " + em(longer) + "; lengths copied " + exercise::number(a_narrow) + " → " +
                 exercise::number(a_longer));
}

}  // namespace

int main() {
  exercise::Check check("4.2", "a wider context vector");
  check.run("the area under the curve", [&] { check_area(check); });
  for (const std::uint64_t seed : {0, 1, 2}) {
    check.run("seed " + std::to_string(seed), [&] { compare(check, seed); });
  }
  return check.verdict();
}
