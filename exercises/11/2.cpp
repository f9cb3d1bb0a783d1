// Exercise 11.2 — your answer (the task: exercises/11/2.hpp). Check it with `scripts/exercise 11.2`.
#include "exercises/11/2.hpp"

#include "exercises/check.hpp"

namespace yours {

using namespace attend;
using namespace attend::models;

std::vector<Seq2seqConfig> decoder_configs(const Seq2seqConfig& base) {
  std::vector<Seq2seqConfig> configs;
  for (const std::string name : {"vanilla", "bahdanau", "luong-general"}) {
    Seq2seqConfig config = base;
    config.set_decoder(name);
    configs.push_back(config);
  }
  // TODO: luong-dot, luong-concat, and bahdanau with the general score
  return configs;
}

std::size_t scores_per_step(const Seq2seqConfig& config, std::size_t B, std::size_t T_x, std::size_t T_y) {
  (void)config;
  (void)B;
  (void)T_x;
  (void)T_y;
  throw exercise::Todo("(11.1) for one training step");
}

std::pair<std::size_t, std::size_t> work_per_score(const Seq2seqConfig& config) {
  (void)config;
  throw exercise::Todo("the multiplications and tanh of one e_ij");
}

std::vector<std::string> ranking() { return {}; }

}  // namespace yours
