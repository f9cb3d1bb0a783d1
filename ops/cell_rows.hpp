// Internal (not installed): one batch row of a GRU or LSTM step, forward and backward, from the gate pre-activations
// x = W_ih x_t + b_ih and g = W_hh h + b_hh (gate order as PyTorch's). The one-step ops gru_cell/lstm_cell
// (fused.cpp) and the whole-sequence ops gru_sequence/lstm_sequence (recurrence.cpp) both run these, so a sequence
// computes exactly what its steps would. Formulas: ops.hpp; transcendentals: kernels.hpp.
#pragma once

#include <algorithm>
#include <cstddef>

#include "runtime/kernels.hpp"

namespace attend::cell_rows {

// GRU, H units. In: x (3H), g (3H), h (H). Out: h' (H) and saved = [r | z | n | g_n] (4H), what backward reads.
//   [r, z] = σ(x[:2H] + g[:2H]),  n = tanh(x_n + r ⊙ g_n),  h' = n + z ⊙ (h − n)
template <class T>
void gru_forward(const T* x, const T* g, const T* h, T* saved, T* h_next, std::size_t H) {
  kernels::sigmoid_sum(x, g, saved, 2 * H);
  const T* r = saved;
  T* g_n = saved + 3 * H;
  std::copy(g + 2 * H, g + 3 * H, g_n);
  kernels::tanh_sum_product(x + 2 * H, r, g_n, saved + 2 * H, H);
  const T* z = saved + H;
  const T* n = saved + 2 * H;
  for (std::size_t k = 0; k < H; ++k) h_next[k] = n[k] + z[k] * (h[k] - n[k]);
}

// Backward of gru_forward for dy = ∂loss/∂h': adds ∂loss/∂x to dx (3H), ∂loss/∂g to dg (3H) and ∂loss/∂h (direct
// part, through z) to dh (H); a null pointer skips that gradient.
template <class T>
void gru_backward(const T* saved, const T* h, const T* dy, T* dx, T* dg, T* dh, std::size_t H) {
  const T *r = saved, *z = saved + H, *n = saved + 2 * H, *g_n = saved + 3 * H;
  for (std::size_t k = 0; k < H; ++k) {
    // through h' = n + z ⊙ (h - n): dn = dy (1 - z), dz = dy (h - n)
    const T da_n = dy[k] * (T(1) - z[k]) * (T(1) - n[k] * n[k]);  // through tanh: d(x_n + r ⊙ g_n)
    const T da_z = dy[k] * (h[k] - n[k]) * z[k] * (T(1) - z[k]);
    const T da_r = da_n * g_n[k] * r[k] * (T(1) - r[k]);
    if (dx) {
      dx[k] += da_r;
      dx[H + k] += da_z;
      dx[2 * H + k] += da_n;
    }
    if (dg) {
      dg[k] += da_r;
      dg[H + k] += da_z;
      dg[2 * H + k] += da_n * r[k];
    }
  }
  if (dh) {
    for (std::size_t k = 0; k < H; ++k) dh[k] += dy[k] * z[k];
  }
}

// LSTM, H units. In: x (4H), g (4H), c (H). Out: h', c' (H each) and saved = [i | f | g | o | tanh c'] (5H).
//   [i, f] = σ(a[:2H]), g = tanh(a[2H:3H]), o = σ(a[3H:]) for a = x + g;  c' = f ⊙ c + i ⊙ g,  h' = o ⊙ tanh c'
template <class T>
void lstm_forward(const T* x, const T* g, const T* c, T* saved, T* h_next, T* c_next, std::size_t H) {
  kernels::sigmoid_sum(x, g, saved, 2 * H);
  kernels::tanh_sum(x + 2 * H, g + 2 * H, saved + 2 * H, H);
  kernels::sigmoid_sum(x + 3 * H, g + 3 * H, saved + 3 * H, H);
  const T *i = saved, *f = saved + H, *gate = saved + 2 * H, *o = saved + 3 * H;
  for (std::size_t k = 0; k < H; ++k) c_next[k] = f[k] * c[k] + i[k] * gate[k];
  T* tanh_c = saved + 4 * H;
  kernels::tanh_of(c_next, tanh_c, H);
  for (std::size_t k = 0; k < H; ++k) h_next[k] = o[k] * tanh_c[k];
}

// Backward of lstm_forward for dh = ∂loss/∂h' and dc = ∂loss/∂c': adds ∂loss/∂a (the same for x and g, 4H) to da_x
// and da_g, and ∂loss/∂c to dc_prev (H); a null pointer skips that gradient.
template <class T>
void lstm_backward(const T* saved, const T* c, const T* dh, const T* dc, T* da_x, T* da_g, T* dc_prev, std::size_t H) {
  const T *i = saved, *f = saved + H, *g = saved + 2 * H, *o = saved + 3 * H, *tc = saved + 4 * H;
  for (std::size_t k = 0; k < H; ++k) {
    // the whole gradient of c': from c' itself and through h' = o ⊙ tanh(c')
    const T dcn = dc[k] + dh[k] * o[k] * (T(1) - tc[k] * tc[k]);
    // through the gate nonlinearities: d(pre-activation) for i, f, g, o
    const T da_i = dcn * g[k] * i[k] * (T(1) - i[k]);
    const T da_f = dcn * c[k] * f[k] * (T(1) - f[k]);
    const T da_gate = dcn * i[k] * (T(1) - g[k] * g[k]);
    const T da_o = dh[k] * tc[k] * o[k] * (T(1) - o[k]);
    if (da_x) {
      da_x[k] += da_i;
      da_x[H + k] += da_f;
      da_x[2 * H + k] += da_gate;
      da_x[3 * H + k] += da_o;
    }
    if (da_g) {
      da_g[k] += da_i;
      da_g[H + k] += da_f;
      da_g[2 * H + k] += da_gate;
      da_g[3 * H + k] += da_o;
    }
    if (dc_prev) dc_prev[k] += dcn * f[k];
  }
}

}  // namespace attend::cell_rows
