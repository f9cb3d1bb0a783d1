// Exercise 4.1 — a solution (the task: exercises/04/1.hpp).
//
// Reversing moves the first outputs next to c: y_1 = x_Tx has crossed one encoder step, where under copy it crosses
// T_x. The first column of the table jumps (at 10 symbols, from about half right to about three quarters here), and
// exact match on the shortest sources rises with it, since a whole string is right only if its first symbols are.
// The far end changes little, although y_Ty = x_1 is now T_x steps from c: under copy the last outputs were already
// the worst of the table — they come after T_x − 1 outputs that could go wrong, and (4.3)'s geometric decay made the
// early positions the ones training learned first. So the table's slope does not flip; it gets steeper at the start.
// Reversal does not widen the bottleneck: c still holds T_x symbols in H numbers, and at the longest lengths neither
// task is copied whole (chapter 10's attention model copies them, by reading every h_i).
#include "exercises/04/1.hpp"

namespace yours {

using namespace attend::models;

sequences::LengthExperiment reversed(const sequences::LengthExperiment& experiment) {
  sequences::LengthExperiment reverse = experiment;
  reverse.task.task = sequences::Task::reverse;
  return reverse;
}

std::vector<double> right_by_position(const std::vector<sequences::Example>& examples,
                                      const std::vector<std::vector<std::int64_t>>& outputs, std::size_t T_x) {
  std::vector<double> right(T_x, 0.0);
  double count = 0;
  for (std::size_t k = 0; k < examples.size(); ++k) {
    if (examples[k].source.size() != T_x) continue;
    count += 1;
    for (std::size_t j = 0; j < T_x && j < outputs[k].size(); ++j) right[j] += outputs[k][j] == examples[k].target[j];
  }
  for (double& share : right) share /= count;
  return right;
}

}  // namespace yours
