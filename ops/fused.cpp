// Fused ops: one tape node, with a hand-written backward, for a whole step that would otherwise be a chain of small
// ops — a GRU or LSTM cell from its two gate pre-activations, the additive (Bahdanau) attention energies, and the two
// per-sequence products of attention (scores s_jᵀ h_i and the context Σ_i α_ij h_i). Each saves only what its
// derivative needs, in one buffer, and the tests check it equal to the composed ops it replaces
// (tests/ops/test_equals.cpp). Formulas: ops.hpp. Chapters: docs/02-encoder.md (the cells), docs/06 and docs/08
// (scores, context); docs/11-attention-costs.md says why these steps dominate a training step.
//
// Transcendentals (σ, tanh) go through the kernels of kernels.hpp (in float: vectorised approximations within 5·10⁻⁷,
// with an AVX2 clone chosen at run time; in double: the library functions); the other loops are plain loops over the
// innermost axis that the compiler vectorises.
#include "ops/fused.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "ops/cell_rows.hpp"
#include "runtime/kernels.hpp"

namespace attend {

namespace {

// Σ_i a_i b_i with eight independent partial sums: the compiler vectorises this (a single running sum would be a
// serial dependency it may not reorder).
template <class T>
T dot(const T* a, const T* b, std::size_t n) {
  constexpr std::size_t lanes = 8;
  T partial[lanes] = {};
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    for (std::size_t l = 0; l < lanes; ++l) partial[l] += a[i + l] * b[i + l];
  }
  T total = 0;
  for (std::size_t l = 0; l < lanes; ++l) total += partial[l];
  for (; i < n; ++i) total += a[i] * b[i];
  return total;
}

[[noreturn]] void shape_error(const std::string& what) { throw std::invalid_argument(what); }

// The gradient buffer of input k, or nullptr when input k needs no gradient.
template <class T>
T* wanted(BackwardContext<T>& c, std::size_t k) {
  return c.wants(k) ? c.dx(k).data() : nullptr;
}

}  // namespace

// ---- gru_cell ----------------------------------------------------------------------------------------------------

template <class T>
Variable<T> gru_cell(const Variable<T>& gx, const Variable<T>& gh, const Variable<T>& h) {
  Tape<T>& tape = tape_of("gru_cell", {&gx, &gh, &h});
  const Shape& sx = gx.shape();
  const Shape& sg = gh.shape();
  const Shape& sh = h.shape();
  if (sx.rank() != 2 || sg != sx || sh.rank() != 2 || sh[0] != sx[0] || sx[1] != 3 * sh[1]) {
    shape_error("gru_cell: gx " + to_string(sx) + ", gh " + to_string(sg) + " and h " + to_string(sh) +
                " do not fit (expected gx and gh (B,3H), h (B,H))");
  }
  const std::size_t B = sh[0], H = sh[1];
  // saved for backward, per row: [r | z | n | gh_n], (B, 4H)
  Tensor<T> saved(Shape{B, 4 * H}, uninitialized);
  Tensor<T> y(Shape{B, H}, uninitialized);
  for (std::size_t b = 0; b < B; ++b) {
    cell_rows::gru_forward(gx.value().data() + b * 3 * H, gh.value().data() + b * 3 * H, h.value().data() + b * H,
                           saved.data() + b * 4 * H, y.data() + b * H, H);
  }
  return tape.record("gru_cell", std::move(y), {gx, gh, h}, [B, H, saved = std::move(saved)](BackwardContext<T>& c) {
    T* dgx = wanted(c, 0);
    T* dgh = wanted(c, 1);
    T* dh = wanted(c, 2);
    for (std::size_t b = 0; b < B; ++b) {
      cell_rows::gru_backward(saved.data() + b * 4 * H, c.x(2).data() + b * H, c.dy().data() + b * H,
                              dgx ? dgx + b * 3 * H : nullptr, dgh ? dgh + b * 3 * H : nullptr,
                              dh ? dh + b * H : nullptr, H);
    }
  });
}

// ---- lstm_cell ---------------------------------------------------------------------------------------------------

template <class T>
Variable<T> lstm_cell(const Variable<T>& gx, const Variable<T>& gh, const Variable<T>& c) {
  Tape<T>& tape = tape_of("lstm_cell", {&gx, &gh, &c});
  const Shape& sx = gx.shape();
  const Shape& sg = gh.shape();
  const Shape& sc = c.shape();
  if (sx.rank() != 2 || sg != sx || sc.rank() != 2 || sc[0] != sx[0] || sx[1] != 4 * sc[1]) {
    shape_error("lstm_cell: gx " + to_string(sx) + ", gh " + to_string(sg) + " and c " + to_string(sc) +
                " do not fit (expected gx and gh (B,4H), c (B,H))");
  }
  const std::size_t B = sc[0], H = sc[1];
  // saved for backward, per row: [i | f | g | o | tanh(c')], (B, 5H)
  Tensor<T> saved(Shape{B, 5 * H}, uninitialized);
  // y[0] = h', y[1] = c': (2, B, H)
  Tensor<T> y(Shape{2, B, H}, uninitialized);
  for (std::size_t b = 0; b < B; ++b) {
    cell_rows::lstm_forward(gx.value().data() + b * 4 * H, gh.value().data() + b * 4 * H, c.value().data() + b * H,
                            saved.data() + b * 5 * H, y.data() + b * H, y.data() + (B + b) * H, H);
  }
  return tape.record("lstm_cell", std::move(y), {gx, gh, c}, [B, H, saved = std::move(saved)](BackwardContext<T>& ctx) {
    T* dgx = wanted(ctx, 0);
    T* dgh = wanted(ctx, 1);
    T* dc = wanted(ctx, 2);
    const T* dy = ctx.dy().data();  // [∂loss/∂h'; ∂loss/∂c']: (2, B, H)
    for (std::size_t b = 0; b < B; ++b) {
      cell_rows::lstm_backward(saved.data() + b * 5 * H, ctx.x(2).data() + b * H, dy + b * H, dy + (B + b) * H,
                               dgx ? dgx + b * 4 * H : nullptr, dgh ? dgh + b * 4 * H : nullptr,
                               dc ? dc + b * H : nullptr, H);
    }
  });
}

// ---- additive_attention ------------------------------------------------------------------------------------------

namespace {

// The backward of one row (b, s) of additive_attention, in one pass over a, for the inputs that want a gradient
// (each flag a compile-time constant, so the loop has no branches).
template <class T, bool want_q, bool want_keys, bool want_v>
void additive_row_backward(T dy, const T* v, const T* t, T* dq, T* dkeys, T* dv, std::size_t A) {
  for (std::size_t a = 0; a < A; ++a) {
    const T g = dy * v[a] * (T(1) - t[a] * t[a]);
    if constexpr (want_q) dq[a] += g;
    if constexpr (want_keys) dkeys[a] += g;
    if constexpr (want_v) dv[a] += dy * t[a];
  }
}

template <class T, bool want_q, bool want_keys, bool want_v>
void additive_backward(const T* dy, const T* v, const T* t, T* dq, T* dkeys, T* dv, std::size_t B, std::size_t S,
                       std::size_t A) {
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s) {
      const std::size_t bs = b * S + s;
      additive_row_backward<T, want_q, want_keys, want_v>(dy[bs], v, t + bs * A, want_q ? dq + b * A : nullptr,
                                                          want_keys ? dkeys + bs * A : nullptr, dv, A);
    }
}

}  // namespace

template <class T>
Variable<T> additive_attention(const Variable<T>& q, const Variable<T>& keys, const Variable<T>& v) {
  Tape<T>& tape = tape_of("additive_attention", {&q, &keys, &v});
  const Shape& sq = q.shape();
  const Shape& sk = keys.shape();
  const Shape& sv = v.shape();
  const bool v_fits = (sv.rank() == 1 && sk.rank() == 3 && sv[0] == sk[2]) ||
                      (sv.rank() == 2 && sk.rank() == 3 && sv[0] == 1 && sv[1] == sk[2]);
  if (sq.rank() != 2 || sk.rank() != 3 || sq[0] != sk[0] || sq[1] != sk[2] || !v_fits) {
    shape_error("additive_attention: q " + to_string(sq) + ", keys " + to_string(sk) + " and v " + to_string(sv) +
                " do not fit (expected q (B,A), keys (B,S,A), v (1,A) or (A,))");
  }
  const std::size_t B = sk[0], S = sk[1], A = sk[2];
  // t = tanh(q[b] + keys[b, s]) for every (b, s): (B, S, A), the one thing backward needs besides v
  Tensor<T> t(Shape{B, S, A}, uninitialized);
  Tensor<T> e(Shape{B, S}, uninitialized);
  const T* v_p = v.value().data();
  for (std::size_t b = 0; b < B; ++b) {
    const T* q_row = q.value().data() + b * A;
    for (std::size_t s = 0; s < S; ++s) {
      const std::size_t bs = b * S + s;
      // t[b, s] = tanh(q[b] + keys[b, s]);  e[b, s] = Σ_a v_a t[b, s, a]
      e.data()[bs] = kernels::tanh_sum_dot(q_row, keys.value().data() + bs * A, v_p, t.data() + bs * A, A);
    }
  }
  return tape.record("additive_attention", std::move(e), {q, keys, v},
                     [B, S, A, t = std::move(t)](BackwardContext<T>& c) {
                       T* dq = wanted(c, 0);
                       T* dkeys = wanted(c, 1);
                       T* dv = wanted(c, 2);
                       const T* dy = c.dy().data();
                       const T* v = c.x(2).data();
                       // one instantiation per set of wanted inputs: (dq, dkeys, dv) as bits 4, 2, 1
                       const T* tp = t.data();
                       switch ((dq ? 4 : 0) | (dkeys ? 2 : 0) | (dv ? 1 : 0)) {
                         case 7:
                           additive_backward<T, true, true, true>(dy, v, tp, dq, dkeys, dv, B, S, A);
                           break;
                         case 6:
                           additive_backward<T, true, true, false>(dy, v, tp, dq, dkeys, dv, B, S, A);
                           break;
                         case 5:
                           additive_backward<T, true, false, true>(dy, v, tp, dq, dkeys, dv, B, S, A);
                           break;
                         case 4:
                           additive_backward<T, true, false, false>(dy, v, tp, dq, dkeys, dv, B, S, A);
                           break;
                         case 3:
                           additive_backward<T, false, true, true>(dy, v, tp, dq, dkeys, dv, B, S, A);
                           break;
                         case 2:
                           additive_backward<T, false, true, false>(dy, v, tp, dq, dkeys, dv, B, S, A);
                           break;
                         case 1:
                           additive_backward<T, false, false, true>(dy, v, tp, dq, dkeys, dv, B, S, A);
                           break;
                         default:
                           break;
                       }
                     });
}

// ---- batched_matvec and batched_vecmat ---------------------------------------------------------------------------

template <class T>
Variable<T> batched_matvec(const Variable<T>& M, const Variable<T>& q) {
  Tape<T>& tape = tape_of("batched_matvec", {&M, &q});
  const Shape& sm = M.shape();
  const Shape& sq = q.shape();
  if (sm.rank() != 3 || sq.rank() != 2 || sm[0] != sq[0] || sm[2] != sq[1]) {
    shape_error("batched_matvec: M " + to_string(sm) + " and q " + to_string(sq) +
                " do not fit (expected M (B,S,A) and q (B,A))");
  }
  const std::size_t B = sm[0], S = sm[1], A = sm[2];
  Tensor<T> y(Shape{B, S}, uninitialized);
  for (std::size_t b = 0; b < B; ++b) {
    const T* q_row = q.value().data() + b * A;
    for (std::size_t s = 0; s < S; ++s) y.data()[b * S + s] = dot(M.value().data() + (b * S + s) * A, q_row, A);
  }
  return tape.record("batched_matvec", std::move(y), {M, q}, [B, S, A](BackwardContext<T>& c) {
    T* dM = wanted(c, 0);
    T* dq = wanted(c, 1);
    const T* dy = c.dy().data();
    const T* m = c.x(0).data();
    const T* q = c.x(1).data();
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t s = 0; s < S; ++s) {
        const std::size_t bs = b * S + s;
        const T d = dy[bs];
        // dM[b, s, :] += dy[b, s] q[b, :]
        if (dM) {
          T* dm_row = dM + bs * A;
          const T* q_row = q + b * A;
          for (std::size_t a = 0; a < A; ++a) dm_row[a] += d * q_row[a];
        }
        // dq[b, :] += dy[b, s] M[b, s, :]
        if (dq) {
          T* dq_row = dq + b * A;
          const T* m_row = m + bs * A;
          for (std::size_t a = 0; a < A; ++a) dq_row[a] += d * m_row[a];
        }
      }
  });
}

template <class T>
Variable<T> batched_vecmat(const Variable<T>& w, const Variable<T>& M) {
  Tape<T>& tape = tape_of("batched_vecmat", {&w, &M});
  const Shape& sw = w.shape();
  const Shape& sm = M.shape();
  if (sw.rank() != 2 || sm.rank() != 3 || sw[0] != sm[0] || sw[1] != sm[1]) {
    shape_error("batched_vecmat: w " + to_string(sw) + " and M " + to_string(sm) +
                " do not fit (expected w (B,S) and M (B,S,A))");
  }
  const std::size_t B = sm[0], S = sm[1], A = sm[2];
  Tensor<T> y(Shape{B, A});  // zeros: the rows are sums over s
  for (std::size_t b = 0; b < B; ++b) {
    T* y_row = y.data() + b * A;
    for (std::size_t s = 0; s < S; ++s) {
      // y[b, :] += w[b, s] M[b, s, :]
      const T weight = w.value().data()[b * S + s];
      const T* m_row = M.value().data() + (b * S + s) * A;
      for (std::size_t a = 0; a < A; ++a) y_row[a] += weight * m_row[a];
    }
  }
  return tape.record("batched_vecmat", std::move(y), {w, M}, [B, S, A](BackwardContext<T>& c) {
    T* dw = wanted(c, 0);
    T* dM = wanted(c, 1);
    const T* dy = c.dy().data();
    const T* w = c.x(0).data();
    const T* m = c.x(1).data();
    for (std::size_t b = 0; b < B; ++b) {
      const T* dy_row = dy + b * A;
      for (std::size_t s = 0; s < S; ++s) {
        const std::size_t bs = b * S + s;
        // dw[b, s] += Σ_a dy[b, a] M[b, s, a]
        if (dw) dw[bs] += dot(dy_row, m + bs * A, A);
        // dM[b, s, :] += w[b, s] dy[b, :]
        if (dM) {
          T* dm_row = dM + bs * A;
          const T weight = w[bs];
          for (std::size_t a = 0; a < A; ++a) dm_row[a] += weight * dy_row[a];
        }
      }
    }
  });
}

#define ATTEND_INSTANTIATE(T)                                                                          \
  template Variable<T> gru_cell(const Variable<T>&, const Variable<T>&, const Variable<T>&);           \
  template Variable<T> lstm_cell(const Variable<T>&, const Variable<T>&, const Variable<T>&);          \
  template Variable<T> additive_attention(const Variable<T>&, const Variable<T>&, const Variable<T>&); \
  template Variable<T> batched_matvec(const Variable<T>&, const Variable<T>&);                         \
  template Variable<T> batched_vecmat(const Variable<T>&, const Variable<T>&);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
