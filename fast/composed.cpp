// The compositions of reference ops that the fused ops equal (composed.hpp), written as the chapters write them.
#include "fast/composed.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

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

#define ATTEND_INSTANTIATE(T)                                                                                   \
  template Variable<T> gru_step_composed(const Variable<T>&, const Variable<T>&, const Variable<T>&);           \
  template LstmState<T> lstm_step_composed(const Variable<T>&, const Variable<T>&, const Variable<T>&);         \
  template Variable<T> additive_attention_composed(const Variable<T>&, const Variable<T>&, const Variable<T>&); \
  template Variable<T> batched_matvec_composed(const Variable<T>&, const Variable<T>&);                         \
  template Variable<T> batched_vecmat_composed(const Variable<T>&, const Variable<T>&);                         \
  template Variable<T> layer_norm_composed(const Variable<T>&, const Variable<T>&, const Variable<T>&, double);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
