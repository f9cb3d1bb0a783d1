// Fused recurrences: a whole GRU or LSTM layer over time as one tape node (gru_sequence, lstm_sequence).
//
// Why: an encoder run step by step records, per step, a copy of the step's input gates, the state product, the cell,
// and for an LSTM two more copies to split [h'; c']; backward then zero-fills a gradient slot for each of them and runs
// one small dW_hh gemm per step. Here the forward pass reads each step's input gates and previous state where they lie
// (the state product is a gemm with row strides into the output), and backward collects every step's gate gradients in
// one (B, T, G·H) buffer — which is exactly ∂loss/∂gx — so dW_hh is one gemm over all B·T rows and db_hh one column
// sum. The walk over time is written once (recurrence<Cell>: Forward and backward below); GruRows and LstmRows say
// what differs, and their arithmetic is cell_rows.hpp, the same code gru_cell and lstm_cell run. Formulas: ops.hpp.
// Tests: tests/ops/test_equals.cpp (equal to the loop of composed steps with masks), test_fused.cpp (gradient checks).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ops/cell_rows.hpp"
#include "ops/fused.hpp"
#include "precision/products.hpp"

namespace attend {

namespace {

// The sizes of a recurrence, after checking every input against the others.
struct Sizes {
  std::size_t B = 0, T = 0, H = 0, G = 0;
};

template <class T>
Sizes check_inputs(const char* op, std::size_t gates, const Variable<T>& gx, const Variable<T>& W_hh,
                   const Variable<T>& b_hh, const std::vector<const Variable<T>*>& states, const Recurrence& options) {
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

// The same check for one step: gx (B, G·H) instead of (B, T, G·H).
template <class T>
void check_step_inputs(const char* op, std::size_t gates, const Variable<T>& gx, const Variable<T>& W_hh,
                       const Variable<T>& b_hh, const std::vector<const Variable<T>*>& states) {
  const Shape& sx = gx.shape();
  const Shape& sw = W_hh.shape();
  const Shape& sb = b_hh.shape();
  bool fits =
      sx.rank() == 2 && sw.rank() == 2 && sb.rank() == 1 && sw[0] == gates * sw[1] && sx[1] == sw[0] && sb[0] == sw[0];
  std::string state_shapes;
  for (const Variable<T>* s : states) {
    const Shape& ss = s->shape();
    state_shapes += ", " + to_string(ss);
    fits = fits && ss.rank() == 2 && ss[0] == sx[0] && ss[1] == sw[1];
  }
  if (!fits) {
    const std::string g = std::to_string(gates);
    throw std::invalid_argument(std::string(op) + ": gx " + to_string(sx) + ", W_hh " + to_string(sw) + ", b_hh " +
                                to_string(sb) + " and states" + state_shapes + " do not fit (expected gx (B," + g +
                                "H), W_hh (" + g + "H,H), b_hh (" + g + "H,), states (B,H))");
  }
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
void add_weight_gradient(const Products* products, BackwardContext<T>& c, const T* dgh, const T* h_prev,
                         std::size_t rows, std::size_t GH, std::size_t H) {
  const bool add = c.has_dx(1) || rows == 0;
  gemm(products, true, false, GH, H, rows, T(1), dgh, GH, h_prev, H, add ? T(1) : T(0),
       add ? c.dx(1).data() : c.dx_for_overwrite(1).data(), H);
}

// ---- the cells: what differs between the GRU and the LSTM -----------------------------------------------------------

// The GRU: one state h (y is (B, T, H)); saves [r | z | n | gh_n] (4H) a step; its gate gradients through gx and
// through gh differ ([R, Z, N] and [R, Z, r N]), so it keeps both.
struct GruRows {
  static constexpr const char* name = "gru_sequence";
  static constexpr std::size_t gates = 3, states = 1, saved_width = 4;
  static constexpr bool shared_gate_gradients = false;
  template <class T>
  static void forward(const T* gx, const T* gh, const T* const* state, T* saved, T* const* next, std::size_t H) {
    cell_rows::gru_forward(gx, gh, state[0], saved, next[0], H);
  }
  template <class T>
  static void backward(const T* saved, const T* const* prev, const T* const* total, T* dgx, T* dgh, T* const* dstate,
                       std::size_t H) {
    cell_rows::gru_backward(saved, prev[0], total[0], dgx, dgh, dstate[0], H);
  }
};

// The LSTM: states h and c (y is (2, B, T, H): y[0] = h_t, y[1] = c_t); saves [i | f | g | o | tanh c_t] (5H) a step;
// its gate gradients are the same through gx and gh (one buffer); h_{t-1} gets its gradient only through W_hh.
struct LstmRows {
  static constexpr const char* name = "lstm_sequence";
  static constexpr std::size_t gates = 4, states = 2, saved_width = 5;
  static constexpr bool shared_gate_gradients = true;
  template <class T>
  static void forward(const T* gx, const T* gh, const T* const* state, T* saved, T* const* next, std::size_t H) {
    cell_rows::lstm_forward(gx, gh, state[1], saved, next[0], next[1], H);
  }
  template <class T>
  static void backward(const T* saved, const T* const* prev, const T* const* total, T* dgx, T*, T* const* dstate,
                       std::size_t H) {
    cell_rows::lstm_backward(saved, prev[1], total[0], total[1], dgx, static_cast<T*>(nullptr), dstate[1], H);
  }
};

// ---- the walk over time, once for both ----------------------------------------------------------------------------

// The forward walk: per step, the state product gh = b_hh + h W_hhᵀ as one gemm reading the previous state where it
// lies (h0, then a step of y), then the cell rows of every active row (a padded row keeps its states). Each step's
// saved activations and the states it read are kept for backward.
template <class Cell, class T>
struct Forward {
  std::size_t B, Tn, H, GH;
  Tensor<T> y, saved;
  std::vector<Tensor<T>> prev;  // the states each step read, (B, T, H) each

  Forward(std::size_t B_, std::size_t T_, std::size_t H_)
      : B(B_), Tn(T_), H(H_), GH(Cell::gates * H_), saved(Shape{B_, T_, Cell::saved_width * H_}, uninitialized) {
    y = Cell::states == 1 ? Tensor<T>(Shape{B, Tn, H}, uninitialized)
                          : Tensor<T>(Shape{Cell::states, B, Tn, H}, uninitialized);
    for (std::size_t k = 0; k < Cell::states; ++k) prev.emplace_back(Shape{B, Tn, H}, uninitialized);
  }

  void run(const Products* products, const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh,
           const std::vector<const Variable<T>*>& initial, const Recurrence& options) {
    Tensor<T> gh(Shape{B, GH}, uninitialized);
    std::vector<const T*> state(Cell::states);  // the previous states' rows: the initial ones, then a step of y
    for (std::size_t k = 0; k < Cell::states; ++k) state[k] = initial[k]->value().data();
    std::size_t state_stride = H;
    std::vector<const T*> rows(Cell::states);
    std::vector<T*> next(Cell::states);
    const WeightOperands weights{nullptr, weight_of(W_hh)};  // once, not at every step
    for (std::size_t s = 0; s < Tn; ++s) {
      const std::size_t t = time_of(options, s, Tn);
      // gh = b_hh + h W_hhᵀ: (B, G·H)
      fill_rows(gh.data(), b_hh.value().data(), B, GH);
      gemm(products, false, true, B, GH, H, T(1), state[0], state_stride, W_hh.value().data(), H, T(1), gh.data(), GH,
           weights);
      for (std::size_t b = 0; b < B; ++b) {
        const std::size_t bt = b * Tn + t;
        for (std::size_t k = 0; k < Cell::states; ++k) {
          rows[k] = state[k] + b * state_stride;
          next[k] = output(k) + bt * H;
          std::copy(rows[k], rows[k] + H, prev[k].data() + bt * H);
        }
        if (active(options, b, t)) {
          Cell::forward(gx.value().data() + bt * GH, gh.data() + b * GH, rows.data(),
                        saved.data() + bt * Cell::saved_width * H, next.data(), H);
        } else {
          for (std::size_t k = 0; k < Cell::states; ++k) std::copy(rows[k], rows[k] + H, next[k]);
        }
      }
      for (std::size_t k = 0; k < Cell::states; ++k) state[k] = output(k) + t * H;
      state_stride = Tn * H;
    }
  }

  T* output(std::size_t k) { return y.data() + k * B * Tn * H; }
};

// The backward walk, in reverse order of the steps: per row the whole gradient of each state (from the output at t
// and from the step after), the cell rows' gate gradients into one (B, T, G·H) buffer (∂loss/∂gx), and dh += dgh_t W_hh
// as one gemm a step; then dW_hh as one gemm over all B·T rows and db_hh as one column sum.
template <class Cell, class T>
void backward(const Products* products, const Parameter<float>* weight, BackwardContext<T>& c, std::size_t B,
              std::size_t Tn, std::size_t H, const Recurrence& options, const Tensor<T>& saved,
              const std::vector<Tensor<T>>& prev) {
  const std::size_t GH = Cell::gates * H;
  const T* W = c.x(1).data();
  Tensor<T> dgx(Shape{B, Tn, GH});
  Tensor<T> dgh_own(Shape{Cell::shared_gate_gradients ? 0 : B, Tn, GH});
  Tensor<T>& dgh = Cell::shared_gate_gradients ? dgx : dgh_own;
  std::vector<Tensor<T>> dstate;  // ∂loss/∂(the states before the current step), from later steps: (B, H) each
  std::vector<std::vector<T>> total(Cell::states, std::vector<T>(H));
  for (std::size_t k = 0; k < Cell::states; ++k) dstate.emplace_back(Shape{B, H});
  std::vector<const T*> prev_rows(Cell::states), total_rows(Cell::states);
  std::vector<T*> dstate_rows(Cell::states);
  for (std::size_t s = Tn; s-- > 0;) {
    const std::size_t t = time_of(options, s, Tn);
    for (std::size_t b = 0; b < B; ++b) {
      const std::size_t bt = b * Tn + t;
      for (std::size_t k = 0; k < Cell::states; ++k) {
        const T* dy = c.dy().data() + k * B * Tn * H;
        dstate_rows[k] = dstate[k].data() + b * H;
        for (std::size_t i = 0; i < H; ++i) total[k][i] = dy[bt * H + i] + dstate_rows[k][i];
        prev_rows[k] = prev[k].data() + bt * H;
        total_rows[k] = total[k].data();
      }
      if (active(options, b, t)) {
        for (T* row : dstate_rows) std::fill(row, row + H, T(0));
        Cell::backward(saved.data() + bt * Cell::saved_width * H, prev_rows.data(), total_rows.data(),
                       dgx.data() + bt * GH, dgh.data() + bt * GH, dstate_rows.data(), H);
      } else {  // a padded step passes the gradients through
        for (std::size_t k = 0; k < Cell::states; ++k) std::copy(total[k].begin(), total[k].end(), dstate_rows[k]);
      }
    }
    // dh += dgh_t W_hh: (B, G·H)·(G·H, H)
    gemm(products, false, false, B, H, GH, T(1), dgh.data() + t * GH, Tn * GH, W, H, T(1), dstate[0].data(), H,
         {nullptr, weight});
  }
  if (c.wants(1)) add_weight_gradient(products, c, dgh.data(), prev[0].data(), B * Tn, GH, H);
  if (c.wants(2)) add_column_sums(c.dx(2).data(), dgh.data(), B * Tn, GH);
  for (std::size_t k = 0; k < Cell::states; ++k) {
    if (c.wants(3 + k)) c.accumulate(3 + k, std::move(dstate[k]));
  }
  if (c.wants(0)) c.accumulate(0, std::move(dgx));
}

// A whole recurrence as one tape node: inputs gx, W_hh, b_hh and the initial states.
template <class Cell, class T>
Variable<T> recurrence(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh,
                       const std::vector<const Variable<T>*>& initial, const Recurrence& options) {
  Tape<T>& tape = tape_of(Cell::name, {&gx, &W_hh, &b_hh});
  for (const Variable<T>* state : initial) tape.check(*state, Cell::name);
  const Sizes n = check_inputs<T>(Cell::name, Cell::gates, gx, W_hh, b_hh, initial, options);
  const Products* products = products_of(tape);
  Forward<Cell, T> f(n.B, n.T, n.H);
  f.run(products, gx, W_hh, b_hh, initial, options);
  std::vector<Variable<T>> inputs = {gx, W_hh, b_hh};
  for (const Variable<T>* state : initial) inputs.push_back(*state);
  return tape.record(Cell::name, std::move(f.y), inputs,
                     [products, weight = weight_of(W_hh), B = n.B, Tn = n.T, H = n.H, options,
                      saved = std::move(f.saved), prev = std::move(f.prev)](BackwardContext<T>& c) {
                       backward<Cell>(products, weight, c, B, Tn, H, options, saved, prev);
                     });
}

}  // namespace

template <class T>
Variable<T> gru_sequence(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh, const Variable<T>& h0,
                         const Recurrence& options) {
  return recurrence<GruRows>(gx, W_hh, b_hh, {&h0}, options);
}

template <class T>
Variable<T> lstm_sequence(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh,
                          const Variable<T>& h0, const Variable<T>& c0, const Recurrence& options) {
  return recurrence<LstmRows>(gx, W_hh, b_hh, {&h0, &c0}, options);
}

template <class T>
Variable<T> gru_step(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh, const Variable<T>& h) {
  check_step_inputs("gru_step", 3, gx, W_hh, b_hh, {&h});
  return gru_cell(gx, dense(h, W_hh, b_hh), h);
}

template <class T>
LstmState<T> lstm_step(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh, const Variable<T>& h,
                       const Variable<T>& c) {
  check_step_inputs("lstm_step", 4, gx, W_hh, b_hh, {&h, &c});
  return hidden_and_cell(lstm_cell(gx, dense(h, W_hh, b_hh), c));
}

template <class T>
LstmState<T> hidden_and_cell(const Variable<T>& hc) {
  const Shape& s = hc.shape();
  if (!((s.rank() == 3 || s.rank() == 4) && s[0] == 2)) {
    throw std::invalid_argument("hidden_and_cell: " + to_string(s) +
                                " is not an LSTM output (2,B,H) from lstm_cell or (2,B,T,H) from lstm_sequence");
  }
  return {select(hc, 0, 0), select(hc, 0, 1)};
}

#define ATTEND_INSTANTIATE(T)                                                                                        \
  template Variable<T> gru_sequence(const Variable<T>&, const Variable<T>&, const Variable<T>&, const Variable<T>&,  \
                                    const Recurrence&);                                                              \
  template Variable<T> lstm_sequence(const Variable<T>&, const Variable<T>&, const Variable<T>&, const Variable<T>&, \
                                     const Variable<T>&, const Recurrence&);                                         \
  template Variable<T> gru_step(const Variable<T>&, const Variable<T>&, const Variable<T>&, const Variable<T>&);     \
  template LstmState<T> lstm_step(const Variable<T>&, const Variable<T>&, const Variable<T>&, const Variable<T>&,    \
                                  const Variable<T>&);                                                               \
  template LstmState<T> hidden_and_cell(const Variable<T>&);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
