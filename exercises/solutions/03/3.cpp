// Exercise 3.3 — a solution (the task: exercises/03/3.hpp).
//
// Greedy decoding answers argmax_v at each step, not argmax_y over whole outputs (3.6), so it can miss an output the
// model prefers: a search error, which a wider beam can repair. But on the toy task most of its errors are of the other
// kind — the target is less probable than the wrong output, as in the chapter's derailed example (−11.39 against
// −3.69): the model is wrong, and a beam, which only finds more probable outputs, never brings the target back there.
// The two cases are told apart by comparing two numbers the model gives, log p(y | x) by (3.1) for the target and for
// the greedy output. A beam of 5 recovers about half of the search errors of these small models; the rest need a wider
// beam or stay lost, since the target's prefix can fall out of the k best before its later tokens make up for it.
// (length_penalty 0 keeps the comparison to log p itself; a penalty α > 0 favours longer outputs.)
#include "exercises/03/3.hpp"

#include <algorithm>
#include <cmath>

namespace yours {

using namespace attend;
using namespace attend::models;

double log_p(Seq2seq<double>& model, const std::vector<std::int64_t>& source, const std::vector<std::int64_t>& target) {
  const Batch one = make_batch({source}, {target});
  Tape<double> tape;
  const Encoded<double> encoded = model.encode(tape, one.source, one.source_lengths);
  DecoderState<double> state = encoded.state;  // s_0 = h_Tx
  const std::size_t N = one.target_out.shape()[1];
  double sum = 0;
  for (std::size_t j = 0; j < N; ++j) {
    const Ids y_prev(Shape{1}, {one.target_in.data()[j]});  // the true y_{j-1}
    const DecoderStep<double> step = model.decoder->step(y_prev, state, encoded.memory);
    const Tensor<double> logits = model.decoder->logits(step.output).value();  // (1, V)
    const double* z = logits.data();
    const std::size_t V = logits.size();
    const double m = *std::max_element(z, z + V);
    double total = 0;
    for (std::size_t v = 0; v < V; ++v) total += std::exp(z[v] - m);
    sum += z[one.target_out.data()[j]] - m - std::log(total);  // log softmax at y_j
    state = step.state;
  }
  return sum;
}

std::vector<std::int64_t> beam(Seq2seq<double>& model, const std::vector<std::int64_t>& source, std::size_t k) {
  const Batch one = make_batch({source});
  SearchOptions options;
  options.beam_width = k;
  options.length_penalty = 0;
  return decode(model, one.source, one.source_lengths, options)[0].tokens;
}

std::string to_blame(Seq2seq<double>& model, const std::vector<std::int64_t>& source,
                     const std::vector<std::int64_t>& target) {
  const Batch one = make_batch({source});
  const Hypothesis greedy = greedy_decode(model, one.source, one.source_lengths)[0];
  if (greedy.tokens == target) return "none";
  return log_p(model, source, target) > greedy.log_prob ? "search" : "model";
}

}  // namespace yours
