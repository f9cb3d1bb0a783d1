// Exercise 6.3 — a solution (the task: exercises/06/3.hpp).
//
// Only U_a changes shape, from (A, H) to (A, 2H): it is the weight that multiplies h_i, whose size doubled. W_a still
// multiplies the decoder state, of size Q = H, and v_a the hidden layer, of size A, which is free and stays. Of the
// two counts of (6.7), T_y (A·Q + T_x·A·K + T_x·A) and T_x·A·K + T_y (A·Q + T_x·A), only the keys' term differs:
// the saving is (T_y − 1)·T_x·A·K, linear in K, so K = 2H doubles it: a bidirectional encoder makes the
// precomputation worth twice as much. With T_y = 1 there is nothing to save: the keys are computed once either way.
#include "exercises/06/3.hpp"

namespace yours {

using namespace attend;

nn::EncoderConfig bidirectional_config(std::size_t T_x, std::size_t E, std::size_t H) {
  nn::EncoderConfig config;
  config.vocab_size = T_x + 1;
  config.embedding_dim = E;
  config.padding_id = 0;
  config.rnn.cell = nn::CellKind::gru;
  config.rnn.hidden_size = H;
  config.rnn.bidirectional = true;  // h_i = [h→_i ; h←_i]: (1, T_x, 2H)
  return config;
}

models::AdditiveScore<double> bidirectional_score(std::size_t H, std::size_t A, Rng& rng) {
  // W_a: (A, H) on s_{j−1}, as before; U_a: (A, 2H) on h_i = [h→_i ; h←_i]
  return models::AdditiveScore<double>(/*query_size=*/H, /*annotation_size=*/2 * H, /*attention_size=*/A, rng);
}

double saved_multiplications(double T_x, double T_y, double Q, double K, double A) {
  (void)Q;  // W_a s_{j−1} is computed at every step either way
  return (T_y - 1) * T_x * A * K;
}

}  // namespace yours
