// Beside the engine: fused ops, each one tape node with a hand-written backward for what the reference ops
// of autograd/ops.hpp would compute in many nodes — a GRU or LSTM step or a whole layer over time, the additive
// attention energies, the two products of attention, layer normalisation, scaled dot-product attention, the
// cross-entropy from logits and the output layer with it. Each is an ordinary op (it records a node on the tape through
// Tape::record, like tanh) and each equals a composition of reference ops, which its comment names (ops/composed.hpp);
// one table-driven test, tests/ops/test_equals.cpp, checks every pair (values and every gradient, float and double).
// Their elementwise loops run the kernels of runtime/kernels.hpp (vectorised, with an AVX2 + FMA clone chosen at run
// time). Why fused, and how it is proved equal: docs/reference/fast.md.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/ops.hpp"

namespace attend {

// ---- the loss ------------------------------------------------------------------------------------------------------
// Equals: cross_entropy_composed — nll_loss(log_softmax(logits, −1), targets, ignore_id) without label smoothing; with
// it, (1 − ε) times that plus (ε/C) times the mean over non-ignored rows of −Σ_c log_softmax(x)_c. One node that keeps
// two numbers a row for backward instead of the (…, C) log-probabilities. Source: ops/losses.cpp. y = (1/N) Σ_{n: t_n
// ≠ ignore} -log softmax(x_n)[t_n]   for logits x (..., C) and class ids t (...), N = #non-ignored dx_n += dy
// (softmax(x_n) - onehot(t_n)) / N for non-ignored n; 0 for ignored rows. All rows ignored: y = 0, dx = 0. With label
// smoothing ε (as PyTorch): the target distribution is (1 - ε) onehot(t) + ε / C, so y = (1/N) Σ_n [(1 - ε)(-log
// p_n[t_n]) + (ε/C) Σ_c -log p_n[c]] and dx_n += dy (p_n - (1 - ε) onehot(t_n) - ε/C) / N.
template <class T>
Variable<T> cross_entropy(const Variable<T>& logits, const Ids& targets, std::int64_t ignore_id = -100,
                          double label_smoothing = 0.0);

// The output layer and its loss: cross_entropy(linear(x, W, b), targets, ignore_id, ε) for x (N, in), W (C, in), b (C,)
// or empty, targets (N). One node that keeps for backward G_n = softmax(x_n Wᵀ + b) − (1 − ε) onehot(t_n) − ε/C
// (0 for an ignored row), made in forward, and never the logits — ⌊2¹⁹/C⌋ rows of them at a time (at least one) —
// nor their gradient: with dy's scale s = dy/N, dx += s G W, dW += s Gᵀ x, db += s Σ_n G_n (that sum made in forward
// too; the softmax as e_c · (1 / Σ_c e_c) from the exps the loss took, one exp a logit). Its point is the bfloat16
// products (precision/precision.hpp): there G is kept rounded to bfloat16 — what both backward products read, rounded
// once instead of once a product — in (N, C) numbers of 2 bytes where the two nodes hold 2·(N, C) of 4 (the translation
// benchmark's output layer: 4 MB a shard for 16). With float32 products it records the two nodes,
// cross_entropy(linear(…)), as float32 training always has (the same bits); in double, the node, G kept as it is. The
// shapes are checked the same way in every precision; the precision must not change between forward and backward.
// Equals: linear_cross_entropy_composed — cross_entropy_composed(linear(x, W, b), …).
template <class T>
Variable<T> linear_cross_entropy(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b, const Ids& targets,
                                 std::int64_t ignore_id = -100, double label_smoothing = 0.0);

// ---- fused ops: one node for a whole step ----------------------------------------------------------------------
// Each replaces a chain of reference ops in the hot loop of a recurrent or attention step, with a hand-written
// backward; each equals the chain its "Equals:" line names (tests/ops/test_equals.cpp). Source: ops/fused.cpp.

// GRU step. gx = x W_ihᵀ + b_ih, gh = h W_hhᵀ + b_hh: (B,3H), gates r, z, n (PyTorch's order); h (B,H) → h' (B,H)
// r = σ(gx_r + gh_r), z = σ(gx_z + gh_z), n = tanh(gx_n + r ⊙ gh_n), h' = n + z ⊙ (h − n)
// with N = dh'(1−z)(1−n²), Z = dh'(h−n)z(1−z), R = N gh_n r(1−r): dgx += [R, Z, N], dgh += [R, Z, r N], dh += dh' z
// Equals: gru_step_composed(gx, gh, h) (ops/composed.hpp) — sigmoid, tanh, slice, mul, add, sub.
template <class T>
Variable<T> gru_cell(const Variable<T>& gx, const Variable<T>& gh, const Variable<T>& h);
// LSTM step. gx, gh: (B,4H), gates i, f, g, o (PyTorch's order); c (B,H) → y (2,B,H) = [h', c']
// a = gx + gh, i = σ(a_i), f = σ(a_f), g = tanh(a_g), o = σ(a_o), c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c')
// C = dy₁ + dy₀ o(1−tanh²c'), G = [C g i(1−i), C c f(1−f), C i(1−g²), dy₀ tanh(c') o(1−o)]: dgx, dgh += G, dc += C f
// Equals: stack({h', c'}, 0) of lstm_step_composed(gx, gh, c) — add, slice, sigmoid, tanh, mul.
template <class T>
Variable<T> lstm_cell(const Variable<T>& gx, const Variable<T>& gh, const Variable<T>& c);
// e[b,s] = Σ_a v_a tanh(q[b,a] + keys[b,s,a])  for q (B,A), keys (B,S,A), v (1,A) (Linear(A,1) weight) or (A,) → (B,S)
// with t = tanh(q + keys), g = dy[b,s] v_a (1 − t²): dq[b,a] += Σ_s g, dkeys += g, dv[a] += Σ_{b,s} dy[b,s] t[b,s,a]
// Equals: additive_attention_composed: reshape(linear(tanh(reshape(q, {B,1,A}) + keys), v), {B,S}).
template <class T>
Variable<T> additive_attention(const Variable<T>& q, const Variable<T>& keys, const Variable<T>& v);
// y[b,s] = Σ_a M[b,s,a] q[b,a]  for M (B,S,A), q (B,A) → (B,S)   (dot/general attention scores)
// dM[b,s,a] += dy[b,s] q[b,a], dq[b,a] += Σ_s dy[b,s] M[b,s,a]
// Equals: batched_matvec_composed: reshape(matmul(M, reshape(q, {B,A,1})), {B,S}).
template <class T>
Variable<T> batched_matvec(const Variable<T>& M, const Variable<T>& q);
// y[b,a] = Σ_s w[b,s] M[b,s,a]  for w (B,S), M (B,S,A) → (B,A)   (the context c_j = Σ_i α_ij h_i)
// dw[b,s] += Σ_a dy[b,a] M[b,s,a], dM[b,s,a] += w[b,s] dy[b,a]
// Equals: batched_vecmat_composed: reshape(matmul(reshape(w, {B,1,S}), M), {B,A}).
template <class T>
Variable<T> batched_vecmat(const Variable<T>& w, const Variable<T>& M);

// ---- fused recurrences: one node for a whole layer over time ---------------------------------------------------
// The recurrence of one GRU or LSTM layer over every step of a batch of sequences, from the input gates of all steps
// gx[:, t] = x_t W_ihᵀ + b_ih (one linear over (B, T, in) beforehand). Each step computes gh = h W_hhᵀ + b_hh with one
// gemm that reads the previous state where it lies in the output, then the cell of gru_cell / lstm_cell row by row
// (the same code). Backward runs the steps in reverse: each step's gate gradients go into one (B, T, G·H) buffer, which
// is ∂loss/∂gx, and the weight gradient is one gemm over all steps, dW_hh += Σ_t dgh_tᵀ h_{t−1}. Equal to the loop of
// cells it replaces. Equals: gru_sequence_composed / lstm_sequence_composed (ops/composed.hpp), the loop of composed
// steps with padding masks. Source: ops/recurrence.cpp.
struct Recurrence {
  // empty: every sequence has all T steps; else one length per batch row, 0 ≤ length ≤ T. At a step t ≥ lengths[b],
  // row b keeps its state (h_t = h_{t−1}, c_t = c_{t−1}) and the step adds nothing to any gradient.
  std::vector<std::int64_t> lengths;
  bool reverse = false;  // run t = T−1 … 0 (the backward direction of a bidirectional layer); the state before is h0
};
// gx (B,T,3H), W_hh (3H,H), b_hh (3H,), h0 (B,H) → (B,T,H): h_t = gru_cell(gx[:,t], h_{t−1} W_hhᵀ + b_hh, h_{t−1})
// with G_t = gru_cell's [R, Z, r N] at step t: dgx[:,t] += [R, Z, N], dW_hh += Σ_t G_tᵀ h_{t−1}, db_hh += Σ_t G_t,
// dh_{t−1} += dh_t z + G_t W_hh (dh_t: from y[:,t] and from step t+1), dh0 = the last of these
template <class T>
Variable<T> gru_sequence(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh, const Variable<T>& h0,
                         const Recurrence& options = {});
// gx (B,T,4H), W_hh (4H,H), b_hh (4H,), h0, c0 (B,H) → (2,B,T,H) = [h_t; c_t], [h_t; c_t] = lstm_cell(gx[:,t],
// h_{t−1} W_hhᵀ + b_hh, c_{t−1}); with G_t = lstm_cell's gate gradient at t: dgx[:,t] += G_t, dW_hh += Σ_t G_tᵀ
// h_{t−1}, db_hh += Σ_t G_t, dh_{t−1} += G_t W_hh, dc_{t−1} += C_t f_t (into h0, c0 at the first step)
template <class T>
Variable<T> lstm_sequence(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh,
                          const Variable<T>& h0, const Variable<T>& c0, const Recurrence& options = {});

// One step of the same recurrences, for a loop that feeds each output back (a decoder): gx (B,G·H) for this step alone
// (x W_ihᵀ + b_ih, no time axis), the same W_hh and b_hh, the state before. Equal to gru_cell / lstm_cell after
// gh = linear(h, W_hh, b_hh) — which is all they do. Equals: gru_step_composed(gx, linear(h, W_hh, b_hh), h),
// lstm_step_composed(gx, linear(h, W_hh, b_hh), c). Errors name the op and every shape, as the sequence ops' do.
//   gru_step:  gx (B,3H), W_hh (3H,H), b_hh (3H,), h (B,H) → h' (B,H)
//   lstm_step: gx (B,4H), W_hh (4H,H), b_hh (4H,), h, c (B,H) → {h', c'} (B,H) each
template <class T>
struct LstmState {  // what an LSTM carries from step to step: the hidden state h and the memory cell c
  Variable<T> h;
  Variable<T> c;
};
template <class T>
Variable<T> gru_step(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh, const Variable<T>& h);
template <class T>
LstmState<T> lstm_step(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh, const Variable<T>& h,
                       const Variable<T>& c);
// The two halves of an LSTM op's output: lstm_cell's (2,B,H) → h, c (B,H); lstm_sequence's (2,B,T,H) → h, c (B,T,H).
template <class T>
LstmState<T> hidden_and_cell(const Variable<T>& hc);

// ---- the Transformer's ops: one node each, hand-written backward (source: ops/transformer.cpp) ------------------

// Layer normalisation over the last axis, as torch.nn.LayerNorm(D, eps): x (..., D), gamma, beta (D,) → (..., D)
// y = γ ⊙ x̂ + β,  x̂ = (x − μ) r,  μ = mean_k x_k,  r = 1/√(σ² + ε),  σ² = mean_k (x_k − μ)²  (biased; per row)
// dβ += Σ_rows dy, dγ += Σ_rows dy ⊙ x̂, dx += r (dy γ − mean_k(dy γ) − x̂ mean_k(dy γ x̂))
// Equals: layer_norm_composed: (x − μ) / sqrt(mean((x − μ)², −1) + ε) ⊙ γ + β, μ = mean(x, −1).
template <class T>
Variable<T> layer_norm(const Variable<T>& x, const Variable<T>& gamma, const Variable<T>& beta, double eps = 1e-5);

// What scaled_dot_product_attention masks, and how.
struct AttentionOptions {
  std::size_t heads = 1;  // H: q, k, v hold H heads side by side in their last axis
  Mask key_padding;       // (B, T_k): 1 = a real key, 0 = padding (never attended to); empty: every key is real
  bool causal = false;    // query i attends to keys k ≤ i only (needs T_q = T_k)
  double dropout = 0.0;   // p: dropout on the weights α (when training), drawn from *rng
  bool training = true;   // false: no dropout whatever p is
  Rng* rng = nullptr;
  double scale = 0.0;  // the factor of Q Kᵀ; 0 means 1/√d
};
// Scaled dot-product attention (Vaswani et al. 2017, eq. 1) over every head of a batch: q (B,T_q,H·d), k (B,T_k,H·d),
// v (B,T_k,H·d_v) → y (B,T_q,H·d_v), head h in columns h·d … (h+1)·d − 1 of each (the layout of a projection's
// output, so no transposes are needed). For each b, h:
//   e = Q Kᵀ / √d (T_q, T_k);  α = softmax over the allowed keys of each row (masked α exactly 0; a row with no
//   allowed key is all 0, so y is 0 there and nothing flows back);  α' = α ⊙ m / (1 − p);  Y = α' V
// dV += α'ᵀ dY, dα = (dY Vᵀ) ⊙ m / (1 − p), de = α ⊙ (dα − Σ_k dα α) / √d, dQ += de K, dK += deᵀ Q
// Keeps α (B, H, T_q, T_k) for backward, nothing larger; `weights`, when given, receives a copy of α (for heatmaps).
// Equals: scaled_dot_product_attention_composed — per head, matmul(softmax(matmul(Q, transpose(K)) · scale, −1, mask),
// V), the heads taken apart and put back with reshape and transpose (without dropout: the masks drawn differ).
template <class T>
Variable<T> scaled_dot_product_attention(const Variable<T>& q, const Variable<T>& k, const Variable<T>& v,
                                         const AttentionOptions& options = {}, Tensor<T>* weights = nullptr);

}  // namespace attend
