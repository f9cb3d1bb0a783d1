// Exercise 7.2 — your answer (the task: exercises/07/2.hpp). Check it with `scripts/exercise 7.2`.
// padded_step is the chapter's code, which knows only T_x = 4: make it work for any T_x ≥ 4.
#include "exercises/07/2.hpp"

#include "exercises/check.hpp"

namespace yours {

using namespace attend;

std::pair<Variable<double>, Variable<double>> padded_step(Tape<double>& tape, nn::Encoder<double>& encoder,
                                                          models::AdditiveScore<double>& score, std::size_t T_x) {
  // A batch of two sentences, the second padded to T_x: "the European Economic Area", "the Economic Area <pad>".
  const std::vector<std::int64_t> lengths{4, 3};
  const Ids batch(Shape{2, T_x}, {1, 2, 3, 4, 1, 3, 4, 0});
  const nn::RecurrentOutput<double> padded = encoder(tape, batch, lengths);
  const Variable<double> h_batch = padded.outputs;                         // (2, T_x, H)
  const Variable<double> s_0 = padded.h_final[0];                          // (2, H): each sentence's own s_0 = h_Tx
  const Variable<double> e_batch = score.score(s_0, score.keys(h_batch));  // (2, T_x)
  const Mask m = models::source_mask(lengths, T_x);                        // (7.3)
  const Variable<double> alpha = models::attention_weights(e_batch, m);    // (7.4)
  return {alpha, models::context(alpha, h_batch)};                         // (7.2)
}

double unmasked_shrink(const std::vector<double>& real_scores, double pad_score, std::size_t pads) {
  (void)real_scores;
  (void)pad_score;
  (void)pads;
  throw attend::exercise::Todo("your prediction: 1 − α_pad");
}

}  // namespace yours
