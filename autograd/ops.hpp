// Every differentiable operation, each declared with its two formula lines: the forward formula and the derivative
// (dX is ∂loss/∂X; backward always adds into the inputs' gradients). Implementations live in one file per family:
// elementwise.cpp, linalg.cpp, reduce.cpp, shape.cpp, softmax.cpp, index.cpp, conv.cpp, fused.cpp. The op table is
// docs/reference/ops.md; how to add one is docs/reference/adding-an-op.md.
//
// Shapes are checked on entry: a mismatch throws std::invalid_argument naming the op and the shapes. Binary
// elementwise ops broadcast like NumPy; the gradient is summed back to each input's shape.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/tape.hpp"
#include "autograd/tensor.hpp"

namespace attend {

// The scalar argument of an op on Variable<T>: written so that T is deduced from the Variable alone, and a literal
// like 0.5 works with Variable<float>.
template <class T>
struct scalar_of {
  using type = T;
};
template <class T>
using scalar_t = typename scalar_of<T>::type;

// A mask for softmax/log_softmax: 1 where a position takes part, 0 where it is masked out (e.g. source padding).
using Mask = Tensor<std::uint8_t>;

// ---- elementwise, binary (broadcasting) ------------------------------------------------------------------------

// y = a + b
// da += dy, db += dy (each summed over the axes it was broadcast along)
template <class T>
Variable<T> add(const Variable<T>& a, const Variable<T>& b);
// y = a - b
// da += dy, db -= dy
template <class T>
Variable<T> sub(const Variable<T>& a, const Variable<T>& b);
// y = a ⊙ b
// da += dy ⊙ b, db += dy ⊙ a
template <class T>
Variable<T> mul(const Variable<T>& a, const Variable<T>& b);
// y = a / b
// da += dy / b, db -= dy ⊙ a / b²
template <class T>
Variable<T> div(const Variable<T>& a, const Variable<T>& b);

// ---- elementwise, with a scalar --------------------------------------------------------------------------------

// y = x + s
// dx += dy
template <class T>
Variable<T> add(const Variable<T>& x, scalar_t<T> s);
// y = s · x
// dx += s · dy
template <class T>
Variable<T> mul(const Variable<T>& x, scalar_t<T> s);

// ---- elementwise, unary ----------------------------------------------------------------------------------------

// y = -x
// dx -= dy
template <class T>
Variable<T> neg(const Variable<T>& x);
// y = tanh(x)
// dx += dy ⊙ (1 - y²)
template <class T>
Variable<T> tanh(const Variable<T>& x);
// y = σ(x) = 1 / (1 + e^(-x))
// dx += dy ⊙ y ⊙ (1 - y)
template <class T>
Variable<T> sigmoid(const Variable<T>& x);
// y = max(x, 0)
// dx += dy ⊙ [x > 0]
template <class T>
Variable<T> relu(const Variable<T>& x);
// y = e^x
// dx += dy ⊙ y
template <class T>
Variable<T> exp(const Variable<T>& x);
// y = ln x
// dx += dy / x
template <class T>
Variable<T> log(const Variable<T>& x);
// y = √x
// dx += dy / (2y)
template <class T>
Variable<T> sqrt(const Variable<T>& x);
// y = x^p (p a constant)
// dx += dy ⊙ p · x^(p-1)
template <class T>
Variable<T> pow(const Variable<T>& x, scalar_t<T> p);

// ---- matrix products -------------------------------------------------------------------------------------------

// y = a b, through BLAS gemm. (m,k)·(k,n) → (m,n); batched (B,m,k)·(B,k,n) → (B,m,n); (B,m,k)·(k,n) → (B,m,n).
// da += dy bᵀ, db += aᵀ dy (for (B,m,k)·(k,n), db sums over the batch)
template <class T>
Variable<T> matmul(const Variable<T>& a, const Variable<T>& b);

// y = x Wᵀ + b for x (..., in) of rank 2 or 3, W (out, in) in PyTorch's layout, b (out) or no bias (empty Variable)
// dx += dy W, dW += dyᵀ x (over all rows), db += Σ_rows dy
template <class T>
Variable<T> linear(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b = {});

// ---- shape -----------------------------------------------------------------------------------------------------

// y = x viewed with another shape of the same size; one dimension may be -1 (inferred)
// dx += dy viewed with x's shape
template <class T>
Variable<T> reshape(const Variable<T>& x, const std::vector<std::int64_t>& shape);
// y = x with axes a0 and a1 swapped (by default the last two: a matrix transpose)
// dx += dy with axes a0 and a1 swapped back
template <class T>
Variable<T> transpose(const Variable<T>& x, std::ptrdiff_t a0 = -2, std::ptrdiff_t a1 = -1);
// y[i_perm[0], ..., i_perm[r-1]] = x[i_0, ..., i_{r-1}], i.e. axis k of y is axis perm[k] of x
// dx += dy permuted by the inverse of perm
template <class T>
Variable<T> permute(const Variable<T>& x, const std::vector<std::size_t>& perm);
// y = [x_0; x_1; ...] joined along an existing axis (the other dimensions must agree)
// dx_k += the slice of dy that x_k occupies
template <class T>
Variable<T> concat(const std::vector<Variable<T>>& xs, std::ptrdiff_t axis);
// y = [x_0, x_1, ...] along a new axis (all shapes must be equal)
// dx_k += dy selected at position k of the new axis
template <class T>
Variable<T> stack(const std::vector<Variable<T>>& xs, std::ptrdiff_t axis);
// y = x[..., begin:end, ...] along one axis
// dx[..., begin:end, ...] += dy
template <class T>
Variable<T> slice(const Variable<T>& x, std::ptrdiff_t axis, std::size_t begin, std::size_t end);
// y = x[..., index, ...] along one axis, which disappears (time step j of a (batch, time, feature) tensor)
// dx[..., index, ...] += dy
template <class T>
Variable<T> select(const Variable<T>& x, std::ptrdiff_t axis, std::size_t index);

// ---- reductions ------------------------------------------------------------------------------------------------

// y = Σ_i x_i (a scalar)
// dx += dy (broadcast to every element)
template <class T>
Variable<T> sum(const Variable<T>& x);
// y = Σ_k x[..., k, ...] along one axis (kept as size 1 when keepdims)
// dx[..., k, ...] += dy for every k
template <class T>
Variable<T> sum(const Variable<T>& x, std::ptrdiff_t axis, bool keepdims = false);
// y = (1/N) Σ_i x_i
// dx += dy / N
template <class T>
Variable<T> mean(const Variable<T>& x);
// y = (1/n) Σ_k x[..., k, ...] along one axis
// dx[..., k, ...] += dy / n
template <class T>
Variable<T> mean(const Variable<T>& x, std::ptrdiff_t axis, bool keepdims = false);
// y = max_k x[..., k, ...] along one axis
// dx[..., k*, ...] += dy, where k* is the first position of the maximum
template <class T>
Variable<T> max(const Variable<T>& x, std::ptrdiff_t axis, bool keepdims = false);

// ---- softmax and losses ----------------------------------------------------------------------------------------

// y_k = exp(x_k - m) / Σ_j exp(x_j - m) along one axis, m = max_j x_j (so logits of ±1e4 stay finite)
// dx_k += y_k (dy_k - Σ_j dy_j y_j)
template <class T>
Variable<T> softmax(const Variable<T>& x, std::ptrdiff_t axis = -1);
// The same with a mask (x's shape, or broadcastable to it): masked positions get exactly y = 0 and no gradient, and
// the others are normalised among themselves. A row masked everywhere gives all zeros.
template <class T>
Variable<T> softmax(const Variable<T>& x, std::ptrdiff_t axis, const Mask& mask);
// y_k = x_k - m - ln Σ_j exp(x_j - m) along one axis
// dx_k += dy_k - softmax(x)_k Σ_j dy_j
template <class T>
Variable<T> log_softmax(const Variable<T>& x, std::ptrdiff_t axis = -1);
// The same with a mask: masked positions are outside the distribution; their output is 0 (a filler, not ln 0) and
// they get no gradient.
template <class T>
Variable<T> log_softmax(const Variable<T>& x, std::ptrdiff_t axis, const Mask& mask);
// y = (1/N) Σ_{n: t_n ≠ ignore} -log softmax(x_n)[t_n]   for logits x (..., C) and class ids t (...), N = #non-ignored
// dx_n += dy (softmax(x_n) - onehot(t_n)) / N for non-ignored n; 0 for ignored rows. All rows ignored: y = 0, dx = 0.
// With label smoothing ε (as PyTorch): the target distribution is (1 - ε) onehot(t) + ε / C, so
// y = (1/N) Σ_n [(1 - ε)(-log p_n[t_n]) + (ε/C) Σ_c -log p_n[c]] and dx_n += dy (p_n - (1 - ε) onehot(t_n) - ε/C) / N.
template <class T>
Variable<T> cross_entropy(const Variable<T>& logits, const Ids& targets, std::int64_t ignore_id = -100,
                          double label_smoothing = 0.0);
// y = -(1/N) Σ_{n: t_n ≠ ignore} logp_n[t_n]   for log-probabilities (..., C) (e.g. from log_softmax)
// dlogp_n[t_n] -= dy / N for non-ignored n. All rows ignored: y = 0.
template <class T>
Variable<T> nll_loss(const Variable<T>& log_probs, const Ids& targets, std::int64_t ignore_id = -100);

// ---- indexing and randomness -----------------------------------------------------------------------------------

// y[..., :] = W[ids[...], :] for a table W (V, E) and ids of any shape (rank ≤ 3) → (ids..., E)
// dW[ids[...], :] += dy[..., :] (scatter-add: a repeated id accumulates), except for ids equal to padding_id (if ≥ 0)
template <class T>
Variable<T> embedding(const Variable<T>& weight, const Ids& ids, std::int64_t padding_id = -1);
// y = x ⊙ m / (1 - p), m_i ~ Bernoulli(1 - p) drawn from rng; y = x (the same node) when not training or p = 0
// dx += dy ⊙ m / (1 - p)
template <class T>
Variable<T> dropout(const Variable<T>& x, double p, bool training, Rng& rng);

// ---- images ----------------------------------------------------------------------------------------------------
// Batches of images (B, C, H, W), as PyTorch's NCHW. Source: conv.cpp.

// Stride and zero padding (the same on all four sides) of conv2d.
struct Conv2dOptions {
  std::size_t stride = 1;
  std::size_t padding = 0;
};
// x (B,C,H,W), W (O,C,kh,kw) as torch.nn.Conv2d's weight, b (O,) or none → y (B,O,H',W'), H' = ⌊(H+2p−kh)/s⌋ + 1,
// likewise W'; x̃ is x zero-padded by p on all four sides. Per image one gemm: y_b (O,H'W') = W (O,C·kh·kw) · cols_b,
// cols_b = im2col(x̃_b) (C·kh·kw, H'W'), plus b. Cross-correlation, as torch.nn.functional.conv2d.
// y[b,o,i,j] = b[o] + Σ_{c,u,v} W[o,c,u,v] x̃[b,c,i·s+u,j·s+v]
// dW += Σ_b dy_b cols_bᵀ, dx_b += col2im(Wᵀ dy_b) (scatter-add), db[o] += Σ_{b,i,j} dy[b,o,i,j]
template <class T>
Variable<T> conv2d(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b = {},
                   const Conv2dOptions& options = {});
// x (B,C,H,W) → y (B,C,H',W'), H' = ⌊(H−k)/s⌋ + 1, likewise W'; stride 0 means s = k. Ties go to the first maximum
// in row-major order; a NaN counts as the maximum and, as in PyTorch's CPU kernel, a later NaN replaces an earlier one.
// y[b,c,i,j] = max_{u,v<k} x[b,c,i·s+u,j·s+v]
// dx[b,c,i·s+u*,j·s+v*] += dy[b,c,i,j], (u*,v*) the window's maximum found (and saved) by forward
template <class T>
Variable<T> max_pool2d(const Variable<T>& x, std::size_t kernel = 2, std::size_t stride = 0);

// ---- fused ops: one node for a whole step ----------------------------------------------------------------------
// Each replaces a chain of the small ops above in the hot loop of a recurrent or attention step, with a hand-written
// backward; each equals that composition (tests/autograd/test_fused.cpp). Source: fused.cpp.

// GRU step. gx = x W_ihᵀ + b_ih, gh = h W_hhᵀ + b_hh: (B,3H), gates r, z, n (PyTorch's order); h (B,H) → h' (B,H)
// r = σ(gx_r + gh_r), z = σ(gx_z + gh_z), n = tanh(gx_n + r ⊙ gh_n), h' = n + z ⊙ (h − n)
// with N = dh'(1−z)(1−n²), Z = dh'(h−n)z(1−z), R = N gh_n r(1−r): dgx += [R, Z, N], dgh += [R, Z, r N], dh += dh' z
template <class T>
Variable<T> gru_cell(const Variable<T>& gx, const Variable<T>& gh, const Variable<T>& h);
// LSTM step. gx, gh: (B,4H), gates i, f, g, o (PyTorch's order); c (B,H) → y (2,B,H) = [h', c']
// a = gx + gh, i = σ(a_i), f = σ(a_f), g = tanh(a_g), o = σ(a_o), c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c')
// C = dy₁ + dy₀ o(1−tanh²c'), G = [C g i(1−i), C c f(1−f), C i(1−g²), dy₀ tanh(c') o(1−o)]: dgx, dgh += G, dc += C f
template <class T>
Variable<T> lstm_cell(const Variable<T>& gx, const Variable<T>& gh, const Variable<T>& c);
// e[b,s] = Σ_a v_a tanh(q[b,a] + keys[b,s,a])  for q (B,A), keys (B,S,A), v (1,A) (Linear(A,1) weight) or (A,) → (B,S)
// with t = tanh(q + keys), g = dy[b,s] v_a (1 − t²): dq[b,a] += Σ_s g, dkeys += g, dv[a] += Σ_{b,s} dy[b,s] t[b,s,a]
template <class T>
Variable<T> additive_attention(const Variable<T>& q, const Variable<T>& keys, const Variable<T>& v);
// y[b,s] = Σ_a M[b,s,a] q[b,a]  for M (B,S,A), q (B,A) → (B,S)   (dot/general attention scores)
// dM[b,s,a] += dy[b,s] q[b,a], dq[b,a] += Σ_s dy[b,s] M[b,s,a]
template <class T>
Variable<T> batched_matvec(const Variable<T>& M, const Variable<T>& q);
// y[b,a] = Σ_s w[b,s] M[b,s,a]  for w (B,S), M (B,S,A) → (B,A)   (the context c_j = Σ_i α_ij h_i)
// dw[b,s] += Σ_a dy[b,a] M[b,s,a], dM[b,s,a] += w[b,s] dy[b,a]
template <class T>
Variable<T> batched_vecmat(const Variable<T>& w, const Variable<T>& M);

// ---- fused recurrences: one node for a whole layer over time ---------------------------------------------------
// The recurrence of one GRU or LSTM layer over every step of a batch of sequences, from the input gates of all steps
// gx[:, t] = x_t W_ihᵀ + b_ih (one linear over (B, T, in) beforehand). Each step computes gh = h W_hhᵀ + b_hh with one
// gemm that reads the previous state where it lies in the output, then the cell of gru_cell / lstm_cell row by row
// (the same code). Backward runs the steps in reverse: each step's gate gradients go into one (B, T, G·H) buffer, which
// is ∂loss/∂gx, and the weight gradient is one gemm over all steps, dW_hh += Σ_t dgh_tᵀ h_{t−1}. Equal to the loop of
// cells it replaces (tests/autograd/test_fused.cpp). Source: recurrence.cpp.
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
// gh = linear(h, W_hh, b_hh) — which is all they do — and to the sequence ops over T = 1
// (tests/autograd/test_fused.cpp). Errors name the op and every shape, as the sequence ops' do.
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

// ---- the Transformer's ops: one node each, hand-written backward (source: transformer.cpp) ------------------------

// Layer normalisation over the last axis, as torch.nn.LayerNorm(D, eps): x (..., D), gamma, beta (D,) → (..., D)
// y = γ ⊙ x̂ + β,  x̂ = (x − μ) r,  μ = mean_k x_k,  r = 1/√(σ² + ε),  σ² = mean_k (x_k − μ)²  (biased; per row)
// dβ += Σ_rows dy, dγ += Σ_rows dy ⊙ x̂, dx += r (dy γ − mean_k(dy γ) − x̂ mean_k(dy γ x̂))
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
template <class T>
Variable<T> scaled_dot_product_attention(const Variable<T>& q, const Variable<T>& k, const Variable<T>& v,
                                         const AttentionOptions& options = {}, Tensor<T>* weights = nullptr);

// ---- operators: the same ops, written as arithmetic ------------------------------------------------------------

template <class T>
Variable<T> operator+(const Variable<T>& a, const Variable<T>& b) {
  return add(a, b);
}
template <class T>
Variable<T> operator-(const Variable<T>& a, const Variable<T>& b) {
  return sub(a, b);
}
template <class T>
Variable<T> operator*(const Variable<T>& a, const Variable<T>& b) {
  return mul(a, b);
}
template <class T>
Variable<T> operator/(const Variable<T>& a, const Variable<T>& b) {
  return div(a, b);
}
template <class T>
Variable<T> operator-(const Variable<T>& x) {
  return neg(x);
}
template <class T>
Variable<T> operator+(const Variable<T>& x, scalar_t<T> s) {
  return add(x, s);
}
template <class T>
Variable<T> operator+(scalar_t<T> s, const Variable<T>& x) {
  return add(x, s);
}
template <class T>
Variable<T> operator-(const Variable<T>& x, scalar_t<T> s) {
  return add(x, -s);
}
template <class T>
Variable<T> operator-(scalar_t<T> s, const Variable<T>& x) {
  return add(neg(x), s);
}
template <class T>
Variable<T> operator*(const Variable<T>& x, scalar_t<T> s) {
  return mul(x, s);
}
template <class T>
Variable<T> operator*(scalar_t<T> s, const Variable<T>& x) {
  return mul(x, s);
}
template <class T>
Variable<T> operator/(const Variable<T>& x, scalar_t<T> s) {
  return mul(x, T(1) / s);
}
template <class T>
Variable<T> operator/(scalar_t<T> s, const Variable<T>& x) {
  return mul(pow(x, T(-1)), s);
}

}  // namespace attend
