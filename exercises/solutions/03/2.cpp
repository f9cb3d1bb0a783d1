// Exercise 3.2 — a solution (the task: exercises/03/2.hpp).
//
// The only change to teacher forcing is where y_prev comes from: after each step, remember every row's argmax; before
// the next, flip a coin per row. The fed token is a constant — no gradient flows through the choice (argmax has
// none), as in Bengio et al. — so L still differentiates as teacher forcing does, through the steps' states. At p = 1
// the steps read exactly what greedy decoding would feed them, until the target ends: the training loss then measures
// free running. Trained with p rising to ½, the small models of the check show what the chapter's question asks: free
// running's accuracy comes closer to teacher forcing's, and its loss falls. But at this scale most of the gap closes
// from above — teacher-forced accuracy drops, since the model trains less on true prefixes — not by free running
// getting better; which of the two dominates depends on the model, the task and the schedule (Bengio et al. raise p
// slowly, over a long training, for that reason).
#include "exercises/03/2.hpp"

#include "ops/fused.hpp"

namespace yours {

using namespace attend;
using namespace attend::models;

Variable<float> scheduled_sampling_loss(Seq2seq<float>& model, Tape<float>& tape, const Batch& batch, double p,
                                        Rng& coin) {
  Encoded<float> encoded = model.encode(tape, batch.source, batch.source_lengths);
  DecoderState<float> s_prev = encoded.state;  // s_0 = h_Tx
  const std::size_t B = batch.size(), T = batch.target_in.shape()[1];
  std::vector<std::int64_t> own(B, sos_id);  // ŷ_{j-1} of every row: what step j - 1 gave its largest logit to
  std::vector<Variable<float>> logits;       // one (B, V) per step
  for (std::size_t j = 0; j < T; ++j) {
    Ids y_prev(Shape{B});
    for (std::size_t b = 0; b < B; ++b) {
      const std::int64_t truth = batch.target_in.data()[b * T + j];
      const bool sample = j > 0 && truth != pad_id && coin.uniform() < p;
      y_prev.data()[b] = sample ? own[b] : truth;
    }
    const DecoderStep<float> step = model.decoder->step(y_prev, s_prev, encoded.memory);
    logits.push_back(model.decoder->logits(step.output));
    const Tensor<float>& z = logits.back().value();  // (B, V)
    const std::size_t V = z.shape()[1];
    for (std::size_t b = 0; b < B; ++b) {
      std::size_t best = static_cast<std::size_t>(eos_id);  // never <pad> or <sos>
      for (std::size_t v = best; v < V; ++v) {
        if (z.data()[b * V + v] > z.data()[b * V + best]) best = v;
      }
      own[b] = static_cast<std::int64_t>(best);
    }
    s_prev = step.state;
  }
  return cross_entropy(stack(logits, 1), batch.target_out, pad_id);
}

}  // namespace yours
