// Exercise 11.2 — a solution (the task: exercises/11/2.hpp).
//
// Why it works: the counts stay equal because every attention decoder, whatever its score, asks for one e_ij per
// source position, step and sentence: N_scores = B·T_x·T_y of (11.1), the five of them alike (the check counts them).
// What differs is the work inside one score. With the keys precomputed, the additive and concat scores still add the
// step's projected query to each key, take A tanh and multiply by v_a: A multiplications and A tanh per e_ij. Dot and
// general have no tanh: s_j · h_i, or s_j · (W_a h_i) with W_a h_i the key, H multiplications each. So at A = H, dot
// and general do the same work per score, and additive and concat the same multiplications plus A tanh — and a tanh
// costs several multiply-adds. That is the order of chapter 9's times (dot ≈ general < additive ≈ concat): the number
// of scores sets how the cost grows with T_x·T_y, the form of the score sets the factor in front.
#include "exercises/11/2.hpp"

namespace yours {

using namespace attend;
using namespace attend::models;

std::vector<Seq2seqConfig> decoder_configs(const Seq2seqConfig& base) {
  std::vector<Seq2seqConfig> configs;
  for (const std::string name : {"vanilla", "bahdanau", "luong-general", "luong-dot", "luong-concat"}) {
    Seq2seqConfig config = base;
    config.set_decoder(name);
    configs.push_back(config);
  }
  Seq2seqConfig bahdanau_general = base;
  bahdanau_general.decoder = DecoderKind::bahdanau;
  bahdanau_general.score = ScoreKind::general;
  configs.push_back(bahdanau_general);
  return configs;
}

std::size_t scores_per_step(const Seq2seqConfig& config, std::size_t B, std::size_t T_x, std::size_t T_y) {
  return config.decoder == DecoderKind::vanilla ? 0 : B * T_x * T_y;  // (11.1)
}

std::pair<std::size_t, std::size_t> work_per_score(const Seq2seqConfig& config) {
  if (config.decoder == DecoderKind::vanilla) return {0, 0};
  const std::size_t A = config.attention_size ? config.attention_size : config.hidden_size;
  switch (config.score) {
    case ScoreKind::additive:
    case ScoreKind::concat:
      return {A, A};  // v_aᵀ tanh(query part + key): A tanh, A products with v_a
    default:
      return {config.hidden_size, 0};  // s_j · key: H products
  }
}

std::vector<std::string> ranking() { return {"dot", "general", "additive", "concat"}; }

}  // namespace yours
