// The reference each fused op of fused.hpp equals: the same computation written with the reference engine's ops
// (autograd/ops.hpp), one small node per formula, as the chapters write it. Nothing here is fast; it is what the fast
// ops are tested against (tests/fast/), and what a reader reads to see what a fused op computes.
#pragma once

#include "fast/fused.hpp"

namespace attend {

// The GRU step from the gate pre-activations gx = x W_ihᵀ + b_ih and gh = h W_hhᵀ + b_hh (batch, 3H), gates r, z, n in
// PyTorch's order, and h (batch, H) → h' (batch, H). gru_cell(gx, gh, h) equals it.
template <class T>
Variable<T> gru_step_composed(const Variable<T>& gx, const Variable<T>& gh, const Variable<T>& h);
// The LSTM step from gx, gh (batch, 4H), gates i, f, g, o, and c (batch, H) → {h', c'} (batch, H) each (the previous
// h enters through gh). lstm_cell(gx, gh, c) equals stack({h', c'}, 0).
template <class T>
LstmState<T> lstm_step_composed(const Variable<T>& gx, const Variable<T>& gh, const Variable<T>& c);
// Bahdanau's energies from q (B,A), keys (B,S,A), v (1,A) or (A,) → (B,S). additive_attention equals it.
template <class T>
Variable<T> additive_attention_composed(const Variable<T>& q, const Variable<T>& keys, const Variable<T>& v);
// M (B,S,A), q (B,A) → (B,S), y[b,s] = Σ_a M[b,s,a] q[b,a]. batched_matvec equals it.
template <class T>
Variable<T> batched_matvec_composed(const Variable<T>& M, const Variable<T>& q);
// w (B,S), M (B,S,A) → (B,A), y[b,a] = Σ_s w[b,s] M[b,s,a]. batched_vecmat equals it.
template <class T>
Variable<T> batched_vecmat_composed(const Variable<T>& w, const Variable<T>& M);
// Layer normalisation over the last axis with the small ops. layer_norm equals it.
template <class T>
Variable<T> layer_norm_composed(const Variable<T>& x, const Variable<T>& gamma, const Variable<T>& beta,
                                double eps = 1e-5);

}  // namespace attend
