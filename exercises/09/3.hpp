// Exercise 9.3 — when the decoder scores, and how (docs/09-luong.md, "Exercises").
//
// Two choices separate the chapter's attention decoders. *When*: before the step, on s_{j−1} (chapter 8's decoder,
// DecoderKind::bahdanau), or after it, on s_j (Luong's, DecoderKind::luong). *How*: additive (ScoreKind::additive),
// v_aᵀ tanh(W_a q + U_a h_i), of which Luong's concat is the same form read on s_j; or multiplicative
// (ScoreKind::general), qᵀ W_a h_i. The table has three of the four pairs; the fourth is chapter 8's decoder with the
// general score:
//   e_ij = s_{j−1}ᵀ W_a h_i          W_a (H, H): GeneralScore::W_a
//   configure: set config.decoder and config.score for when = "before" or "after" and how = "additive" or "general".
//   general_scores_before: that score by hand, e_ij for every i, from s_{j−1} and the annotations h (1, T_x, H) of one
//              source. The check walks a date through the decoder against decoder->step()'s energies (double, 1e-10).
// Then the chapter's question: which matters more at this budget, when or how? The check trains the four decoders and
// the vanilla one alike, scaled down (E = 12, H = 24, 200 steps of 32 dates, seeds 1–3), and measures on 100 test
// dates the held-out loss (8.6) and how close to one-hot the weights are (the mean of max_i α_ij over the attention
// rows of the greedy outputs). On the means over the seeds, the effect of `when` is the difference between the two
// "before" decoders and the two "after" ones, the effect of `how` between the two additive and the two general ones,
// and the effect of attention itself between the vanilla decoder and the four. Predict:
//   matters_most_for_loss:    "when", "how" or "attention": the largest effect on the held-out loss;
//   matters_most_for_weights: "when" or "how": the larger effect on the mean largest weight.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <string>
#include <vector>

#include "models/seq2seq.hpp"

namespace yours {

// Sets config.decoder and config.score (nothing else) for when ∈ {"before", "after"}, how ∈ {"additive", "general"}.
void configure(attend::models::Seq2seqConfig& config, const std::string& when, const std::string& how);
// e_ij = s_{j−1}ᵀ W_a h_i for i = 1..T_x, with W_a the general score's of chapter 8's decoder.
std::vector<double> general_scores_before(const attend::models::BahdanauDecoder<double>& decoder,
                                          const attend::Tensor<double>& h, const std::vector<double>& s_prev);
// Your predictions.
std::string matters_most_for_loss();
std::string matters_most_for_weights();

}  // namespace yours
