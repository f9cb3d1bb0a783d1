// Exercise 3.2 — your answer (the task: exercises/03/2.hpp). Check it with `scripts/exercise 3.2`.
// This is chapter 3's teacher forcing run one step at a time: every step reads the true y_{j-1}, whatever p says.
#include "exercises/03/2.hpp"

#include "ops/fused.hpp"

namespace yours {

using namespace attend;
using namespace attend::models;

Variable<float> scheduled_sampling_loss(Seq2seq<float>& model, Tape<float>& tape, const Batch& batch, double p,
                                        Rng& coin) {
  (void)p;
  (void)coin;
  Encoded<float> encoded = model.encode(tape, batch.source, batch.source_lengths);
  DecoderState<float> s_prev = encoded.state;  // s_0 = h_Tx
  const std::size_t B = batch.size(), T = batch.target_in.shape()[1];
  std::vector<Variable<float>> logits;  // one (B, V) per step
  for (std::size_t j = 0; j < T; ++j) {
    Ids y_prev(Shape{B});
    for (std::size_t b = 0; b < B; ++b) y_prev.data()[b] = batch.target_in.data()[b * T + j];  // the true y_{j-1}
    const DecoderStep<float> step = model.decoder->step(y_prev, s_prev, encoded.memory);
    logits.push_back(model.decoder->logits(step.output));
    s_prev = step.state;
  }
  // (3.5)  L = -(1/N) Σ log p(y_j | …) over the real target tokens: (B, T, V) against target_out, <pad> left out
  return cross_entropy(stack(logits, 1), batch.target_out, pad_id);
}

}  // namespace yours
