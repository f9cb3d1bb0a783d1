// Exercise 10.2 — a solution (the task: exercises/10/2.hpp).
//
// Why it works: the first wrong step is where the copy broke, and the weights of that step say how. Before it, every
// step wrote y_j = x_j; at it, a_j > j means the weight jumped over x_j (the output loses a symbol), a_j < j that it
// stayed on a symbol already written (the output repeats one, or goes on past the end), a_j = j that it sat on the
// right symbol and the rest of the step still wrote another. An early end token is a skip to the end of the source.
// What the check's three trainings show: with the same budget over sources twice as long, the curve falls inside the
// trained lengths (below 0.5 at 10 to 12 symbols of the 16 trained on), and a failure of 16 symbols goes wrong after
// eight to ten good steps on average: the diagonal holds for a stretch, then slips, by all three kinds (each seed
// has dozens of each). The full-size question (max_length 60 in bottleneck_experiment, `scripts/run 10`) takes minutes.
#include "exercises/10/2.hpp"

#include <algorithm>

namespace yours {

using namespace attend;
using namespace attend::models;

sequences::LengthExperiment lengthened(const sequences::LengthExperiment& experiment, std::size_t max_length) {
  sequences::LengthExperiment longer = experiment;
  longer.task.max_length = max_length;
  std::vector<std::size_t>& lengths = longer.test_lengths;
  const std::size_t spacing = lengths.size() >= 2 ? lengths.back() - lengths[lengths.size() - 2] : 5;
  while (lengths.back() + spacing <= max_length) lengths.push_back(lengths.back() + spacing);
  return longer;
}

std::size_t where_it_falls(const std::vector<sequences::LengthScore>& scores, double threshold) {
  for (const sequences::LengthScore& score : scores) {
    if (score.exact_match() < threshold) return score.length;
  }
  return 0;
}

std::vector<std::size_t> alignment_path(const Hypothesis& output) {
  std::vector<std::size_t> path;
  for (const std::vector<float>& row : output.attention) {
    path.push_back(static_cast<std::size_t>(std::max_element(row.begin(), row.end()) - row.begin()) + 1);
  }
  return path;
}

std::string slip(const sequences::Example& example, const Hypothesis& output) {
  if (output.tokens == example.target) return "";  // an exact match, as (10.1) counts them
  // the first step j (from 1) whose token differs from the target's, the end token counted as step T_y + 1
  std::size_t j = 1;
  while (j <= output.tokens.size() && j <= example.target.size() && output.tokens[j - 1] == example.target[j - 1]) ++j;
  const std::vector<std::size_t> path = alignment_path(output);
  if (j > path.size()) return "misread";  // no weights for that step (an unfinished output): nothing to read
  const std::size_t a_j = path[j - 1];
  return a_j > j ? "skip" : a_j < j ? "stutter" : "misread";
}

}  // namespace yours
