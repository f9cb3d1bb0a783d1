// Exercise 6.1 — your answer (the task: exercises/06/1.hpp). Check it with `scripts/exercise 6.1`.
#include "exercises/06/1.hpp"

#include <cmath>

#include "exercises/check.hpp"

namespace yours {

using attend::Tensor;

double score_by_hand(const Tensor<double>& W_a, const Tensor<double>& U_a, const Tensor<double>& v_a,
                     const std::vector<double>& s_prev, const std::vector<double>& h_i) {
  (void)W_a;
  (void)U_a;
  (void)v_a;
  (void)s_prev;
  (void)h_i;
  // TODO: (6.2)–(6.6), row a of the hidden layer at a time, as the chapter's term-by-term block
  throw attend::exercise::Todo("e_ij by hand, (6.2)–(6.6)");
}

double e_42_on_paper() { throw attend::exercise::Todo("your e_42, from the printed matrices"); }

}  // namespace yours
