// Exercise 3.3 — your answer (the task: exercises/03/3.hpp). Check it with `scripts/exercise 3.3`.
#include "exercises/03/3.hpp"

#include <cmath>

#include "exercises/check.hpp"

namespace yours {

using namespace attend;
using namespace attend::models;

double log_p(Seq2seq<double>& model, const std::vector<std::int64_t>& source, const std::vector<std::int64_t>& target) {
  // One example as a batch: source (1, T_x), target_in = <sos> y_1 … y_n, target_out = y_1 … y_n <eos>
  const Batch one = make_batch({source}, {target});
  // TODO: (3.1) as chapter 3's product rule: encode, then one decoder step per column j of one.target_in, adding
  // log p(y_j | y_<j, c) = log softmax(logits)[y_j] with y_j = one.target_out[j]
  (void)model;
  (void)one;
  throw exercise::Todo("log p(y | x) by the product rule (3.1)");
}

std::vector<std::int64_t> beam(Seq2seq<double>& model, const std::vector<std::int64_t>& source, std::size_t k) {
  (void)model;
  (void)source;
  (void)k;
  throw exercise::Todo("the beam search's output");
}

std::string to_blame(Seq2seq<double>& model, const std::vector<std::int64_t>& source,
                     const std::vector<std::int64_t>& target) {
  (void)model;
  (void)source;
  (void)target;
  throw exercise::Todo("who is to blame");
}

}  // namespace yours
