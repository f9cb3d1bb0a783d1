// Exercise 3.1 — a solution (the task: exercises/03/1.hpp).
//
// x_i enters the encoder at h_i and reaches c = h_Tx after T_x − i + 1 states, so y_j is T_x − j + 1 encoder steps
// from its source under copy and j under reverse. Reversing brings the first outputs next to their sources — y_1 = x_Tx
// is in the last state itself — and sends the last ones to the far end. The measurement agrees with the first half:
// y_1 is right far more often under reverse (three times in four, against one in two to two in three under copy), and
// the early positions gain most. The second half is weaker than the count suggests: the last positions lose little or
// nothing, and the mean accuracy over all positions rises. Two things the count leaves out are at work. The decoder
// writes its outputs in order, so what it gets right early helps every later step; and, with the encoder's recency
// (chapter 4), the start of the target is where a model learns first — reversing makes that start easy, the "many
// short-term dependencies" Sutskever et al. credit for their gain. (The vanilla decoder reads c at every step, so j
// adds no decoder steps between x_i and y_j; with c read only at s_0, y_j would be j more steps away, and reversing
// would shorten the total for the first half of the outputs only.)
#include "exercises/03/1.hpp"

namespace yours {

using namespace attend;
using namespace attend::models;

std::size_t encoder_steps(sequences::Task task, std::size_t T_x, std::size_t j) {
  const std::size_t i = task == sequences::Task::copy ? j : T_x + 1 - j;  // the source position y_j copies
  return T_x - i + 1;                                                     // the states h_i, …, h_Tx
}

std::vector<double> accuracy_by_position(Seq2seq<float>& model, const std::vector<sequences::Example>& examples) {
  std::vector<std::size_t> all(examples.size());
  for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
  const Batch batch = sequences::batch_of(examples, all);  // target_out = y_1 … y_Tx <eos>
  Tape<float> tape;
  NoGradGuard<float> no_grad(tape);
  const Tensor<float> logits = model.forward(tape, batch).logits.value();  // (B, T, V), step j read the true y_{j-1}
  const std::size_t B = logits.shape()[0], T = logits.shape()[1], V = logits.shape()[2];
  std::vector<double> right(T, 0.0);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t j = 0; j < T; ++j) {
      const float* z = logits.data() + (b * T + j) * V;
      std::size_t best = static_cast<std::size_t>(eos_id);  // never <pad> or <sos>
      for (std::size_t v = best; v < V; ++v) {
        if (z[v] > z[best]) best = v;
      }
      right[j] += static_cast<std::int64_t>(best) == batch.target_out.data()[b * T + j] ? 1.0 : 0.0;
    }
  }
  for (double& r : right) r /= static_cast<double>(B);
  return right;
}

}  // namespace yours
