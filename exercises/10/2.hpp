// Exercise 10.2 — longer sources: where the attention curve falls, and how its alignment breaks
// (docs/10-attention-fixes-the-bottleneck.md, "Exercises").
//
// Lengthen chapter 10's experiment: train on sources up to a longer max_length and add test lengths up to it. With the
// same budget the attention model cannot copy every length it was trained on: exact match (10.1) falls somewhere, and
// the heatmap of a failure shows how the diagonal y_j ← x_j of (10.5) broke. Write:
//   lengthened      the experiment with task.max_length = max_length and its test lengths continued at their own
//                   spacing (the difference of the last two; 5 if there is only one) while they stay ≤ max_length;
//   where_it_falls  the shortest test length whose exact match is below `threshold` (0 when none is);
//   alignment_path  for every row j of an output's weights (one row per emitted token, the end token included), the
//                   source position a_j = argmax_i α_ij that holds its largest weight, counted from 1 as in x_1..x_Tx
//                   (the first of equal largest weights);
//   slip            how a copy went wrong: "" when the output is the target; otherwise at the first wrong output step
//                   j (counted from 1; step T_y + 1 is where the end token belongs, and an output that ends early is
//                   wrong at the step of its end token), "skip" when a_j > j (the weight ran ahead of x_j),
//                   "stutter" when a_j < j (it stayed behind: a symbol written again) and "misread" when a_j = j (it
//                   looked at x_j and wrote something else).
// The check compares each with the reference solution and with outputs built by hand, then trains the chapter's
// Bahdanau model scaled down (H = 16, 6 symbols, sources of 3 to 8 symbols lengthened to 3 to 16, 300 steps) from
// three seeds, and asks your functions where its curve falls and where its long failures go wrong.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <string>
#include <vector>

#include "models/search.hpp"
#include "models/sequences.hpp"

namespace yours {

attend::models::sequences::LengthExperiment lengthened(const attend::models::sequences::LengthExperiment& experiment,
                                                       std::size_t max_length);
// scores: one per test length, by increasing length (sequences::score_by_length's).
std::size_t where_it_falls(const std::vector<attend::models::sequences::LengthScore>& scores, double threshold);
// a_1, a_2, …: one source position (from 1) per row of output.attention.
std::vector<std::size_t> alignment_path(const attend::models::Hypothesis& output);
// "", "skip", "stutter" or "misread".
std::string slip(const attend::models::sequences::Example& example, const attend::models::Hypothesis& output);

}  // namespace yours
