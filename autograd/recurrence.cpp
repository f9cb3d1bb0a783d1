// Fused recurrences: a whole GRU or LSTM layer over time as one tape node (gru_sequence, lstm_sequence).
//
// Why: an encoder run step by step records, per step, a copy of the step's input gates, the state product, the cell,
// and for an LSTM two more copies to split [h'; c']; backward then zero-fills a gradient slot for each of them and runs
// one small dW_hh gemm per step. Here the forward pass reads each step's input gates and previous state where they lie
// (the state product is a gemm with row strides into the output), and backward collects every step's gate gradients in
// one (B, T, G·H) buffer — which is exactly ∂loss/∂gx — so dW_hh is one gemm over all B·T rows and db_hh one column
// sum. The cell arithmetic is cell_rows.hpp, the same code gru_cell and lstm_cell run. Formulas: ops.hpp. Tests:
// tests/autograd/test_fused.cpp (equal to the loop of cells with masks; gradient checks).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "autograd/blas.hpp"
#include "autograd/cell_rows.hpp"
#include "autograd/ops.hpp"

namespace attend {

namespace {

// The sizes of a recurrence, after checking every input against the others.
struct Sizes {
  std::size_t B = 0, T = 0, H = 0, G = 0;
};

template <class T>
Sizes check_inputs(const char* op, std::size_t gates, const Variable<T>& gx, const Variable<T>& W_hh,
                   const Variable<T>& b_hh, std::initializer_list<const Variable<T>*> states,
                   const Recurrence& options) {
  const Shape& sx = gx.shape();
  const Shape& sw = W_hh.shape();
  const Shape& sb = b_hh.shape();
  bool fits =
      sx.rank() == 3 && sw.rank() == 2 && sb.rank() == 1 && sw[0] == gates * sw[1] && sx[2] == sw[0] && sb[0] == sw[0];
  std::string state_shapes;
  for (const Variable<T>* s : states) {
    const Shape& ss = s->shape();
    state_shapes += ", " + to_string(ss);
    fits = fits && ss.rank() == 2 && ss[0] == sx[0] && ss[1] == sw[1];
  }
  if (!fits) {
    const std::string g = std::to_string(gates);
    throw std::invalid_argument(std::string(op) + ": gx " + to_string(sx) + ", W_hh " + to_string(sw) + ", b_hh " +
                                to_string(sb) + " and states" + state_shapes + " do not fit (expected gx (B,T," + g +
                                "H), W_hh (" + g + "H,H), b_hh (" + g + "H,), states (B,H))");
  }
  const Sizes n{sx[0], sx[1], sw[1], gates};
  if (!options.lengths.empty()) {
    if (options.lengths.size() != n.B) {
      throw std::invalid_argument(std::string(op) + ": " + std::to_string(options.lengths.size()) +
                                  " lengths for a batch of " + std::to_string(n.B));
    }
    for (std::size_t b = 0; b < n.B; ++b) {
      const std::int64_t len = options.lengths[b];
      if (len < 0 || static_cast<std::size_t>(len) > n.T) {
        throw std::invalid_argument(std::string(op) + ": lengths[" + std::to_string(b) + "] = " + std::to_string(len) +
                                    " is outside [0, " + std::to_string(n.T) + "]");
      }
    }
  }
  return n;
}

// Whether row b takes step t (a padded step keeps the state).
bool active(const Recurrence& options, std::size_t b, std::size_t t) {
  return options.lengths.empty() || static_cast<std::int64_t>(t) < options.lengths[b];
}

// The time index of the s-th step taken.
std::size_t time_of(const Recurrence& options, std::size_t s, std::size_t T) { return options.reverse ? T - 1 - s : s; }

// rows × n, each row = bias (the β = 1 start of gh = bias + h W_hhᵀ, as linear does it)
template <class T>
void fill_rows(T* out, const T* bias, std::size_t rows, std::size_t n) {
  for (std::size_t r = 0; r < rows; ++r) std::copy(bias, bias + n, out + r * n);
}

// db (n) += Σ_rows g
template <class T>
void add_column_sums(T* db, const T* g, std::size_t rows, std::size_t n) {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t o = 0; o < n; ++o) db[o] += g[r * n + o];
}

// dW_hh (G·H, H) += dghᵀ (G·H, B·T) · h_prev (B·T, H): every step's contribution in one product
template <class T>
void add_weight_gradient(BackwardContext<T>& c, const T* dgh, const T* h_prev, std::size_t rows, std::size_t GH,
                         std::size_t H) {
  const bool add = c.has_dx(1) || rows == 0;
  blas_gemm(true, false, GH, H, rows, T(1), dgh, GH, h_prev, H, add ? T(1) : T(0),
            add ? c.dx(1).data() : c.dx_for_overwrite(1).data(), H);
}

}  // namespace

// ---- gru_sequence --------------------------------------------------------------------------------------------------

template <class T>
Variable<T> gru_sequence(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh, const Variable<T>& h0,
                         const Recurrence& options) {
  Tape<T>& tape = tape_of("gru_sequence", {&gx, &W_hh, &b_hh, &h0});
  const auto [B, Tn, H, G] = check_inputs<T>("gru_sequence", 3, gx, W_hh, b_hh, {&h0}, options);
  const std::size_t GH = G * H;
  Tensor<T> y(Shape{B, Tn, H}, uninitialized);
  // for backward: each step's [r | z | n | gh_n] (B, T, 4H) and the state it read (B, T, H)
  Tensor<T> saved(Shape{B, Tn, 4 * H}, uninitialized);
  Tensor<T> h_prev(Shape{B, Tn, H}, uninitialized);
  Tensor<T> gh(Shape{B, GH}, uninitialized);
  const T* state = h0.value().data();  // the previous state's rows: h0, then a step of y
  std::size_t state_stride = H;
  for (std::size_t s = 0; s < Tn; ++s) {
    const std::size_t t = time_of(options, s, Tn);
    // gh = b_hh + h W_hhᵀ: (B, 3H)
    fill_rows(gh.data(), b_hh.value().data(), B, GH);
    blas_gemm(false, true, B, GH, H, T(1), state, state_stride, W_hh.value().data(), H, T(1), gh.data(), GH);
    for (std::size_t b = 0; b < B; ++b) {
      const T* h_row = state + b * state_stride;
      const std::size_t bt = b * Tn + t;
      std::copy(h_row, h_row + H, h_prev.data() + bt * H);
      if (active(options, b, t)) {
        cell_rows::gru_forward(gx.value().data() + bt * GH, gh.data() + b * GH, h_row, saved.data() + bt * 4 * H,
                               y.data() + bt * H, H);
      } else {
        std::copy(h_row, h_row + H, y.data() + bt * H);
      }
    }
    state = y.data() + t * H;
    state_stride = Tn * H;
  }
  // B, Tn and H are copied by init-captures: C++17 cannot capture a structured binding (GCC allows it, clang refuses)
  return tape.record("gru_sequence", std::move(y), {gx, W_hh, b_hh, h0},
                     [B = B, Tn = Tn, H = H, GH, options, saved = std::move(saved),
                      h_prev = std::move(h_prev)](BackwardContext<T>& c) {
                       const T* dy = c.dy().data();
                       const T* W = c.x(1).data();
                       // gate gradients of every step: through gx ([R, Z, N]) and through gh ([R, Z, r N])
                       Tensor<T> dgx(Shape{B, Tn, GH});
                       Tensor<T> dgh(Shape{B, Tn, GH});
                       Tensor<T> dh(Shape{B, H});  // ∂loss/∂(the state before the current step), from later steps
                       std::vector<T> d(H);
                       for (std::size_t s = Tn; s-- > 0;) {
                         const std::size_t t = time_of(options, s, Tn);
                         for (std::size_t b = 0; b < B; ++b) {
                           const std::size_t bt = b * Tn + t;
                           T* dh_row = dh.data() + b * H;
                           // the whole gradient of h_t: from the output at t and from the step after
                           for (std::size_t k = 0; k < H; ++k) d[k] = dy[bt * H + k] + dh_row[k];
                           if (active(options, b, t)) {
                             std::fill(dh_row, dh_row + H, T(0));
                             cell_rows::gru_backward(saved.data() + bt * 4 * H, h_prev.data() + bt * H, d.data(),
                                                     dgx.data() + bt * GH, dgh.data() + bt * GH, dh_row, H);
                           } else {
                             std::copy(d.begin(), d.end(), dh_row);  // a padded step passes the gradient through
                           }
                         }
                         // dh += dgh_t W_hh: (B, 3H)·(3H, H)
                         blas_gemm(false, false, B, H, GH, T(1), dgh.data() + t * GH, Tn * GH, W, H, T(1), dh.data(),
                                   H);
                       }
                       if (c.wants(1)) add_weight_gradient(c, dgh.data(), h_prev.data(), B * Tn, GH, H);
                       if (c.wants(2)) add_column_sums(c.dx(2).data(), dgh.data(), B * Tn, GH);
                       if (c.wants(3)) c.accumulate(3, std::move(dh));
                       if (c.wants(0)) c.accumulate(0, std::move(dgx));
                     });
}

// ---- lstm_sequence -------------------------------------------------------------------------------------------------

template <class T>
Variable<T> lstm_sequence(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh,
                          const Variable<T>& h0, const Variable<T>& c0, const Recurrence& options) {
  Tape<T>& tape = tape_of("lstm_sequence", {&gx, &W_hh, &b_hh, &h0, &c0});
  const auto [B, Tn, H, G] = check_inputs<T>("lstm_sequence", 4, gx, W_hh, b_hh, {&h0, &c0}, options);
  const std::size_t GH = G * H;
  // y[0] = h_t, y[1] = c_t for every step: (2, B, T, H)
  Tensor<T> y(Shape{2, B, Tn, H}, uninitialized);
  T* hs = y.data();
  T* cs = y.data() + B * Tn * H;
  // for backward: each step's [i | f | g | o | tanh c_t] (B, T, 5H) and the states it read (B, T, H) each
  Tensor<T> saved(Shape{B, Tn, 5 * H}, uninitialized);
  Tensor<T> h_prev(Shape{B, Tn, H}, uninitialized);
  Tensor<T> c_prev(Shape{B, Tn, H}, uninitialized);
  Tensor<T> gh(Shape{B, GH}, uninitialized);
  const T* h_state = h0.value().data();
  const T* c_state = c0.value().data();
  std::size_t state_stride = H;
  for (std::size_t s = 0; s < Tn; ++s) {
    const std::size_t t = time_of(options, s, Tn);
    // gh = b_hh + h W_hhᵀ: (B, 4H)
    fill_rows(gh.data(), b_hh.value().data(), B, GH);
    blas_gemm(false, true, B, GH, H, T(1), h_state, state_stride, W_hh.value().data(), H, T(1), gh.data(), GH);
    for (std::size_t b = 0; b < B; ++b) {
      const T* h_row = h_state + b * state_stride;
      const T* c_row = c_state + b * state_stride;
      const std::size_t bt = b * Tn + t;
      std::copy(h_row, h_row + H, h_prev.data() + bt * H);
      std::copy(c_row, c_row + H, c_prev.data() + bt * H);
      if (active(options, b, t)) {
        cell_rows::lstm_forward(gx.value().data() + bt * GH, gh.data() + b * GH, c_row, saved.data() + bt * 5 * H,
                                hs + bt * H, cs + bt * H, H);
      } else {
        std::copy(h_row, h_row + H, hs + bt * H);
        std::copy(c_row, c_row + H, cs + bt * H);
      }
    }
    h_state = hs + t * H;
    c_state = cs + t * H;
    state_stride = Tn * H;
  }
  return tape.record("lstm_sequence", std::move(y), {gx, W_hh, b_hh, h0, c0},
                     [B = B, Tn = Tn, H = H, GH, options, saved = std::move(saved), h_prev = std::move(h_prev),
                      c_prev = std::move(c_prev)](BackwardContext<T>& c) {
                       const T* dhs = c.dy().data();               // ∂loss/∂h_t: (B, T, H)
                       const T* dcs = c.dy().data() + B * Tn * H;  // ∂loss/∂c_t
                       const T* W = c.x(1).data();
                       // the gate gradients of every step (the same through gx and gh): (B, T, 4H)
                       Tensor<T> da(Shape{B, Tn, GH});
                       Tensor<T> dh(Shape{B, H});  // ∂loss/∂(the states before the current step), from later steps
                       Tensor<T> dc(Shape{B, H});
                       std::vector<T> dh_total(H), dc_total(H);
                       for (std::size_t s = Tn; s-- > 0;) {
                         const std::size_t t = time_of(options, s, Tn);
                         for (std::size_t b = 0; b < B; ++b) {
                           const std::size_t bt = b * Tn + t;
                           T* dh_row = dh.data() + b * H;
                           T* dc_row = dc.data() + b * H;
                           for (std::size_t k = 0; k < H; ++k) {
                             dh_total[k] = dhs[bt * H + k] + dh_row[k];
                             dc_total[k] = dcs[bt * H + k] + dc_row[k];
                           }
                           if (active(options, b, t)) {
                             std::fill(dh_row, dh_row + H, T(0));
                             std::fill(dc_row, dc_row + H, T(0));
                             cell_rows::lstm_backward(saved.data() + bt * 5 * H, c_prev.data() + bt * H,
                                                      dh_total.data(), dc_total.data(), da.data() + bt * GH,
                                                      static_cast<T*>(nullptr), dc_row, H);
                           } else {  // a padded step passes both gradients through
                             std::copy(dh_total.begin(), dh_total.end(), dh_row);
                             std::copy(dc_total.begin(), dc_total.end(), dc_row);
                           }
                         }
                         // dh += da_t W_hh: (B, 4H)·(4H, H)
                         blas_gemm(false, false, B, H, GH, T(1), da.data() + t * GH, Tn * GH, W, H, T(1), dh.data(), H);
                       }
                       if (c.wants(1)) add_weight_gradient(c, da.data(), h_prev.data(), B * Tn, GH, H);
                       if (c.wants(2)) add_column_sums(c.dx(2).data(), da.data(), B * Tn, GH);
                       if (c.wants(3)) c.accumulate(3, std::move(dh));
                       if (c.wants(4)) c.accumulate(4, std::move(dc));
                       if (c.wants(0)) c.accumulate(0, std::move(da));
                     });
}

#define ATTEND_INSTANTIATE(T)                                                                                        \
  template Variable<T> gru_sequence(const Variable<T>&, const Variable<T>&, const Variable<T>&, const Variable<T>&,  \
                                    const Recurrence&);                                                              \
  template Variable<T> lstm_sequence(const Variable<T>&, const Variable<T>&, const Variable<T>&, const Variable<T>&, \
                                     const Variable<T>&, const Recurrence&);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
