// Exercise 6.3 — a bidirectional encoder under the score (docs/06-alignment-scores.md, "Exercises").
//
// Make chapter 2's encoder bidirectional, so that each annotation is h_i = [h→_i ; h←_i], of size K = 2H, while the
// decoder state s_{j−1} keeps its size Q = H (the library's decoders start from s_0 = h←_1, the backward direction's
// final state). Write
//   - bidirectional_config: the chapter's encoder configuration (tutorials/common.hpp's encoder_config: a GRU over a
//     vocabulary of T_x + 1 ids, 0 the padding, embeddings of size E, states of size H), made bidirectional;
//   - bidirectional_score: an additive score (6.1) that fits a state of size H and those annotations, attention size A.
//     Which of W_a (A, Q) and U_a (A, K) changes shape?
//   - saved_multiplications: the multiplications per sentence that computing U_a h_i once saves, the difference of the
//     two counts of (6.7), as a formula in T_x, T_y, Q, K and A. How does the saving change when K goes from H to 2H?
// The check builds the encoder and the score from your functions and runs the chapter's scores through them, and
// compares your formula with multiplications counted in loops that compute the scores both ways.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstddef>

#include "models/attention.hpp"
#include "nn/recurrent.hpp"

namespace yours {

// The chapter's encoder configuration (GRU; vocabulary T_x + 1, padding id 0; E, H), bidirectional.
attend::nn::EncoderConfig bidirectional_config(std::size_t T_x, std::size_t E, std::size_t H);
// e_ij = v_aᵀ tanh(W_a s_{j−1} + U_a h_i) for s_{j−1} of size H and h_i = [h→_i ; h←_i]; attention size A.
attend::models::AdditiveScore<double> bidirectional_score(std::size_t H, std::size_t A, attend::Rng& rng);
// (6.7): multiplications at every step minus multiplications once, per sentence.
double saved_multiplications(double T_x, double T_y, double Q, double K, double A);

}  // namespace yours
