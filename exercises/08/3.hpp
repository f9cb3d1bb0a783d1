// Exercise 8.3 — ten times fewer pairs, the same number of steps (docs/08-attention-decoder.md, "Exercises").
//
// Train on a tenth of the pairs for ten times as many passes: the number of steps stays the same, but each pair is
// seen ten times as often. Which fields of the date suffer? The check runs this experiment scaled down to seconds:
// chapter 8's model with E = 12 and H = 24, trained by models::train for 300 steps of 32 dates (Adam 8·10⁻³), once on
// 2,500 pairs (about 4 passes) and once on 250 of them (about 38 passes), from three seeds, then measured on 200 test
// dates it never saw. You write the measurement and two predictions:
//   field_losses: the teacher-forced loss (8.6) split by field. From the logits (B, T, V) of model.forward on a batch
//                 of dates, the mean of −log p(y_j | y_<j, x) over the year's characters (y_1..y_4 of "2083-06-22"),
//                 over the month's (y_6, y_7) and over the day's (y_9, y_10), every date of the batch included. The
//                 dashes and <eos> belong to no field. p is the softmax of the logits of step j (chapter 3's (3.3)).
//   fewer_pairs_lower_training_loss: at the end of training, is the loss on its own training batches (the mean of the
//                 last 30 steps) lower for the 250-pair model than for the 2,500-pair one?
//   least_hurt_field: "year", "month" or "day": whose held-out loss (your field_losses on the test dates) grows the
//                 least from the 2,500-pair model to the 250-pair one, on the mean of the three seeds?
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <array>
#include <string>

#include "models/seq2seq.hpp"

namespace yours {

// {L_year, L_month, L_day}: the mean −log p(y_j | y_<j, x) over each field's characters, from logits (B, T, V) of
// model.forward(tape, batch) and the targets y_j in batch.target_out (B, T).
std::array<double, 3> field_losses(const attend::Tensor<float>& logits, const attend::models::Batch& batch);
// Your prediction: true if the 250-pair model ends with the lower training loss.
bool fewer_pairs_lower_training_loss();
// Your prediction: "year", "month" or "day".
std::string least_hurt_field();

}  // namespace yours
