// Exercise 2.1 — your answer (the task: exercises/02/1.hpp). Check it with `scripts/exercise 2.1`.
#include "exercises/02/1.hpp"

#include <cmath>

#include "exercises/check.hpp"

namespace yours {

using namespace attend;

std::vector<LstmState<double>> lstm_loop(Tape<double>& tape, nn::Embedding<double>& embed, nn::LstmCell<double>& lstm,
                                         const std::vector<std::int64_t>& ids) {
  const std::size_t T_x = ids.size();
  // (2.1)  x_i = E[w_i]: the embeddings of all tokens, (1, T_x, E)
  Ids tokens(Shape{1, T_x});
  for (std::size_t i = 0; i < T_x; ++i) tokens.data()[i] = ids[i];
  const Variable<double> x = embed(tape, tokens);
  // TODO: (2.2) with the LSTM: start from h_0 = m_0 = 0 (an LstmState of two (1, H) constants), then one lstm(x_i,
  // state) per token, keeping every state
  (void)x;
  (void)lstm;
  throw exercise::Todo("the LSTM loop (2.2)");
}

std::vector<double> context(const std::vector<LstmState<double>>& states) {
  (void)states;
  throw exercise::Todo("the context vector c (2.7)");
}

std::array<std::vector<double>, 2> lstm_step_by_hand(const nn::LstmCell<double>& lstm, const std::vector<double>& x,
                                                     const std::vector<double>& h, const std::vector<double>& m) {
  const std::size_t H = lstm.hidden_size(), E = lstm.input_size();
  // The input half of a gate's pre-activation, (W_gate x + b_i,gate)_k, as chapter 2 computes it for the GRU; the
  // LSTM's gate 0 is i, 1 is f, 2 is g, 3 is o.
  auto gate_input = [&](std::size_t gate, std::size_t k) {
    double s = lstm.b_ih.value.data()[gate * H + k];
    for (std::size_t e = 0; e < E; ++e) s += lstm.W_ih.value.at({gate * H + k, e}) * x[e];
    return s;
  };
  // TODO: add the state half (U_gate h + b_h,gate), the four gates, then m′ = f ⊙ m + i ⊙ g and h′ = o ⊙ tanh(m′)
  (void)gate_input;
  (void)h;
  (void)m;
  throw exercise::Todo("one LSTM step by hand");
}

}  // namespace yours
