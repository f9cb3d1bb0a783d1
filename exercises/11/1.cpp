// Exercise 11.1 — your answer (the task: exercises/11/1.hpp). Check it with `scripts/exercise 11.1`.
#include "exercises/11/1.hpp"

#include "exercises/check.hpp"

namespace yours {

using namespace attend;
using namespace attend::models;

std::size_t encoder_multiply_adds(const Seq2seqConfig& config) {
  (void)config;
  throw exercise::Todo("the encoder's multiply-adds per source word");
}

std::size_t attention_multiply_adds(const Seq2seqConfig& config) {
  (void)config;
  throw exercise::Todo("the keys' multiply-adds per source word");
}

std::size_t scores_per_word(const Seq2seqConfig& config, std::size_t T_y) {
  (void)config;
  (void)T_y;
  throw exercise::Todo("the scores e_ij per source word");
}

std::string slope_the_cell_changes() { return "?"; }

}  // namespace yours
