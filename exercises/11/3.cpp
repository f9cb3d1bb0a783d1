// Exercise 11.3 — your answer (the task: exercises/11/3.hpp). Check it with `scripts/exercise 11.3`.
// causal_self_attention is the chapter's self-attention, without its mask yet.
#include "exercises/11/3.hpp"

#include <cmath>

#include "exercises/check.hpp"

namespace yours {

using namespace attend;
using namespace attend::models;

std::size_t count_scores(Seq2seq<float>& model, const Batch& batch) {
  (void)model;
  (void)batch;
  throw exercise::Todo("a counting score function in the model's score slot");
}

std::pair<Variable<double>, Variable<double>> causal_self_attention(const Variable<double>& X,
                                                                    const Variable<double>& W_Q,
                                                                    const Variable<double>& W_K,
                                                                    const Variable<double>& W_V) {
  const std::size_t d_k = W_K.shape()[1];
  // (11.4)  Q = X W_Q,  K = X W_K,  V = X W_V
  const Variable<double> Q = matmul(X, W_Q), K = matmul(X, W_K), V = matmul(X, W_V);
  // (11.5)  A = softmax(Q Kᵀ / √d_k), row by row — TODO: with the causal mask, A_pr = 0 for r > p
  const Variable<double> A = softmax(matmul(Q, transpose(K)) * (1.0 / std::sqrt(static_cast<double>(d_k))), -1);
  // (11.6)  Z = A V
  return {A, matmul(A, V)};
}

}  // namespace yours
