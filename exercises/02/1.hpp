// Exercise 2.1 — the hand-built loop with an LSTM cell (docs/02-encoder.md, "Exercises").
//
// Replace chapter 2's nn::GruCell by nn::LstmCell. The LSTM carries a pair from step to step, the hidden state h and
// the memory cell (written m here, so that c keeps its meaning of (2.7), the context vector), both (1, H), starting
// from h_0 = m_0 = 0. Three functions:
//   lstm_loop          (2.1) x_i = E[w_i], then (2.2) with a pair for a state: (h_i, m_i) = f(x_i, (h_{i−1}, m_{i−1})),
//                      i = 1 … T_x, with the cell given; returns every (h_i, m_i) (LstmState: .h and .c, the cell).
//   context            (2.7) the fixed context vector c of the basic encoder-decoder, from those states (H numbers).
//   lstm_step_by_hand  one step with plain doubles from the cell's weights, the LSTM's equations in place of the
//                      GRU's (2.3)–(2.6):
//                        i = σ(W_i x + b_ii + U_i h + b_hi)       f = σ(W_f x + b_if + U_f h + b_hf)
//                        g = tanh(W_g x + b_ig + U_g h + b_hg)    o = σ(W_o x + b_io + U_o h + b_ho)
//                        m′ = f ⊙ m + i ⊙ g,   h′ = o ⊙ tanh(m′)
//                      The gates are stacked as the GRU's are: rows [0,H) of W_ih (4H, E), W_hh (4H, H), b_ih and b_hh
//                      belong to i, [H,2H) to f, [2H,3H) to g, [3H,4H) to o.
// The check compares your loop with the library's nn::Encoder (same weights), your context with what the encoder hands
// a decoder, and your step with the cell's own, on the chapter's sentence and on others.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <array>
#include <cstdint>
#include <vector>

#include "nn/recurrent.hpp"

namespace yours {

// (h_i, m_i) for i = 1 … T_x of the sentence `ids`, each (1, H), recorded on `tape` from h_0 = m_0 = 0.
std::vector<attend::LstmState<double>> lstm_loop(attend::Tape<double>& tape, attend::nn::Embedding<double>& embed,
                                                 attend::nn::LstmCell<double>& lstm,
                                                 const std::vector<std::int64_t>& ids);
// (2.7) the context vector c, read from the states lstm_loop returned.
std::vector<double> context(const std::vector<attend::LstmState<double>>& states);
// {h′, m′} of one LSTM step from x (E numbers), h and m (H numbers each), with plain doubles.
std::array<std::vector<double>, 2> lstm_step_by_hand(const attend::nn::LstmCell<double>& lstm,
                                                     const std::vector<double>& x, const std::vector<double>& h,
                                                     const std::vector<double>& m);

}  // namespace yours
