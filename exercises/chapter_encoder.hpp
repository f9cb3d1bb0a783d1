// The untrained encoder chapters 5, 6 and 7 share, as their programs make it (tutorials/common.hpp: encoder_config):
// chapter 2's GRU encoder over T_x = 4 words, E = H = 4, its weights drawn with seed 5. The checks of those chapters'
// exercises read their annotations h_1..h_4 from it.
#pragma once

#include "nn/recurrent.hpp"
#include "tutorials/common.hpp"

namespace attend::exercise {

inline nn::Encoder<double> chapter_encoder() {
  Rng rng(5);
  return nn::Encoder<double>(tutorial::encoder_config(4, 4, 4), rng);
}

}  // namespace attend::exercise
