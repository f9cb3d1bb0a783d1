// The untrained encoder chapters 5, 6 and 7 share, as their programs make it (tutorials/common.hpp: encoder_config):
// chapter 2's GRU encoder over T_x = 4 words, E = H = 4, its weights drawn with seed 5. The checks of those chapters'
// exercises read their annotations h_1..h_4 from it (chapter_annotations()).
#pragma once

#include "nn/recurrent.hpp"
#include "tutorials/common.hpp"

namespace attend::exercise {

inline nn::Encoder<double> chapter_encoder() {
  Rng rng(5);
  return nn::Encoder<double>(tutorial::encoder_config(4, 4, 4), rng);
}

// The chapter's annotations h_1..h_4: that encoder over ids 1..4, (1, 4, 4).
inline Tensor<double> chapter_annotations() {
  nn::Encoder<double> encoder = chapter_encoder();
  Tape<double> tape;
  return encoder(tape, Ids(Shape{1, 4}, {1, 2, 3, 4}), {4}).outputs.value();
}

}  // namespace attend::exercise
