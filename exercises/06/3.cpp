// Exercise 6.3 — your answer (the task: exercises/06/3.hpp). Check it with `scripts/exercise 6.3`.
// The first two functions are the chapter's (unidirectional) set-up: make them fit a bidirectional encoder.
#include "exercises/06/3.hpp"

#include "exercises/check.hpp"

namespace yours {

using namespace attend;

nn::EncoderConfig bidirectional_config(std::size_t T_x, std::size_t E, std::size_t H) {
  nn::EncoderConfig config;
  config.vocab_size = T_x + 1;
  config.embedding_dim = E;
  config.padding_id = 0;
  config.rnn.cell = nn::CellKind::gru;
  config.rnn.hidden_size = H;
  return config;
}

models::AdditiveScore<double> bidirectional_score(std::size_t H, std::size_t A, Rng& rng) {
  return models::AdditiveScore<double>(/*query_size=*/H, /*annotation_size=*/H, /*attention_size=*/A, rng);
}

double saved_multiplications(double T_x, double T_y, double Q, double K, double A) {
  (void)T_x;
  (void)T_y;
  (void)Q;
  (void)K;
  (void)A;
  throw attend::exercise::Todo("the saving of (6.7) as a formula");
}

}  // namespace yours
