// Exercise 4.1 — the bottleneck on reversed strings (docs/04-bottleneck.md, "Exercises").
//
// Switch chapter 4's experiment to sequences::Task::reverse. Now y_1 = x_Tx is one encoder step away from c = h_Tx,
// and y_Ty = x_1 is T_x steps away (4.3); Sutskever et al. reversed their sources for this reason. How do exact match
// (4.1) and the table of positions right at the longest length change? Two functions:
//   reversed           a copy of the experiment it is given with task.task = Task::reverse and nothing else changed
//                      (the same lengths, data sizes, model sizes, training and seed).
//   right_by_position  the chapter's second table: for the test examples whose source has T_x symbols, the share
//                      whose output has the target's token at position j, for j = 1 … T_x (an output shorter than j is
//                      wrong there; examples of other lengths are not counted).
// The check runs the experiment scaled down (lengths 5 to 10, H = 32, 400 steps; three seeds) on copy and on your
// reversed copy of it, and compares the two.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstdint>
#include <vector>

#include "models/sequences.hpp"

namespace yours {

// The experiment with the reverse task instead of copy.
attend::models::sequences::LengthExperiment reversed(const attend::models::sequences::LengthExperiment& experiment);
// The share of the examples of source length T_x whose outputs[k] is right at position j, j = 1 … T_x.
std::vector<double> right_by_position(const std::vector<attend::models::sequences::Example>& examples,
                                      const std::vector<std::vector<std::int64_t>>& outputs, std::size_t T_x);

}  // namespace yours
