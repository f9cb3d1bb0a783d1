// Exercise 7.2 — a solution (the task: exercises/07/2.hpp).
//
// With the mask, nothing the chapter prints for the masked weights or contexts changes: the encoder leaves every real
// annotation as it was (a padded step does not touch the state), the padded annotations are 0, the scores of the real
// words do not depend on the other positions, and (7.4) leaves the padding out of the sum — one <pad> or five. The
// masked α only grows a 0 column; the sentence alone, the batch with T_x = 4 and the batch with T_x = 5 agree. What
// changes is what the mask exists to remove: the unmasked weights, which now give each sentence's padding
// p e^(e_pad) / (Σ_i e^(e_ij) + p e^(e_pad)) for p <pad>s, the first sentence included (it had none at T_x = 4), and
// the unmasked contexts, shrunk by 1 − α_pad. None of the chapter's checks breaks because each compares things that
// move together: the masked batch with the sentence alone, and the unmasked context with (1 − α_pad) times the masked
// one, an identity that holds for any share α_pad, since h_pad = 0. The factor is computed with the largest score
// subtracted first, so that scores of a few hundred do not overflow exp.
#include "exercises/07/2.hpp"

#include <algorithm>
#include <cmath>

namespace yours {

using namespace attend;

std::pair<Variable<double>, Variable<double>> padded_step(Tape<double>& tape, nn::Encoder<double>& encoder,
                                                          models::AdditiveScore<double>& score, std::size_t T_x) {
  // The two sentences, padded with 0 (<pad>) to T_x positions: "the European Economic Area", "the Economic Area".
  const std::vector<std::int64_t> lengths{4, 3};
  Ids batch(Shape{2, T_x});  // zeros: <pad> everywhere, then the words
  const std::vector<std::vector<std::int64_t>> words{{1, 2, 3, 4}, {1, 3, 4}};
  for (std::size_t b = 0; b < 2; ++b) std::copy(words[b].begin(), words[b].end(), batch.data() + b * T_x);
  const nn::RecurrentOutput<double> padded = encoder(tape, batch, lengths);
  const Variable<double> h_batch = padded.outputs;                         // (2, T_x, H)
  const Variable<double> s_0 = padded.h_final[0];                          // (2, H): each sentence's own s_0 = h_Tx
  const Variable<double> e_batch = score.score(s_0, score.keys(h_batch));  // (2, T_x)
  const Mask m = models::source_mask(lengths, T_x);                        // (7.3)
  const Variable<double> alpha = models::attention_weights(e_batch, m);    // (7.4)
  return {alpha, models::context(alpha, h_batch)};                         // (7.2)
}

double unmasked_shrink(const std::vector<double>& real_scores, double pad_score, std::size_t pads) {
  const double m = pads > 0 ? std::max(pad_score, *std::max_element(real_scores.begin(), real_scores.end()))
                            : *std::max_element(real_scores.begin(), real_scores.end());
  double real = 0;  // Σ_i exp(e_ij − m) over the real words
  for (const double e : real_scores) real += std::exp(e - m);
  const double padding = static_cast<double>(pads) * std::exp(pad_score - m);  // p exp(e_pad − m)
  return real / (real + padding);                                              // 1 − α_pad
}

}  // namespace yours
