// Exercise 11.2 — every score in the timing loop: equal counts, unequal work (docs/11-attention-costs.md,
// "Exercises"; chapter 6 counts the additive score's multiplications, chapter 9 compares the four).
//
// Add luong-dot, luong-concat and a Bahdanau decoder with the general score (config.decoder = DecoderKind::bahdanau;
// config.score = ScoreKind::general) to the chapter's three decoders. Do the counts of (11.1) stay equal? And why do
// the times per training step differ between decoders that compute the same number of scores? Write:
//   decoder_configs  the six configurations of the timing loop, in this order: vanilla, bahdanau, luong-general,
//                    luong-dot, luong-concat, bahdanau with the general score; each a copy of `base` with only the
//                    decoder and its score changed;
//   scores_per_step  N_scores of (11.1) for one training step of a batch of B sentences (0 for vanilla);
//   work_per_score   chapter 6's count for one score e_ij, with the keys precomputed (chapter 6's "once"):
//                    {multiplications, tanh evaluations}. What is left per (i, j) once the part in h_i is a key and
//                    the part in the query is computed once per step? (For dot and general, the query is s_j itself.)
//   ranking          the four score kinds ("additive", "dot", "general", "concat") from the least work per score to the
//                    most, at A = H, a tanh counting for more than a multiplication (chapter 9 measures why).
// The check counts the scores of every model with the chapter's CountingScore, and counts the multiplications and
// tanh of each score in plain loops that must give the library's e_ij.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <string>
#include <utility>
#include <vector>

#include "models/seq2seq.hpp"

namespace yours {

std::vector<attend::models::Seq2seqConfig> decoder_configs(const attend::models::Seq2seqConfig& base);
std::size_t scores_per_step(const attend::models::Seq2seqConfig& config, std::size_t B, std::size_t T_x,
                            std::size_t T_y);
// {multiplications, tanh} per e_ij; {0, 0} for vanilla.
std::pair<std::size_t, std::size_t> work_per_score(const attend::models::Seq2seqConfig& config);
std::vector<std::string> ranking();

}  // namespace yours
