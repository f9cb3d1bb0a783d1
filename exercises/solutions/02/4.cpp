// Exercise 2.4 — a solution (the task: exercises/02/4.hpp).
//
// With the lengths {6, 6} nothing is masked: sentence 2 is "on the mat <pad> <pad> <pad>" to the encoder. Padding's
// embedding row is 0, so x = 0 at those steps, but a step with x = 0 is not the identity: the GRU still computes
// r, z and n from b_ih + U h + b_hh, and h′ = (1 − z) ⊙ n + z ⊙ h moves h towards n. Three such steps pull h_Tx away
// from where "on the mat" left it, so the context (2.7) of the short sentence depends on how long its neighbour in the
// batch was — the same sentence would be encoded differently in another batch. The lengths tell the encoder to carry
// the state over unchanged at padded steps (h_t = m_t h_new + (1 − m_t) h_{t−1}, m_t = 0), which gives exactly the
// state of the sentence run alone.
#include "exercises/02/4.hpp"

namespace yours {

using namespace attend;

std::vector<double> final_state_reading_padding(nn::Encoder<double>& encoder, const std::vector<std::int64_t>& sentence,
                                                std::size_t pads) {
  const std::size_t T = sentence.size() + pads, H = encoder.rnn.config().hidden_size;
  Tape<double> tape;
  Ids tokens(Shape{1, T});  // padding id 0 after the sentence
  for (std::size_t i = 0; i < sentence.size(); ++i) tokens.data()[i] = sentence[i];
  const Variable<double> x = encoder.embedding(tape, tokens);  // (2.1), (1, T, E)
  LstmState<double> state{tape.constant(Tensor<double>(Shape{1, H})), tape.constant(Tensor<double>(Shape{1, H}))};
  for (std::size_t i = 0; i < T; ++i) {
    LstmState<double> next = nn::cell_forward(encoder.rnn.cells[0][0], select(x, 1, i), state);  // (2.2)
    if (next.c.empty()) next.c = state.c;  // a GRU or RNN has no memory cell: keep the zeros
    state = next;
  }
  const Tensor<double>& h = state.h.value();
  return std::vector<double>(h.data(), h.data() + h.size());
}

std::vector<std::int64_t> true_lengths(const Ids& batch) {
  const std::size_t B = batch.shape()[0], T = batch.shape()[1];
  std::vector<std::int64_t> lengths;
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t length = 0;
    while (length < T && batch.data()[b * T + length] != 0) ++length;
    lengths.push_back(static_cast<std::int64_t>(length));
  }
  return lengths;
}

}  // namespace yours
