// The reference each fused op of fused.hpp equals: the same computation written with the reference engine's ops
// (autograd/ops.hpp), one small node per formula, as the chapters write it. Nothing here is fast; it is what the fast
// ops are tested against (one table, tests/ops/test_equals.cpp), and what a reader reads to see what a fused op
// computes.
#pragma once

#include "ops/fused.hpp"

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

// The loop of GRU / LSTM steps a whole-layer recurrence replaces: per step t (in `options.reverse` order)
// gh = linear(h, W_hh, b_hh), the composed step above, and for a padded step (t ≥ lengths[b]) the state kept,
// h_t = m_t ⊙ h_new + (1 − m_t) ⊙ h_{t−1} with m_t[b] = 1 for a real step. gru_sequence and lstm_sequence equal them
// (the LSTM's output stacked as [h_t; c_t], (2,B,T,H)).
template <class T>
Variable<T> gru_sequence_composed(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh,
                                  const Variable<T>& h0, const Recurrence& options = {});
template <class T>
Variable<T> lstm_sequence_composed(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh,
                                   const Variable<T>& h0, const Variable<T>& c0, const Recurrence& options = {});

// Scaled dot-product attention with the small ops: the heads taken apart with reshape and transpose, per head
// softmax(Q Kᵀ · scale, −1, mask) V with the mask of key padding and causality as one (B·H, T_q, T_k) mask, the heads
// put back. scaled_dot_product_attention equals it; there is no dropout here (throws std::invalid_argument when
// options ask for it while training: the masks drawn would differ).
template <class T>
Variable<T> scaled_dot_product_attention_composed(const Variable<T>& q, const Variable<T>& k, const Variable<T>& v,
                                                  const AttentionOptions& options = {});

// The cross-entropy from logits with the small ops: nll_loss(log_softmax(logits, −1), targets, ignore_id); with label
// smoothing ε, (1 − ε) times that plus (ε/C) times the mean over the non-ignored rows of −Σ_c log_softmax(logits)_c.
// cross_entropy equals it.
template <class T>
Variable<T> cross_entropy_composed(const Variable<T>& logits, const Ids& targets, std::int64_t ignore_id = -100,
                                   double label_smoothing = 0.0);

// The output layer and its loss as two reference nodes: cross_entropy_composed(linear(x, W, b), targets, ignore_id,
// label_smoothing). linear_cross_entropy equals it.
template <class T>
Variable<T> linear_cross_entropy_composed(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b,
                                          const Ids& targets, std::int64_t ignore_id = -100,
                                          double label_smoothing = 0.0);

}  // namespace attend
