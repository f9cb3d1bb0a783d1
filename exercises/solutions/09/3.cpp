// Exercise 9.3 — a solution (the task: exercises/09/3.hpp).
//
// Why it works: the decoder kind and the score kind are independent fields of the configuration, and every decoder
// takes every score, so the 2×2 table is two assignments. The general score by hand is (9.3) with s_{j−1} in place of
// s_j: W_a h_i first (the key, which the library computes once per sentence), then its dot product with the query.
// The predictions, as the check measures them: at this budget neither when nor how moves the held-out loss by more
// than a few hundredths — about what another seed moves it — while leaving attention out costs almost four tenths:
// every attention decoder finds the characters it copies, the vanilla one has to squeeze the date through s_0. How
// shapes the weights, when does not: a product of two H-long states can grow to ±H, a tanh-bounded additive score
// cannot, so the general score's weights are nearly one-hot (mean largest weight about 0.8) and the additive ones
// spread (about 0.45 to 0.6), before or after the step alike. That is the chapter's picture: its dot and general
// heatmaps against its concat and Bahdanau ones.
#include "exercises/09/3.hpp"

namespace yours {

using attend::models::DecoderKind;
using attend::models::ScoreKind;

void configure(attend::models::Seq2seqConfig& config, const std::string& when, const std::string& how) {
  config.decoder = when == "before" ? DecoderKind::bahdanau : DecoderKind::luong;  // s_{j−1} or s_j as the query
  config.score = how == "general" ? ScoreKind::general : ScoreKind::additive;
}

std::vector<double> general_scores_before(const attend::models::BahdanauDecoder<double>& decoder,
                                          const attend::Tensor<double>& h, const std::vector<double>& s_prev) {
  const auto& score = dynamic_cast<const attend::models::GeneralScore<double>&>(*decoder.score);
  const attend::Tensor<double>& W_a = score.W_a.value;  // (H, H)
  const std::size_t T_x = h.shape()[1], H = s_prev.size(), K = h.shape()[2];
  std::vector<double> e_ij(T_x, 0.0);
  for (std::size_t i = 0; i < T_x; ++i) {
    for (std::size_t k = 0; k < H; ++k) {
      double W_a_h_i = 0;  // (W_a h_i)_k
      for (std::size_t m = 0; m < K; ++m) W_a_h_i += W_a.at({k, m}) * h.at({0, i, m});
      e_ij[i] += s_prev[k] * W_a_h_i;  // e_ij = s_{j−1}ᵀ W_a h_i
    }
  }
  return e_ij;
}

std::string matters_most_for_loss() { return "attention"; }

std::string matters_most_for_weights() { return "how"; }

}  // namespace yours
