// The score functions, attention weights and context vector (attention.hpp).
#include "models/attention.hpp"

#include <cmath>
#include <stdexcept>

namespace attend::models {

namespace {

// A bias-free torch.nn.Linear(in, out) weight: (out, in), U(-1/√in, 1/√in) like PyTorch's default.
template <class T>
Parameter<T> linear_weight(std::size_t out, std::size_t in, Rng& rng) {
  return Parameter<T>(nn::uniform_init<T>({out, in}, 1.0 / std::sqrt(static_cast<double>(in)), rng));
}

// Throws unless query is (batch, Q) and keys (batch, S, K) with the expected Q (and K when given).
template <class T>
void check_query(const char* score, const Variable<T>& query, const Variable<T>& keys, std::size_t query_size,
                 std::size_t key_size) {
  const Shape& q = query.shape();
  const Shape& k = keys.shape();
  if (q.rank() != 2 || k.rank() != 3 || q[0] != k[0] || q[1] != query_size || (key_size != 0 && k[2] != key_size)) {
    throw std::invalid_argument(std::string(score) + " score: query " + to_string(q) + " and keys " + to_string(k) +
                                " do not fit (expected query (batch, " + std::to_string(query_size) +
                                ") and keys (batch, S, " + (key_size ? std::to_string(key_size) : "K") + "))");
  }
}

// Throws unless annotations are (batch, S, H_a) with the annotation size the score was built for.
template <class T>
void check_annotations(const char* score, const Variable<T>& annotations, std::size_t annotation_size) {
  const Shape& h = annotations.shape();
  if (h.rank() != 3 || h[2] != annotation_size) {
    throw std::invalid_argument(std::string(score) + " score: annotations " + to_string(h) +
                                " do not fit (expected (batch, S, " + std::to_string(annotation_size) + "))");
  }
}

// Throws unless `keys` were made by a score of this kind (a default-constructed Keys was made by none).
template <class T>
void check_keys(ScoreKind kind, const Keys<T>& keys) {
  if (keys.empty()) {
    throw std::invalid_argument(to_string(kind) + " score: the keys are empty (make them with this score's keys(h))");
  }
  if (keys.made_by() != kind) {
    throw std::invalid_argument(to_string(kind) + " score: keys " + to_string(keys.shape()) + " were made by " +
                                (keys.made_by() == ScoreKind::additive ? "an " : "a ") + to_string(keys.made_by()) +
                                " score (make them with this score's keys(h))");
  }
}

// Σ_k a[b, i, k] q[b, k] for keys a: (batch, S, K) and q: (batch, K) → (batch, S), one fused node (batched_matvec:
// a per-sequence product too small for a BLAS call per row).
template <class T>
Variable<T> dot_each(const Variable<T>& keys, const Variable<T>& query) {
  return batched_matvec(keys, query);
}

// v_aᵀ tanh(projected query + keys): (batch, A) and (batch, S, A) → (batch, S), one fused node (additive_attention)
// for what is tanh(reshape(q, (batch, 1, A)) + keys) followed by linear(·, v_a) written with the small ops.
template <class T>
Variable<T> additive_energy(const Variable<T>& projected_query, const Variable<T>& keys, const Variable<T>& v_a) {
  return additive_attention(projected_query, keys, v_a);
}

}  // namespace

std::string to_string(ScoreKind kind) {
  switch (kind) {
    case ScoreKind::additive:
      return "additive";
    case ScoreKind::dot:
      return "dot";
    case ScoreKind::general:
      return "general";
    case ScoreKind::concat:
      return "concat";
  }
  return "?";
}

ScoreKind score_kind_from_string(const std::string& name) {
  for (ScoreKind kind : {ScoreKind::additive, ScoreKind::dot, ScoreKind::general, ScoreKind::concat}) {
    if (to_string(kind) == name) return kind;
  }
  throw std::invalid_argument("unknown attention score \"" + name + "\" (expected additive, dot, general or concat)");
}

// ---- additive (Bahdanau) ---------------------------------------------------------------------------------------

template <class T>
AdditiveScore<T>::AdditiveScore(std::size_t query_size, std::size_t annotation_size, std::size_t attention_size,
                                Rng& rng)
    : W_a(linear_weight<T>(attention_size, query_size, rng)),
      U_a(linear_weight<T>(attention_size, annotation_size, rng)),
      v_a(linear_weight<T>(1, attention_size, rng)) {}

template <class T>
Keys<T> AdditiveScore<T>::keys(const Variable<T>& annotations) {
  check_annotations("additive", annotations, U_a.value.shape()[1]);
  // U_a h_i for every i at once: (batch, S, H_a) → (batch, S, A)
  return Keys<T>(dense(annotations, tape_of("additive score", {&annotations}).param(U_a)), ScoreKind::additive);
}

template <class T>
Variable<T> AdditiveScore<T>::score(const Variable<T>& query, const Keys<T>& keys) {
  check_keys(ScoreKind::additive, keys);
  const Variable<T>& k = keys.value();
  check_query("additive", query, k, W_a.value.shape()[1], W_a.value.shape()[0]);
  Tape<T>& tape = tape_of("additive score", {&query, &k});
  // e_ij = v_aᵀ tanh(W_a s_{j-1} + U_a h_i)
  return additive_energy(dense(query, tape.param(W_a)), k, tape.param(v_a));
}

template <class T>
void AdditiveScore<T>::visit(nn::ModuleVisitor<T>& v) {
  v.parameter("W_a", W_a);
  v.parameter("U_a", U_a);
  v.parameter("v_a", v_a);
}

// ---- dot and general (Luong) -----------------------------------------------------------------------------------

template <class T>
Variable<T> DotScore<T>::score(const Variable<T>& query, const Keys<T>& keys) {
  check_keys(ScoreKind::dot, keys);
  const Variable<T>& h = keys.value();
  check_query("dot", query, h, h.shape().rank() == 3 ? h.shape()[2] : 0, 0);
  // e_ij = s_jᵀ h_i
  return dot_each(h, query);
}

template <class T>
GeneralScore<T>::GeneralScore(std::size_t query_size, std::size_t annotation_size, Rng& rng)
    : W_a(linear_weight<T>(query_size, annotation_size, rng)) {}

template <class T>
Keys<T> GeneralScore<T>::keys(const Variable<T>& annotations) {
  check_annotations("general", annotations, W_a.value.shape()[1]);
  // W_a h_i for every i at once: (batch, S, H_a) → (batch, S, Q)
  return Keys<T>(dense(annotations, tape_of("general score", {&annotations}).param(W_a)), ScoreKind::general);
}

template <class T>
Variable<T> GeneralScore<T>::score(const Variable<T>& query, const Keys<T>& keys) {
  check_keys(ScoreKind::general, keys);
  check_query("general", query, keys.value(), W_a.value.shape()[0], W_a.value.shape()[0]);
  // e_ij = s_jᵀ (W_a h_i)
  return dot_each(keys.value(), query);
}

template <class T>
void GeneralScore<T>::visit(nn::ModuleVisitor<T>& v) {
  v.parameter("W_a", W_a);
}

// ---- concat (Luong) --------------------------------------------------------------------------------------------

template <class T>
ConcatScore<T>::ConcatScore(std::size_t query_size, std::size_t annotation_size, std::size_t attention_size, Rng& rng)
    : W_a(linear_weight<T>(attention_size, query_size + annotation_size, rng)),
      v_a(linear_weight<T>(1, attention_size, rng)),
      query_size_(query_size) {}

template <class T>
Keys<T> ConcatScore<T>::keys(const Variable<T>& annotations) {
  const std::size_t columns = W_a.value.shape()[1];
  check_annotations("concat", annotations, columns - query_size_);
  Tape<T>& tape = tape_of("concat score", {&annotations});
  // W_a[:, Q:] h_i for every i at once: (batch, S, H_a) → (batch, S, A)
  return Keys<T>(dense(annotations, slice(tape.param(W_a), 1, query_size_, columns)), ScoreKind::concat);
}

template <class T>
Variable<T> ConcatScore<T>::score(const Variable<T>& query, const Keys<T>& keys) {
  check_keys(ScoreKind::concat, keys);
  const Variable<T>& k = keys.value();
  check_query("concat", query, k, query_size_, W_a.value.shape()[0]);
  Tape<T>& tape = tape_of("concat score", {&query, &k});
  // e_ij = v_aᵀ tanh(W_a[:, :Q] s_j + W_a[:, Q:] h_i) = v_aᵀ tanh(W_a [s_j; h_i])
  return additive_energy(dense(query, slice(tape.param(W_a), 1, 0, query_size_)), k, tape.param(v_a));
}

template <class T>
void ConcatScore<T>::visit(nn::ModuleVisitor<T>& v) {
  v.parameter("W_a", W_a);
  v.parameter("v_a", v_a);
}

template <class T>
std::unique_ptr<Score<T>> make_score(ScoreKind kind, std::size_t query_size, std::size_t annotation_size,
                                     std::size_t attention_size, Rng& rng) {
  switch (kind) {
    case ScoreKind::additive:
      return std::make_unique<AdditiveScore<T>>(query_size, annotation_size, attention_size, rng);
    case ScoreKind::dot:
      if (query_size != annotation_size) {
        throw std::invalid_argument("dot score: s_jᵀ h_i needs the decoder state size (" + std::to_string(query_size) +
                                    ") to equal the annotation size (" + std::to_string(annotation_size) +
                                    "); a bidirectional encoder doubles the annotation size — use general instead");
      }
      return std::make_unique<DotScore<T>>();
    case ScoreKind::general:
      return std::make_unique<GeneralScore<T>>(query_size, annotation_size, rng);
    case ScoreKind::concat:
      return std::make_unique<ConcatScore<T>>(query_size, annotation_size, attention_size, rng);
  }
  throw std::invalid_argument("make_score: unknown score kind");
}

// ---- weights and context ---------------------------------------------------------------------------------------

template <class T>
Variable<T> attention_weights(const Variable<T>& e, const Mask& mask) {
  if (e.shape().rank() != 2 || mask.shape() != e.shape()) {
    throw std::invalid_argument("attention_weights: scores " + to_string(e.shape()) + " and mask " +
                                to_string(mask.shape()) + " must both be (batch, S)");
  }
  // α_ij = exp(e_ij) / Σ_k exp(e_kj), k over the real positions; padding gets exactly 0
  return softmax(e, 1, mask);
}

template <class T>
Variable<T> context(const Variable<T>& alpha, const Variable<T>& annotations) {
  const Shape& a = alpha.shape();
  const Shape& h = annotations.shape();
  if (a.rank() != 2 || h.rank() != 3 || a[0] != h[0] || a[1] != h[1]) {
    throw std::invalid_argument("context: weights " + to_string(a) + " and annotations " + to_string(h) +
                                " do not fit (expected (batch, S) and (batch, S, A))");
  }
  // c_j = Σ_i α_ij h_i for each sequence of the batch: (batch, S)·(batch, S, A) → (batch, A), one fused node
  return batched_vecmat(alpha, annotations);
}

Mask source_mask(const std::vector<std::int64_t>& lengths, std::size_t time) {
  Mask mask(Shape{lengths.size(), time});
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    for (std::size_t i = 0; i < time && static_cast<std::int64_t>(i) < lengths[b]; ++i) mask.data()[b * time + i] = 1;
  }
  return mask;
}

#define ATTEND_INSTANTIATE(T)                                                                               \
  template class Keys<T>;                                                                                   \
  template class AdditiveScore<T>;                                                                          \
  template class DotScore<T>;                                                                               \
  template class GeneralScore<T>;                                                                           \
  template class ConcatScore<T>;                                                                            \
  template std::unique_ptr<Score<T>> make_score<T>(ScoreKind, std::size_t, std::size_t, std::size_t, Rng&); \
  template Variable<T> attention_weights<T>(const Variable<T>&, const Mask&);                               \
  template Variable<T> context<T>(const Variable<T>&, const Variable<T>&);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend::models
