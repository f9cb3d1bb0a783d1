// Exercise 4.3 — the untrained LSTM encoder's memory of x_1 (docs/04-bottleneck.md, "Exercises").
//
// Chapter 4 finds that the untrained GRU encoder forgets x_1 geometrically: each 5 more tokens divide ‖∂h_Tx/∂x_1‖_F
// by about 10. Use LSTM cells (config.rnn.cell = nn::CellKind::lstm): is that influence still geometric in T_x? The
// LSTM's memory cell m′ = f ⊙ m + i ⊙ g passes gradients through the forget gate f alone, so the memory cell's path by
// itself would multiply ∂/∂m by f at every step. Three functions:
//   influence_of_x1    (4.3)–(4.4): the mean over a batch of sources of one length of ‖J_1‖_F, J_1 = ∂h_Tx/∂x_1
//                      (H, E), h_Tx the encoder's final hidden state (h_final[0], not the memory cell). The starter
//                      holds the chapter's `jacobians`, which works for any cell.
//   decay_per_token    ρ of the least-squares line log ‖J_1‖ ≈ a + T_x · log ρ through the points (T_x, influence):
//                      the factor by which one more token multiplies the influence.
//   mean_forget_gate   f̄, the mean of the forget gate f = σ(W_f x + b_if + U_f h + b_hf) over every step, unit and
//                      source of a batch run through an LSTM encoder's one layer from h_0 = m_0 = 0 (gate rows [H, 2H)
//                      of W_ih, W_hh, b_ih, b_hh).
// The check compares them with finite differences, exact geometric data and the reference solution, then measures
// three untrained LSTM encoders at T_x = 5, 10, …, 30: is the decay still a straight line in log scale, and how does
// ρ compare with f̄?
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <vector>

#include "nn/recurrent.hpp"

namespace yours {

// The mean over the B sources (B, T_x) of ‖∂h_Tx/∂x_1‖_F, h_Tx = the encoder's final hidden state.
double influence_of_x1(attend::nn::Encoder<double>& encoder, const attend::Ids& sources);
// ρ = exp(slope) of the least-squares fit of log(influence) against T_x (at least two lengths).
double decay_per_token(const std::vector<double>& lengths, const std::vector<double>& influence);
// f̄ over every step t, unit k and source b of an LSTM encoder (one layer, one direction) run over `sources`.
double mean_forget_gate(attend::nn::Encoder<double>& encoder, const attend::Ids& sources);

}  // namespace yours
