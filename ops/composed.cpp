// The compositions of reference ops that the fused ops equal (composed.hpp), written as the chapters write them.
#include "ops/composed.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace attend {

namespace {
std::int64_t dim(std::size_t n) { return static_cast<std::int64_t>(n); }
}  // namespace

template <class T>
Variable<T> gru_step_composed(const Variable<T>& gx, const Variable<T>& gh, const Variable<T>& h) {
  tape_of("gru_step_composed", {&gx, &gh, &h});
  const std::size_t H = h.shape().rank() == 2 ? h.shape()[1] : 0;
  if (gx.shape().rank() != 2 || gh.shape() != gx.shape() || gx.shape()[1] != 3 * H) {
    throw std::invalid_argument("gru_step_composed: gx " + to_string(gx.shape()) + ", gh " + to_string(gh.shape()) +
                                " and h " + to_string(h.shape()) + " do not fit (expected (batch, 3H) and (batch, H))");
  }
  // [r, z] = σ(gx[:, :2H] + gh[:, :2H]): both gates with one add and one sigmoid, (batch, 2H)
  const Variable<T> rz = sigmoid(slice(gx, 1, 0, 2 * H) + slice(gh, 1, 0, 2 * H));
  const Variable<T> r = slice(rz, 1, 0, H);
  const Variable<T> z = slice(rz, 1, H, 2 * H);
  // n = tanh(W_n x + b_in + r ⊙ (U_n h + b_hn)): (batch, H)
  const Variable<T> n = tanh(slice(gx, 1, 2 * H, 3 * H) + r * slice(gh, 1, 2 * H, 3 * H));
  // h' = (1 - z) ⊙ n + z ⊙ h, computed as n + z ⊙ (h - n) like PyTorch
  return n + z * (h - n);
}

template <class T>
LstmState<T> lstm_step_composed(const Variable<T>& gx, const Variable<T>& gh, const Variable<T>& c) {
  tape_of("lstm_step_composed", {&gx, &gh, &c});
  const std::size_t H = c.shape().rank() == 2 ? c.shape()[1] : 0;
  if (gx.shape().rank() != 2 || gh.shape() != gx.shape() || gx.shape()[1] != 4 * H) {
    throw std::invalid_argument("lstm_step_composed: gx " + to_string(gx.shape()) + ", gh " + to_string(gh.shape()) +
                                " and c " + to_string(c.shape()) + " do not fit (expected (batch, 4H) and (batch, H))");
  }
  // all four pre-activations: (W x + b_ih) + (U h + b_hh), (batch, 4H) in the order i, f, g, o
  const Variable<T> gates = gx + gh;
  // [i, f] = σ(gates[:, :2H]): (batch, 2H)
  const Variable<T> input_forget = sigmoid(slice(gates, 1, 0, 2 * H));
  const Variable<T> i = slice(input_forget, 1, 0, H);
  const Variable<T> f = slice(input_forget, 1, H, 2 * H);
  // g = tanh(gates[:, 2H:3H]), o = σ(gates[:, 3H:])
  const Variable<T> g = tanh(slice(gates, 1, 2 * H, 3 * H));
  const Variable<T> o = sigmoid(slice(gates, 1, 3 * H, 4 * H));
  // c' = f ⊙ c + i ⊙ g;  h' = o ⊙ tanh(c')
  const Variable<T> c_next = f * c + i * g;
  return {o * tanh(c_next), c_next};
}

template <class T>
Variable<T> additive_attention_composed(const Variable<T>& q, const Variable<T>& keys, const Variable<T>& v) {
  const Shape& k = keys.shape();
  const Variable<T> v_row = v.shape().rank() == 1 ? reshape(v, {1, dim(k[2])}) : v;
  const Variable<T> hidden = tanh(reshape(q, {dim(k[0]), 1, dim(k[2])}) + keys);
  return reshape(linear(hidden, v_row), {dim(k[0]), dim(k[1])});
}

template <class T>
Variable<T> batched_matvec_composed(const Variable<T>& M, const Variable<T>& q) {
  const Shape& m = M.shape();
  return reshape(matmul(M, reshape(q, {dim(m[0]), dim(m[2]), 1})), {dim(m[0]), dim(m[1])});
}

template <class T>
Variable<T> batched_vecmat_composed(const Variable<T>& w, const Variable<T>& M) {
  const Shape& m = M.shape();
  return reshape(matmul(reshape(w, {dim(m[0]), 1, dim(m[1])}), M), {dim(m[0]), dim(m[2])});
}

template <class T>
Variable<T> layer_norm_composed(const Variable<T>& x, const Variable<T>& gamma, const Variable<T>& beta, double eps) {
  const Variable<T> centred = x - mean(x, -1, true);
  const Variable<T> variance = mean(centred * centred, -1, true);
  return centred / sqrt(variance + static_cast<T>(eps)) * gamma + beta;
}

namespace {

// The (B, 1) masks of a ragged batch, per time step: keep[t][b] = 1 where step t of row b is real, drop = 1 − keep.
// Empty when every step is real.
template <class T>
struct StepMasks {
  std::vector<Variable<T>> keep, drop;
};

template <class T>
StepMasks<T> step_masks(Tape<T>& tape, const Recurrence& r, std::size_t B, std::size_t steps) {
  StepMasks<T> m;
  if (r.lengths.empty()) return m;
  for (std::size_t t = 0; t < steps; ++t) {
    Tensor<T> keep(Shape{B, 1}), drop(Shape{B, 1});
    for (std::size_t b = 0; b < B; ++b) {
      keep.data()[b] = static_cast<std::int64_t>(t) < r.lengths.at(b) ? T(1) : T(0);
      drop.data()[b] = T(1) - keep.data()[b];
    }
    m.keep.push_back(tape.constant(std::move(keep)));
    m.drop.push_back(tape.constant(std::move(drop)));
  }
  return m;
}

// state kept on a padded step
template <class T>
Variable<T> masked(const StepMasks<T>& m, std::size_t t, const Variable<T>& next, const Variable<T>& previous) {
  return m.keep.empty() ? next : m.keep[t] * next + m.drop[t] * previous;
}

}  // namespace

template <class T>
Variable<T> gru_sequence_composed(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh,
                                  const Variable<T>& h0, const Recurrence& r) {
  const std::size_t B = gx.shape()[0], steps = gx.shape()[1];
  const StepMasks<T> m = step_masks(gx.tape(), r, B, steps);
  std::vector<Variable<T>> hs(steps);
  Variable<T> h = h0;
  for (std::size_t s = 0; s < steps; ++s) {
    const std::size_t t = r.reverse ? steps - 1 - s : s;
    h = masked(m, t, gru_step_composed(select(gx, 1, t), linear(h, W_hh, b_hh), h), h);
    hs[t] = h;
  }
  return stack(hs, 1);
}

template <class T>
Variable<T> lstm_sequence_composed(const Variable<T>& gx, const Variable<T>& W_hh, const Variable<T>& b_hh,
                                   const Variable<T>& h0, const Variable<T>& c0, const Recurrence& r) {
  const std::size_t B = gx.shape()[0], steps = gx.shape()[1];
  const StepMasks<T> m = step_masks(gx.tape(), r, B, steps);
  std::vector<Variable<T>> hs(steps), cs(steps);
  Variable<T> h = h0, c = c0;
  for (std::size_t s = 0; s < steps; ++s) {
    const std::size_t t = r.reverse ? steps - 1 - s : s;
    const LstmState<T> next = lstm_step_composed(select(gx, 1, t), linear(h, W_hh, b_hh), c);
    h = masked(m, t, next.h, h);
    c = masked(m, t, next.c, c);
    hs[t] = h;
    cs[t] = c;
  }
  return stack<T>({stack(hs, 1), stack(cs, 1)}, 0);
}

namespace {

// (B, T, H·d) → (B·H, T, d) and back
template <class T>
Variable<T> split_heads(const Variable<T>& x, std::size_t heads) {
  const std::int64_t B = dim(x.shape()[0]), steps = dim(x.shape()[1]), H = dim(heads), d = dim(x.shape()[2] / heads);
  return reshape(transpose(reshape(x, {B, steps, H, d}), 1, 2), {B * H, steps, d});
}
template <class T>
Variable<T> merge_heads(const Variable<T>& x, std::size_t batch) {
  const std::int64_t B = dim(batch), H = dim(x.shape()[0] / batch), steps = dim(x.shape()[1]), d = dim(x.shape()[2]);
  return reshape(transpose(reshape(x, {B, H, steps, d}), 1, 2), {B, steps, H * d});
}

// (B·H, T_q, T_k): 1 where query i of batch entry b may see key k (a real key, and k ≤ i when causal)
Mask attention_mask(const AttentionOptions& o, std::size_t B, std::size_t Tq, std::size_t Tk) {
  Mask m(Shape{B * o.heads, Tq, Tk});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < o.heads; ++h)
      for (std::size_t i = 0; i < Tq; ++i)
        for (std::size_t k = 0; k < Tk; ++k) {
          const bool real = o.key_padding.size() == 0 || o.key_padding.at({b, k}) != 0;
          m.data()[((b * o.heads + h) * Tq + i) * Tk + k] = real && (!o.causal || k <= i);
        }
  return m;
}

}  // namespace

template <class T>
Variable<T> scaled_dot_product_attention_composed(const Variable<T>& q, const Variable<T>& k, const Variable<T>& v,
                                                  const AttentionOptions& o) {
  if (o.training && o.dropout > 0.0) {
    throw std::invalid_argument("scaled_dot_product_attention_composed: no dropout here (dropout " +
                                std::to_string(o.dropout) + " while training); the fused op's draws would differ");
  }
  const std::size_t B = q.shape()[0], H = o.heads;
  const Variable<T> Q = split_heads(q, H), K = split_heads(k, H), V = split_heads(v, H);
  const double scale = o.scale != 0.0 ? o.scale : 1.0 / std::sqrt(static_cast<double>(Q.shape()[2]));
  const Variable<T> e = matmul(Q, transpose(K)) * static_cast<T>(scale);
  const Variable<T> alpha = softmax(e, -1, attention_mask(o, B, q.shape()[1], k.shape()[1]));
  return merge_heads(matmul(alpha, V), B);
}

template <class T>
Variable<T> cross_entropy_composed(const Variable<T>& logits, const Ids& targets, std::int64_t ignore_id,
                                   double label_smoothing) {
  const Variable<T> log_p = log_softmax(logits, -1);
  const Variable<T> nll = nll_loss(log_p, targets, ignore_id);
  if (label_smoothing == 0.0) return nll;
  Tensor<T> real(targets.shape());  // 1 for a row that counts
  std::size_t counted = 0;
  for (std::size_t n = 0; n < targets.size(); ++n) {
    if (targets.data()[n] == ignore_id) continue;
    real.data()[n] = T(1);
    ++counted;
  }
  const double classes = static_cast<double>(logits.shape()[logits.shape().rank() - 1]);
  const Variable<T> every_class = neg(sum(sum(log_p, -1) * logits.tape().constant(std::move(real))));
  const double per_row = counted == 0 ? 0.0 : label_smoothing / classes / static_cast<double>(counted);
  return nll * static_cast<T>(1.0 - label_smoothing) + every_class * static_cast<T>(per_row);
}

template <class T>
Variable<T> linear_cross_entropy_composed(const Variable<T>& x, const Variable<T>& W, const Variable<T>& b,
                                          const Ids& targets, std::int64_t ignore_id, double label_smoothing) {
  return cross_entropy_composed(linear(x, W, b), targets, ignore_id, label_smoothing);
}

#define ATTEND_INSTANTIATE(T)                                                                                    \
  template Variable<T> gru_step_composed(const Variable<T>&, const Variable<T>&, const Variable<T>&);            \
  template LstmState<T> lstm_step_composed(const Variable<T>&, const Variable<T>&, const Variable<T>&);          \
  template Variable<T> additive_attention_composed(const Variable<T>&, const Variable<T>&, const Variable<T>&);  \
  template Variable<T> batched_matvec_composed(const Variable<T>&, const Variable<T>&);                          \
  template Variable<T> batched_vecmat_composed(const Variable<T>&, const Variable<T>&);                          \
  template Variable<T> layer_norm_composed(const Variable<T>&, const Variable<T>&, const Variable<T>&, double);  \
  template Variable<T> gru_sequence_composed(const Variable<T>&, const Variable<T>&, const Variable<T>&,         \
                                             const Variable<T>&, const Recurrence&);                             \
  template Variable<T> lstm_sequence_composed(const Variable<T>&, const Variable<T>&, const Variable<T>&,        \
                                              const Variable<T>&, const Variable<T>&, const Recurrence&);        \
  template Variable<T> scaled_dot_product_attention_composed(const Variable<T>&, const Variable<T>&,             \
                                                             const Variable<T>&, const AttentionOptions&);       \
  template Variable<T> cross_entropy_composed(const Variable<T>&, const Ids&, std::int64_t, double);             \
  template Variable<T> linear_cross_entropy_composed(const Variable<T>&, const Variable<T>&, const Variable<T>&, \
                                                     const Ids&, std::int64_t, double);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
