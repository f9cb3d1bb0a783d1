// Exercise 3.1 — reversing the source (docs/03-encoder-decoder.md, "Exercises").
//
// Switch the task to sequences::Task::reverse: the target is the source backwards, y_j = x_{T_x+1−j}. Sutskever et
// al. reversed their source sentences and found that the model learned better. Which output positions get easier for
// the vanilla model, and which harder? Count the steps that separate x_i from y_j, then measure. Two functions:
//   encoder_steps         the number of encoder states that carry the source token y_j copies (x_j for the copy
//                         task, x_{T_x+1−j} for reverse) into c = h_Tx (2.7): x_i enters at h_i and must then survive
//                         every step to h_Tx, h_i included. (The vanilla decoder reads c at every step, (3.2)–(3.3), so
//                         the decoder adds one step whatever j is.) The check measures it on the library's encoder:
//                         it changes x_i and counts the states h_t that change.
//   accuracy_by_position  under teacher forcing (Seq2seq::forward, every step reading the true y_{j−1}), for examples
//                         whose sources all have one length T_x: at each output position j = 1 … T_x + 1 (the end
//                         token last), the share of the examples whose step j puts its largest logit on y_j, among
//                         the tokens a decoder may output (never <pad> or <sos>, ids 0 and 1, as chapter 3's
//                         argmax_token).
// The check trains the vanilla model on both tasks (scaled down: H = 32, 400 steps; three seeds each) and compares
// your per-position accuracies of the two.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <vector>

#include "models/sequences.hpp"

namespace yours {

// How many encoder states carry the source token that y_j copies into h_Tx, for a source of T_x tokens (1 ≤ j ≤ T_x).
std::size_t encoder_steps(attend::models::sequences::Task task, std::size_t T_x, std::size_t j);
// The teacher-forced share right at each output position j = 1 … T_x + 1, over `examples` (all of one length T_x).
std::vector<double> accuracy_by_position(attend::models::Seq2seq<float>& model,
                                         const std::vector<attend::models::sequences::Example>& examples);

}  // namespace yours
