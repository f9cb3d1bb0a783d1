// The two ops the Transformer adds to the library: layer normalisation over the last axis, and scaled dot-product
// attention over every head of a batch at once. Each is one node with a hand-written backward that keeps only what its
// derivative needs (layer_norm: each row's mean and 1/σ; attention: the weights α), each is tested equal to its
// composition from the small ops (tests/ops/test_equals.cpp) and gradient-checked (tests/ops/test_transformer.cpp).
// Formulas: ops.hpp.
//
// Heads without copies: q (B, T_q, H·d) holds head h of position i in columns h·d … h·d + d − 1 of row (b, i), which is
// exactly how a projection x W_qᵀ lays them out. A head's Q_bh is then the (T_q, d) matrix at q + b·T_q·H·d + h·d with
// row stride H·d, and every product below is one gemm over such strided matrices: no (B, H, T, d) transposes forward
// or backward.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "ops/fused.hpp"
#include "precision/products.hpp"

namespace attend {

// ---- layer_norm --------------------------------------------------------------------------------------------------

template <class T>
Variable<T> layer_norm(const Variable<T>& x, const Variable<T>& gamma, const Variable<T>& beta, double eps) {
  Tape<T>& tape = tape_of("layer_norm", {&x, &gamma, &beta});
  const Shape& sx = x.shape();
  if (sx.rank() < 1 || gamma.shape() != Shape{sx[sx.rank() - 1]} || beta.shape() != gamma.shape()) {
    throw std::invalid_argument("layer_norm: x " + to_string(sx) + ", gamma " + to_string(gamma.shape()) +
                                " and beta " + to_string(beta.shape()) +
                                " do not fit (expected x (..., D), gamma and beta (D,))");
  }
  if (!(eps > 0.0)) throw std::invalid_argument("layer_norm: eps " + std::to_string(eps) + " must be > 0");
  const std::size_t D = sx[sx.rank() - 1], N = D == 0 ? 0 : sx.size() / D;
  Tensor<T> y(sx, uninitialized);
  // per row: the mean μ and r = 1/√(σ² + ε), all backward needs besides x, γ
  Tensor<T> stats(Shape{N, 2}, uninitialized);
  const T* xp = x.value().data();
  const T* g = gamma.value().data();
  const T* b = beta.value().data();
  for (std::size_t n = 0; n < N; ++n) {
    const T* row = xp + n * D;
    T* out = y.data() + n * D;
    T sum = 0;
    for (std::size_t k = 0; k < D; ++k) sum += row[k];
    const T mean = sum / static_cast<T>(D);
    T squares = 0;
    for (std::size_t k = 0; k < D; ++k) squares += (row[k] - mean) * (row[k] - mean);
    // the biased variance (divided by D, as torch.nn.LayerNorm), ε inside the square root
    const T r = T(1) / std::sqrt(squares / static_cast<T>(D) + static_cast<T>(eps));
    for (std::size_t k = 0; k < D; ++k) out[k] = g[k] * ((row[k] - mean) * r) + b[k];
    stats.data()[2 * n] = mean;
    stats.data()[2 * n + 1] = r;
  }
  return tape.record("layer_norm", std::move(y), {x, gamma, beta},
                     [N, D, stats = std::move(stats)](BackwardContext<T>& c) {
                       const T* dy = c.dy().data();
                       const T* xv = c.x(0).data();
                       const T* gv = c.x(1).data();
                       T* dx = c.wants(0) ? c.dx(0).data() : nullptr;
                       T* dgamma = c.wants(1) ? c.dx(1).data() : nullptr;
                       T* dbeta = c.wants(2) ? c.dx(2).data() : nullptr;
                       for (std::size_t n = 0; n < N; ++n) {
                         const T mean = stats.data()[2 * n], r = stats.data()[2 * n + 1];
                         const T* row = xv + n * D;
                         const T* d = dy + n * D;
                         // a = mean_k(dy γ), b = mean_k(dy γ x̂)
                         T a = 0, bsum = 0;
                         for (std::size_t k = 0; k < D; ++k) {
                           const T xhat = (row[k] - mean) * r;
                           if (dgamma) dgamma[k] += d[k] * xhat;
                           if (dbeta) dbeta[k] += d[k];
                           a += d[k] * gv[k];
                           bsum += d[k] * gv[k] * xhat;
                         }
                         if (!dx) continue;
                         a /= static_cast<T>(D);
                         bsum /= static_cast<T>(D);
                         for (std::size_t k = 0; k < D; ++k) {
                           const T xhat = (row[k] - mean) * r;
                           dx[n * D + k] += r * (d[k] * gv[k] - a - xhat * bsum);
                         }
                       }
                     });
}

// ---- scaled_dot_product_attention ----------------------------------------------------------------------------

namespace {

// The sizes of an attention call, after checking every input against the others.
struct AttentionSizes {
  std::size_t B = 0, H = 0, Tq = 0, Tk = 0, d = 0, dv = 0;
};

template <class T>
AttentionSizes check_attention(const Variable<T>& q, const Variable<T>& k, const Variable<T>& v,
                               const AttentionOptions& options) {
  const Shape& sq = q.shape();
  const Shape& sk = k.shape();
  const Shape& sv = v.shape();
  const std::size_t H = options.heads;
  const bool fits = H > 0 && sq.rank() == 3 && sk.rank() == 3 && sv.rank() == 3 && sk[0] == sq[0] && sv[0] == sq[0] &&
                    sk[2] == sq[2] && sv[1] == sk[1] && sq[2] % H == 0 && sv[2] % H == 0;
  if (!fits) {
    throw std::invalid_argument("scaled_dot_product_attention: q " + to_string(sq) + ", k " + to_string(sk) +
                                " and v " + to_string(sv) + " do not fit " + std::to_string(H) +
                                " heads (expected q (B,T_q,H·d), k (B,T_k,H·d), v (B,T_k,H·d_v))");
  }
  const AttentionSizes n{sq[0], H, sq[1], sk[1], sq[2] / H, sv[2] / H};
  const Mask& pad = options.key_padding;
  if (pad.size() > 0 && pad.shape() != Shape{n.B, n.Tk}) {
    throw std::invalid_argument("scaled_dot_product_attention: key_padding " + to_string(pad.shape()) +
                                " does not fit keys " + to_string(sk) +
                                " (expected (B,T_k) = " + to_string(Shape{n.B, n.Tk}) + ")");
  }
  if (options.causal && n.Tq != n.Tk) {
    throw std::invalid_argument(
        "scaled_dot_product_attention: a causal mask needs as many queries as keys, got T_q = " + std::to_string(n.Tq) +
        " and T_k = " + std::to_string(n.Tk) + " (decoding with a cache attends to every cached key: no causal mask)");
  }
  if (!(options.dropout >= 0.0 && options.dropout < 1.0)) {
    throw std::invalid_argument("scaled_dot_product_attention: dropout " + std::to_string(options.dropout) +
                                " is outside [0, 1)");
  }
  if (options.dropout > 0.0 && options.rng == nullptr) {
    throw std::invalid_argument("scaled_dot_product_attention: dropout " + std::to_string(options.dropout) +
                                " needs a generator (options.rng)");
  }
  return n;
}

// Row i of one head's weights: α_ik = softmax over the allowed keys of e_ik (already scaled, in place); disallowed
// keys get exactly 0, and a row with no allowed key is all zeros.
template <class T>
void masked_softmax_row(T* e, std::size_t Tk, const std::uint8_t* pad, std::size_t last_allowed) {
  T max = -std::numeric_limits<T>::infinity();
  for (std::size_t k = 0; k <= last_allowed && k < Tk; ++k) {
    if (pad == nullptr || pad[k]) max = std::max(max, e[k]);
  }
  if (max == -std::numeric_limits<T>::infinity()) {
    std::fill(e, e + Tk, T(0));
    return;
  }
  T sum = 0;
  for (std::size_t k = 0; k < Tk; ++k) {
    const bool allowed = k <= last_allowed && (pad == nullptr || pad[k]);
    e[k] = allowed ? std::exp(e[k] - max) : T(0);
    sum += e[k];
  }
  const T inv = T(1) / sum;
  for (std::size_t k = 0; k < Tk; ++k) e[k] *= inv;
}

}  // namespace

template <class T>
Variable<T> scaled_dot_product_attention(const Variable<T>& q, const Variable<T>& k, const Variable<T>& v,
                                         const AttentionOptions& options, Tensor<T>* weights) {
  Tape<T>& tape = tape_of("scaled_dot_product_attention", {&q, &k, &v});
  const AttentionSizes n = check_attention(q, k, v, options);
  const Products* products = products_of(tape);
  const std::size_t B = n.B, H = n.H, Tq = n.Tq, Tk = n.Tk, d = n.d, dv = n.dv;
  const std::size_t ldq = H * d, ldv = H * dv;
  const T scale = options.scale > 0.0 ? static_cast<T>(options.scale) : T(1) / std::sqrt(static_cast<T>(d));
  const bool dropping = options.dropout > 0.0 && options.training;
  // α (B, H, T_q, T_k): the weights, kept for backward; with dropout also m / (1 − p) per weight
  Tensor<T> alpha(Shape{B, H, Tq, Tk}, uninitialized);
  Tensor<T> keep = dropping ? Tensor<T>(Shape{B, H, Tq, Tk}, uninitialized) : Tensor<T>();
  Tensor<T> y(Shape{B, Tq, ldv}, uninitialized);
  std::vector<T> dropped(dropping ? Tq * Tk : 0);
  const T keep_scale = dropping ? static_cast<T>(1.0 / (1.0 - options.dropout)) : T(1);
  Rng* draw = dropping ? options.rng : nullptr;
  for (std::size_t b = 0; b < B; ++b) {
    const std::uint8_t* pad = options.key_padding.size() > 0 ? options.key_padding.data() + b * Tk : nullptr;
    for (std::size_t h = 0; h < H; ++h) {
      T* a = alpha.data() + (b * H + h) * Tq * Tk;
      const T* Q = q.value().data() + b * Tq * ldq + h * d;
      const T* K = k.value().data() + b * Tk * ldq + h * d;
      const T* V = v.value().data() + b * Tk * ldv + h * dv;
      // e = Q Kᵀ / √d: (T_q, T_k)
      gemm(products, false, true, Tq, Tk, d, scale, Q, ldq, K, ldq, T(0), a, Tk);
      // α = softmax(e) over the keys each query may see (padding and, if causal, k ≤ i)
      for (std::size_t i = 0; i < Tq; ++i) masked_softmax_row(a + i * Tk, Tk, pad, options.causal ? i : Tk);
      const T* used = a;
      if (dropping) {
        T* m = keep.data() + (b * H + h) * Tq * Tk;
        for (std::size_t j = 0; j < Tq * Tk; ++j) {
          m[j] = draw->uniform() >= options.dropout ? keep_scale : T(0);
          dropped[j] = a[j] * m[j];
        }
        used = dropped.data();
      }
      // y_bh = α V: (T_q, d_v), written into its head's columns
      gemm(products, false, false, Tq, dv, Tk, T(1), used, Tk, V, ldv, T(0), y.data() + b * Tq * ldv + h * dv, ldv);
    }
  }
  if (weights != nullptr) *weights = alpha;
  return tape.record("scaled_dot_product_attention", std::move(y), {q, k, v},
                     [products, n, scale, alpha = std::move(alpha), keep = std::move(keep)](BackwardContext<T>& c) {
                       const std::size_t B = n.B, H = n.H, Tq = n.Tq, Tk = n.Tk, d = n.d, dv = n.dv, ldq = H * d,
                                         ldv = H * dv;
                       const bool dropping = keep.size() > 0;
                       T* dq = c.wants(0) ? c.dx(0).data() : nullptr;
                       T* dk = c.wants(1) ? c.dx(1).data() : nullptr;
                       T* dvv = c.wants(2) ? c.dx(2).data() : nullptr;
                       std::vector<T> dalpha(Tq * Tk), used(dropping ? Tq * Tk : 0);
                       for (std::size_t b = 0; b < B; ++b) {
                         for (std::size_t h = 0; h < H; ++h) {
                           const std::size_t bh = (b * H + h) * Tq * Tk;
                           const T* a = alpha.data() + bh;
                           const T* m = dropping ? keep.data() + bh : nullptr;
                           const T* dY = c.dy().data() + b * Tq * ldv + h * dv;
                           const T* Q = c.x(0).data() + b * Tq * ldq + h * d;
                           const T* K = c.x(1).data() + b * Tk * ldq + h * d;
                           const T* V = c.x(2).data() + b * Tk * ldv + h * dv;
                           // dV += α'ᵀ dY  (α' = α ⊙ m / (1 − p), or α)
                           if (dvv) {
                             const T* a_used = a;
                             if (dropping) {
                               for (std::size_t j = 0; j < Tq * Tk; ++j) used[j] = a[j] * m[j];
                               a_used = used.data();
                             }
                             gemm(products, true, false, Tk, dv, Tq, T(1), a_used, Tk, dY, ldv, T(1),
                                  dvv + b * Tk * ldv + h * dv, ldv);
                           }
                           if (!dq && !dk) continue;
                           // dα = dY Vᵀ (⊙ m / (1 − p)): (T_q, T_k)
                           gemm(products, false, true, Tq, Tk, dv, T(1), dY, ldv, V, ldv, T(0), dalpha.data(), Tk);
                           // de_ik = α_ik (dα_ik − Σ_j dα_ij α_ij), times the scale: the gradient of e = Q Kᵀ · scale
                           for (std::size_t i = 0; i < Tq; ++i) {
                             T* row = dalpha.data() + i * Tk;
                             const T* arow = a + i * Tk;
                             if (dropping)
                               for (std::size_t j = 0; j < Tk; ++j) row[j] *= m[i * Tk + j];
                             T dot = 0;
                             for (std::size_t j = 0; j < Tk; ++j) dot += row[j] * arow[j];
                             for (std::size_t j = 0; j < Tk; ++j) row[j] = arow[j] * (row[j] - dot) * scale;
                           }
                           // dQ += de K,  dK += deᵀ Q
                           if (dq)
                             gemm(products, false, false, Tq, d, Tk, T(1), dalpha.data(), Tk, K, ldq, T(1),
                                  dq + b * Tq * ldq + h * d, ldq);
                           if (dk)
                             gemm(products, true, false, Tk, d, Tq, T(1), dalpha.data(), Tk, Q, ldq, T(1),
                                  dk + b * Tk * ldq + h * d, ldq);
                         }
                       }
                     });
}

#define ATTEND_INSTANTIATE(T)                                                                                   \
  template Variable<T> layer_norm(const Variable<T>&, const Variable<T>&, const Variable<T>&, double);          \
  template Variable<T> scaled_dot_product_attention(const Variable<T>&, const Variable<T>&, const Variable<T>&, \
                                                    const AttentionOptions&, Tensor<T>*);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
