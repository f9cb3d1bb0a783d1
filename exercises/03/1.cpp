// Exercise 3.1 — your answer (the task: exercises/03/1.hpp). Check it with `scripts/exercise 3.1`.
#include "exercises/03/1.hpp"

#include "exercises/check.hpp"

namespace yours {

using namespace attend;
using namespace attend::models;

std::size_t encoder_steps(sequences::Task task, std::size_t T_x, std::size_t j) {
  (void)task;
  (void)T_x;
  (void)j;
  throw exercise::Todo("the encoder steps between x_i and c");
}

std::vector<double> accuracy_by_position(Seq2seq<float>& model, const std::vector<sequences::Example>& examples) {
  std::vector<std::size_t> all(examples.size());
  for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
  const Batch batch = sequences::batch_of(examples, all);  // target_out = y_1 … y_Tx <eos>
  // TODO: the teacher-forced logits (B, T, V) of the batch (model.forward, on a tape without gradients), then the
  // share right at each position j
  (void)model;
  (void)batch;
  throw exercise::Todo("the teacher-forced accuracy at each position");
}

}  // namespace yours
