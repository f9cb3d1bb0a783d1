// Exercise 10.3 — chapter 4's influence for the attention model (docs/10-attention-fixes-the-bottleneck.md,
// "Exercises"; docs/04-bottleneck.md measures it for the vanilla model).
//
// Chapter 4 measured how far the first symbol moves c = h_Tx: the influence ‖∂h_Tx/∂x_1‖_F of (4.3)–(4.4), x_1 the
// embedding of the first source token, fading geometrically as T_x grows. With attention, the context of the first
// output step, c_1 = Σ_i α_i1 h_i (10.4), contains α_11 h_1, and h_1 is one encoder step away from x_1. Write both
// influences for one source, as chapter 4 computes a Jacobian: the embeddings copied into a leaf (tape.leaf of
// encoder.embedding(tape, ids).value()), the encoder's recurrent stack run on it (encoder.rnn.forward), and one
// backward pass per component of the output, seeded with 1 there (tape.backward(output, seed)), giving one row of the
// Jacobian in the leaf's gradient at position 1:
//   final_state_influence  ‖∂h_Tx/∂x_1‖_F, h_Tx the encoder's final state (the vanilla model's c);
//   context_influence      ‖∂c_1/∂x_1‖_F of a Bahdanau model: from the encoder's output, the decoder's memory, its
//                          initial state and its first step (reading <sos>); c_1 is the columns H … H + A − 1 of the
//                          step's output [s_1; c_1; E y_0], A the size of an annotation h_i;
//   predicted_untrained_ratio  your prediction of context_influence at T_x = long_length divided by context_influence
//                          at T_x = short_length, for an untrained model, whose scores e_i1 are all nearly equal. What
//                          is α_11 then, and so how large is the α_11 h_1 part of c_1?
// The check compares the influences with finite differences and with the reference solution, tests your prediction
// on three untrained models, then trains the chapter's two models scaled down (H = 16, 300 steps, sources of 5 to 10
// symbols) from three seeds and measures, with your functions, both influences at T_x = 5 and at T_x = 40.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <cstdint>
#include <vector>

#include "models/seq2seq.hpp"

namespace yours {

// source: the token ids x_1 … x_Tx of one source (no <sos>, no <eos>).
double final_state_influence(attend::models::Seq2seq<double>& model, const std::vector<std::int64_t>& source);
double context_influence(attend::models::Seq2seq<double>& model, const std::vector<std::int64_t>& source);
double predicted_untrained_ratio(std::size_t short_length, std::size_t long_length);

}  // namespace yours
