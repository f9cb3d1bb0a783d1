// Exercise 10.3 — your answer (the task: exercises/10/3.hpp). Check it with `scripts/exercise 10.3`.
// final_state_influence is chapter 4's computation for one source; context_influence and the prediction are yours.
#include "exercises/10/3.hpp"

#include <cmath>

#include "exercises/check.hpp"
#include "models/batch.hpp"

namespace yours {

using namespace attend;
using namespace attend::models;

double final_state_influence(Seq2seq<double>& model, const std::vector<std::int64_t>& source) {
  const Batch one = make_batch({source});
  Tape<double> tape;
  // (2.1)  x_i = E[w_i], copied into a leaf so that backward fills its gradient
  const Variable<double> x = tape.leaf(model.encoder.embedding(tape, one.source).value());
  const Variable<double> h_Tx = model.encoder.rnn.forward(x, one.source_lengths).h_final[0];  // (1, H)
  const std::size_t H = h_Tx.shape()[1], E = x.shape()[2];
  double sum_of_squares = 0;
  for (std::size_t k = 0; k < H; ++k) {
    // (4.3)  row k of J_1: one backward pass seeded with 1 at component k of h_Tx
    Tensor<double> seed(Shape{1, H});
    seed.at({0, k}) = 1;
    tape.backward(h_Tx, seed);
    for (std::size_t e = 0; e < E; ++e) sum_of_squares += std::pow(x.grad().at({0, 0, e}), 2);
  }
  return std::sqrt(sum_of_squares);  // (4.4)
}

double context_influence(Seq2seq<double>& model, const std::vector<std::int64_t>& source) {
  (void)model;
  (void)source;
  throw exercise::Todo("‖∂c_1/∂x_1‖_F: the same, through the decoder's first step");
}

double predicted_untrained_ratio(std::size_t short_length, std::size_t long_length) {
  (void)short_length;
  (void)long_length;
  throw exercise::Todo("your prediction for an untrained model");
}

}  // namespace yours
