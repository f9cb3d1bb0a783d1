// Exercise 11.3 — a solution (the task: exercises/11/3.hpp).
//
// Why it works: the counter counts what the decoder asks for, not what a formula says: every call of score() returns
// e_j of shape (B, S), so adding up B·S at each of the T steps gives B·S·T, which is (11.1)'s B·T_x·T_y when no source
// is padded. In a padded batch it is B·S·T with S the longest source: the padding is scored too, and masked only
// afterwards by the softmax (chapter 7). Each step of T_y costs T_x scores for every sentence, so the count, and with
// it the time of the attention part, grows linearly in T_y at a fixed T_x; with both lengths growing together it grows
// like their product, while the sequential steps (11.2) grow like their sum.
// The causal mask is chapter 7's padding mask turned on the positions of the sequence itself: row p may use r ≤ p
// only. The masked softmax gives exactly 0 elsewhere and normalises among the rest, so row p sums to 1 over r ≤ p,
// row 1 is all weight on position 1, and Z's row p is an average of v_1 … v_p: position p cannot see what comes after
// it, which is what lets a decoder train on all positions of a target at once (chapter 14).
#include "exercises/11/3.hpp"

#include <cmath>
#include <memory>

namespace yours {

using namespace attend;
using namespace attend::models;

namespace {

// The decoder's score function, with every e it returns counted (the chapter's CountingScore).
class CountingScore : public Score<float> {
 public:
  std::size_t evaluations = 0;
  explicit CountingScore(std::unique_ptr<Score<float>> inner) : inner_(std::move(inner)) {}
  using Score<float>::score;
  Keys<float> keys(const Variable<float>& annotations) override { return inner_->keys(annotations); }
  Variable<float> score(const Variable<float>& query, const Keys<float>& keys) override {
    Variable<float> e = inner_->score(query, keys);  // (B, S): this step's scores of every sentence
    evaluations += e.shape()[0] * e.shape()[1];
    return e;
  }
  ScoreKind kind() const override { return inner_->kind(); }
  void visit(nn::ModuleVisitor<float>& v) override { inner_->visit(v); }  // the same parameters, the same names

 private:
  std::unique_ptr<Score<float>> inner_;
};

}  // namespace

std::size_t count_scores(Seq2seq<float>& model, const Batch& batch) {
  std::unique_ptr<Score<float>>* slot = nullptr;
  if (auto* bahdanau = dynamic_cast<BahdanauDecoder<float>*>(model.decoder.get())) slot = &bahdanau->score;
  if (auto* luong = dynamic_cast<LuongDecoder<float>*>(model.decoder.get())) slot = &luong->score;
  if (slot == nullptr) return 0;  // the vanilla decoder scores nothing
  auto counting = std::make_unique<CountingScore>(std::move(*slot));
  CountingScore& counter = *counting;
  *slot = std::move(counting);
  Tape<float> tape;
  model.loss(tape, batch);
  return counter.evaluations;
}

std::pair<Variable<double>, Variable<double>> causal_self_attention(const Variable<double>& X,
                                                                    const Variable<double>& W_Q,
                                                                    const Variable<double>& W_K,
                                                                    const Variable<double>& W_V) {
  const std::size_t n = X.shape()[0], d_k = W_K.shape()[1];
  // (11.4)  Q = X W_Q,  K = X W_K,  V = X W_V
  const Variable<double> Q = matmul(X, W_Q), K = matmul(X, W_K), V = matmul(X, W_V);
  // the causal mask: row p of the softmax reads position r only for r ≤ p, so mask_pr = 1 for r ≤ p, 0 above
  Mask causal(Shape{n, n});
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t r = 0; r <= p; ++r) causal.at({p, r}) = 1;
  }
  // (11.5)  A = softmax(Q Kᵀ / √d_k) row by row, over r ≤ p
  const Variable<double> A = softmax(matmul(Q, transpose(K)) * (1.0 / std::sqrt(static_cast<double>(d_k))), -1, causal);
  // (11.6)  Z = A V
  return {A, matmul(A, V)};
}

}  // namespace yours
