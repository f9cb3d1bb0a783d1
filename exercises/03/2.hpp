// Exercise 3.2 — scheduled sampling (docs/03-encoder-decoder.md, "Exercises").
//
// Training feeds step j the true y_{j−1} (teacher forcing, (3.5)); inference feeds it the model's own ŷ_{j−1} (3.6).
// Scheduled sampling (Bengio et al., 2015) trains on a mix: step j reads the model's own ŷ_{j−1} with probability p
// and the true y_{j−1} otherwise. Write the loss of one batch with the steps run yourself instead of model.loss:
//   scheduled_sampling_loss  (3.5) L = −(1/N) Σ_{b, j} log p(y_j | …) over the N real target tokens of the batch
//                            (batch.target_out ≠ <pad>), where step 1 reads <sos>, and step j ≥ 2 of row b reads
//                            ŷ_{j−1} — the token to which step j − 1 of row b gave its largest logit, among those a
//                            decoder may output (never <pad> or <sos>, ids 0 and 1) — when coin.uniform() < p, and
//                            the true y_{j−1} = batch.target_in[b, j] otherwise. Where target_in is <pad>, read it as
//                            it is: those steps are past the row's end and are left out of L.
// The starter is chapter 3's teacher-forced steps, one at a time: right at p = 0. The check compares your L and its
// gradient with model.loss at p = 0 and with the reference solution at p = 1, on padded batches; then it trains small
// models with p = 0 and with p rising from 0 to ½ (three seeds each) and compares teacher forcing with free running.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include "models/seq2seq.hpp"

namespace yours {

// The mean cross-entropy of batch.target_out when each step j ≥ 2 reads the model's own previous output with
// probability p (one coin.uniform() < p per row and step).
attend::Variable<float> scheduled_sampling_loss(attend::models::Seq2seq<float>& model, attend::Tape<float>& tape,
                                                const attend::models::Batch& batch, double p, attend::Rng& coin);

}  // namespace yours
