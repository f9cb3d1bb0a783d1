// Exercise 6.2 — a solution (the task: exercises/06/2.hpp).
//
// Inside the tanh, W_a s_{j−1} + U_a h_i + b_a is a sum, and addition does not care how it is grouped:
// (W_a s_{j−1}) + (U_a h_i + b_a). The second group depends on i only, so the bias joins the keys, computed once per
// sentence (T_x·A additions), and every step reads the same keys as before: the per-step code, AdditiveScore::score,
// does not change at all. (It could equally join W_a s_{j−1}, for A additions per step; added after the broadcast, as
// biased_score does, it costs T_x·A per step.) This is also why the paper's score needs no bias: any b_a can be
// folded into the keys, and a bias outside the tanh, added to every e_ij alike, would be removed by the softmax of
// chapter 7, which does not change when all scores move together.
#include "exercises/06/2.hpp"

namespace yours {

using namespace attend;

Variable<double> biased_score(models::AdditiveScore<double>& score, const Variable<double>& b_a,
                              const Variable<double>& s_prev, const Variable<double>& h) {
  Tape<double>& tape = h.tape();
  const std::size_t B = h.shape()[0], A = score.W_a.value.shape()[0];
  // (6.2) W_a s_{j−1}, one row per sentence, made (B, 1, A) to broadcast over the source positions
  const Variable<double> W_a_s_prev =
      reshape(linear(s_prev, tape.param(score.W_a)), {static_cast<std::int64_t>(B), 1, static_cast<std::int64_t>(A)});
  const Variable<double> U_a_h = linear(h, tape.param(score.U_a));   // (6.3) U_a h_i: (B, T_x, A)
  const Variable<double> hidden = tanh(W_a_s_prev + U_a_h + b_a);    // (6.4), (6.5) with the bias: (B, T_x, A)
  const Variable<double> e = linear(hidden, tape.param(score.v_a));  // (6.6): (B, T_x, 1)
  return reshape(e, {static_cast<std::int64_t>(B), -1});
}

models::Keys<double> biased_keys(models::AdditiveScore<double>& score, const Variable<double>& b_a,
                                 const Variable<double>& h) {
  // U_a h_i + b_a: the bias joins the part that depends on i only, once per sentence
  return models::Keys<double>(score.keys(h).value() + b_a, models::ScoreKind::additive);
}

}  // namespace yours
