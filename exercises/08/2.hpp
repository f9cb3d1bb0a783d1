// Exercise 8.2 — an LSTM in the attention decoder (docs/08-attention-decoder.md, "Exercises"; chapter 2's exercise 1
// is the warm-up).
//
// With config.cell = nn::CellKind::lstm the encoder and the decoder run chapter 2's LSTM instead of the GRU. Its state
// is a pair: the hidden state and a memory cell, written m here (chapter 2's c: in this chapter c_j is the context).
// Of the chapter's hand computation, (8.1)–(8.3) do not change, since the score reads s_{j−1} only; (8.4) becomes the
// LSTM step on the same input x = [E y_{j−1}; c_j], with the gates stacked in PyTorch's order i, f, g, o
// (W_ih (4H, E + H), W_hh (4H, H), b_ih and b_hh (4H,)):
//   i = σ(W_i x + b_ii + U_i s + b_hi)        f = σ(W_f x + b_if + U_f s + b_hf)
//   g = tanh(W_g x + b_ig + U_g s + b_hg)     o = σ(W_o x + b_io + U_o s + b_ho)
//   m′ = f ⊙ m + i ⊙ g                        s′ = o ⊙ tanh(m′)
// Write that step (lstm_step; the starter holds the GRU's (2.3)–(2.6), the lines that change), then use it twice:
//   decoder_step:  (8.4), s_j and m_j from y_{j−1}, c_j and the state (s_{j−1}, m_{j−1});
//   initial_state: what the DecoderState holds before step 1. s_0 = h_Tx is the last annotation, but m_0, the
//                  encoder's final memory cell, is in no annotation: run the encoder's LSTM by hand over the embedded
//                  source, from zero states, and return both.
// The model is in double, so the check compares with the library's cells, encode() and decoder->step() to 1e-10.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <array>
#include <cstdint>
#include <vector>

#include "models/seq2seq.hpp"

namespace yours {

// {s′, m′}: one step of `cell` on the input x from the state (s, m).
std::array<std::vector<double>, 2> lstm_step(const attend::nn::LstmCell<double>& cell, const std::vector<double>& x,
                                             const std::vector<double>& s, const std::vector<double>& m);
// {s_j, m_j} = f(s_{j−1}, m_{j−1}, [E y_{j−1}; c_j]): the decoder's cell, decoder.cells[0], with the target embedding.
std::array<std::vector<double>, 2> decoder_step(const attend::models::BahdanauDecoder<double>& decoder,
                                                std::int64_t y_prev, const std::vector<double>& c_j,
                                                const std::vector<double>& s_prev, const std::vector<double>& m_prev);
// {s_0, m_0}: the encoder's LSTM (encoder.rnn.cells[0][0], one layer, one direction) run over the embeddings of
// `source` (ids, encoder.embedding.W's rows) from s = m = 0; its final state.
std::array<std::vector<double>, 2> initial_state(const attend::nn::Encoder<double>& encoder,
                                                 const std::vector<std::int64_t>& source);

}  // namespace yours
