// Exercise 4.2 — a wider context vector (docs/04-bottleneck.md, "Exercises").
//
// Double H to 128, then 256: how far does the exact-match curve (4.1) move to the right per doubling? Is c's capacity
// the limit, or is it learning the long path (4.3)? The full runs take minutes; the check runs chapter 4's experiment
// scaled down (4 symbols, sources of 5 to 10, H = 16 and 32, a few hundred steps; three seeds). Two functions:
//   exact_match_by_length  chapter 4's train_and_measure with hidden size H and `steps` training steps (the learning
//                          rate dropping tenfold after 70 % of them, as bottleneck_experiment does): the model
//                          sequences::model_config(experiment, "vanilla") with hidden_size H, trained by
//                          sequences::train on sequences::training_set(experiment), the test set decoded by
//                          sequences::predict, scored by sequences::score_by_length.
//   copied_lengths         the area under the exact-match curve in units of length: Σ_T EM(T) · Δ over the test
//                          lengths, Δ their spacing (all equally spaced; Δ = 1 when there is only one). A curve that is
//                          1 up to some length and 0 after copies that many lengths' worth; moved right by d, it gains
//                          d.
// The check compares copied_lengths with exact areas and your run with the reference solution's, then measures, seed
// by seed: how far does doubling H move the curve, and how far does training three times longer at the same H?
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <vector>

#include "models/sequences.hpp"

namespace yours {

// Exact match by source length of the vanilla model with hidden size H trained for `steps` steps on the experiment.
std::vector<attend::models::sequences::LengthScore> exact_match_by_length(
    const attend::models::sequences::LengthExperiment& experiment, std::size_t H, std::size_t steps);
// Σ_T EM(T) · Δ: how many test lengths' worth of the curve is copied.
double copied_lengths(const std::vector<attend::models::sequences::LengthScore>& scores);

}  // namespace yours
