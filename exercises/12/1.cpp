// Exercise 12.1 — your answer (the task: exercises/12/1.hpp). Check it with `scripts/exercise 12.1`.
#include "exercises/12/1.hpp"

#include "exercises/check.hpp"

namespace yours {

using namespace attend;
using namespace attend::models;

std::size_t output_features(const Seq2seqConfig& config) {
  (void)config;
  throw exercise::Todo("F, the width of what the output layer reads");
}

Seq2seqConfig widened_luong(const Seq2seqConfig& bahdanau) {
  Seq2seqConfig luong = bahdanau;
  luong.set_decoder("luong-general");
  // TODO: h̃_j as wide as the Bahdanau decoder's output features
  return luong;
}

std::size_t equal_parameter_hidden(const Seq2seqConfig& config, std::size_t parameters) {
  (void)config;
  (void)parameters;
  throw exercise::Todo("the H of the closest parameter count");
}

}  // namespace yours
