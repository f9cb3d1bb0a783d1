// Exercise 6.2 — your answer (the task: exercises/06/2.hpp). Check it with `scripts/exercise 6.2`.
#include "exercises/06/2.hpp"

#include "exercises/check.hpp"

namespace yours {

using namespace attend;

Variable<double> biased_score(models::AdditiveScore<double>& score, const Variable<double>& b_a,
                              const Variable<double>& s_prev, const Variable<double>& h) {
  (void)score;
  (void)b_a;
  (void)s_prev;
  (void)h;
  throw attend::exercise::Todo("v_aᵀ tanh(W_a s_{j−1} + U_a h_i + b_a) with the tape's ops");
}

models::Keys<double> biased_keys(models::AdditiveScore<double>& score, const Variable<double>& b_a,
                                 const Variable<double>& h) {
  (void)b_a;
  return score.keys(h);  // the chapter's keys, U_a h_i, without the bias: TODO fold b_a in
}

}  // namespace yours
