// Attention: the score functions that say how well a decoder state (the query) matches each source annotation h_i,
// and the two steps every attention decoder shares — the weights α_ij = softmax_i(e_ij) over the real (unpadded)
// source positions, and the context c_j = Σ_i α_ij h_i. Additive scoring is Bahdanau et al.'s; dot, general and
// concat are Luong et al.'s. Chapters: docs/06-alignment-scores.md … docs/09-luong.md; API: docs/reference/models.md.
//
// All four scores are split the same way: the part that depends only on the annotations ("keys": U_a h_i for the
// additive score, W_a h_i for general, the h_i part of W_a [s; h_i] for concat, h_i itself for dot) does not change
// from one decoder step to the next, so keys() computes it once per source batch and score() reuses it at every
// step — one (batch·S, A)×(A, K) product instead of T_y of them.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attend::models {

// Which score function, as named on the command line: "additive", "dot", "general", "concat".
enum class ScoreKind { additive, dot, general, concat };
std::string to_string(ScoreKind kind);
ScoreKind score_kind_from_string(const std::string& name);  // throws std::invalid_argument for an unknown name

template <class T>
class Score;

// The part of a score that depends only on the annotations (U_a h_i, W_a h_i, ...), made by Score::keys() and
// accepted only by a score of the same kind: a Variable does not convert to Keys, so raw annotations cannot be passed
// where keys belong (pass them to the one-call score(query, annotations) instead), and the keys of another kind of
// score are refused with an error that names both kinds and the shapes.
template <class T>
class Keys {
 public:
  Keys() = default;  // empty: no score made it (the vanilla decoder's memory)
  // Keys computed by hand, said to be those of a `made_by` score. Score implementations (and wrappers around one)
  // construct them; a user normally gets them from Score::keys().
  Keys(Variable<T> value, ScoreKind made_by) : value_(std::move(value)), made_by_(made_by) {}

  const Variable<T>& value() const { return value_; }  // (batch, S, K)
  const Shape& shape() const { return value_.shape(); }
  ScoreKind made_by() const { return made_by_; }
  bool empty() const { return value_.empty(); }
  // f(value) as keys of the same kind: for a function that only reorders or repeats the batch rows (beam search).
  template <class F>
  Keys map(F f) const {
    return Keys(f(value_), made_by_);
  }

 private:
  Variable<T> value_;
  ScoreKind made_by_ = ScoreKind::additive;
};

// The interface of a score function e_ij = score(q_j, h_i).
// annotations h: (batch, S, A); query q: (batch, Q) → keys: (batch, S, K) once, then e: (batch, S) per step.
// A score implements keys() and score(query, keys); the one-call score(query, annotations) is keys() then score().
// Implementations add `using Score<T>::score;` so that the one-call form stays visible beside their override.
template <class T>
class Score : public nn::Module<T> {
 public:
  virtual Keys<T> keys(const Variable<T>& annotations) = 0;
  virtual Variable<T> score(const Variable<T>& query, const Keys<T>& keys) = 0;
  // e for annotations h directly, for callers that score once (the keys are recomputed at every call).
  Variable<T> score(const Variable<T>& query, const Variable<T>& annotations) {
    return score(query, keys(annotations));
  }
  virtual ScoreKind kind() const = 0;
};

// Bahdanau et al. (2015), eq. (6) with the appendix's a(s_{j-1}, h_i):
//   e_ij = v_aᵀ tanh(W_a s_{j-1} + U_a h_i)
// W_a: (A, Q) on the query, U_a: (A, H_a) on the annotations, v_a: (1, A) — each in torch.nn.Linear's layout
// (out, in), no biases (the paper has none). A is the attention size. v_a is the equation's vector stored as one row,
// exactly torch.nn.Linear(A, 1, bias=False).weight (d2l's w_v), so weights move between the two as they are; its
// gradient has the same (1, A) shape.
template <class T>
class AdditiveScore : public Score<T> {
 public:
  Parameter<T> W_a;
  Parameter<T> U_a;
  Parameter<T> v_a;

  AdditiveScore(std::size_t query_size, std::size_t annotation_size, std::size_t attention_size, Rng& rng);
  using Score<T>::score;
  Keys<T> keys(const Variable<T>& annotations) override;  // U_a h_i: (batch, S, A)
  Variable<T> score(const Variable<T>& query, const Keys<T>& keys) override;
  ScoreKind kind() const override { return ScoreKind::additive; }
  void visit(nn::ModuleVisitor<T>& v) override;
};

// Luong et al. (2015), eq. (8), "dot":  e_ij = s_jᵀ h_i  (needs Q = H_a; no parameters).
template <class T>
class DotScore : public Score<T> {
 public:
  using Score<T>::score;
  Keys<T> keys(const Variable<T>& annotations) override { return Keys<T>(annotations, ScoreKind::dot); }  // h_i
  Variable<T> score(const Variable<T>& query, const Keys<T>& keys) override;
  ScoreKind kind() const override { return ScoreKind::dot; }
  void visit(nn::ModuleVisitor<T>&) override {}
};

// Luong et al. (2015), eq. (8), "general":  e_ij = s_jᵀ W_a h_i.  W_a: (Q, H_a), torch.nn.Linear(H_a, Q, bias=False).
template <class T>
class GeneralScore : public Score<T> {
 public:
  Parameter<T> W_a;

  GeneralScore(std::size_t query_size, std::size_t annotation_size, Rng& rng);
  using Score<T>::score;
  Keys<T> keys(const Variable<T>& annotations) override;  // W_a h_i: (batch, S, Q)
  Variable<T> score(const Variable<T>& query, const Keys<T>& keys) override;
  ScoreKind kind() const override { return ScoreKind::general; }
  void visit(nn::ModuleVisitor<T>& v) override;
};

// Luong et al. (2015), eq. (8), "concat":  e_ij = v_aᵀ tanh(W_a [s_j; h_i]).
// W_a: (A, Q + H_a) as one torch.nn.Linear(Q + H_a, A, bias=False); its first Q columns multiply s_j, the rest h_i,
// so W_a [s_j; h_i] = W_a[:, :Q] s_j + W_a[:, Q:] h_i and the second term is the precomputed key. v_a: (1, A), the
// vector as one row (torch.nn.Linear(A, 1, bias=False).weight), as in AdditiveScore.
template <class T>
class ConcatScore : public Score<T> {
 public:
  Parameter<T> W_a;
  Parameter<T> v_a;

  ConcatScore(std::size_t query_size, std::size_t annotation_size, std::size_t attention_size, Rng& rng);
  using Score<T>::score;
  Keys<T> keys(const Variable<T>& annotations) override;  // W_a[:, Q:] h_i: (batch, S, A)
  Variable<T> score(const Variable<T>& query, const Keys<T>& keys) override;
  ScoreKind kind() const override { return ScoreKind::concat; }
  void visit(nn::ModuleVisitor<T>& v) override;

 private:
  std::size_t query_size_;
};

// A score function of the given kind. attention_size is used by additive and concat only.
template <class T>
std::unique_ptr<Score<T>> make_score(ScoreKind kind, std::size_t query_size, std::size_t annotation_size,
                                     std::size_t attention_size, Rng& rng);

// α_ij = exp(e_ij) / Σ_k exp(e_kj) over the unpadded positions (mask 1 = real token, 0 = padding → α exactly 0)
// e: (batch, S), mask: (batch, S) → α: (batch, S)
template <class T>
Variable<T> attention_weights(const Variable<T>& e, const Mask& mask);

// c_j = Σ_i α_ij h_i
// α: (batch, S), h: (batch, S, A) → c: (batch, A)
template <class T>
Variable<T> context(const Variable<T>& alpha, const Variable<T>& annotations);

// The source mask of a padded batch: mask[b, i] = 1 for i < lengths[b], else 0. (batch, S).
Mask source_mask(const std::vector<std::int64_t>& lengths, std::size_t time);

}  // namespace attend::models
