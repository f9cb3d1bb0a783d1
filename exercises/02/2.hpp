// Exercise 2.2 — h_2 by hand (docs/02-encoder.md, "Exercises").
//
// Chapter 2 computes the GRU's first step by hand from h_0 = 0, where every U h term vanishes. Write the step for any
// state h, so that it gives h_2 from x_2 and h_1 as well — now U h_1 is no longer zero:
//   (2.3) r = σ(W_r x + b_ir + U_r h + b_hr)
//   (2.4) z = σ(W_z x + b_iz + U_z h + b_hz)
//   (2.5) n = tanh(W_n x + b_in + r ⊙ (U_n h + b_hn))
//   (2.6) h′ = (1 − z) ⊙ n + z ⊙ h
// with plain doubles, from the cell's weights: rows [0,H) of W_ih (3H, E), W_hh (3H, H), b_ih and b_hh belong to r,
// [H,2H) to z, [2H,3H) to n; U_gate h is Σ_l W_hh[gate·H + k, l] h_l. The starter holds the chapter's code, right at
// h = 0 only. The check runs your step from h_0 = 0 and then from your own h_1, against the nn::GruCell loop of the
// chapter, and from other states.
// (No include guard: the check includes this file twice, once for your functions, once for the reference solution's.)
#include <vector>

#include "nn/recurrent.hpp"

namespace yours {

// h′ of one GRU step from x (E numbers) and h (H numbers), by (2.3)–(2.6) with plain doubles.
std::vector<double> gru_step_by_hand(const attend::nn::GruCell<double>& gru, const std::vector<double>& x,
                                     const std::vector<double>& h);

}  // namespace yours
