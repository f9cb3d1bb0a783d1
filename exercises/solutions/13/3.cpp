// Exercise 13.3 — a solution (the task: exercises/13/3.hpp).
//
// Why it works, and what it shows: the attention's move is local — from where step t − 1 looked, look one digit
// further right — and nothing in it depends on how many digits came before, so it carries over to longer strings: the
// check's small models go left to right on nearly every 4- and 5-digit image. The end token is not local: the decoder
// has learnt when to stop from captions of 2 and 3 digits, and on 5-digit images it stops after 3 or 4 almost every
// time. The end token fails first. The chapter's full model, trained on 3–6 digits, wrote most 7-digit strings out
// whole (72%): with more lengths and more training, "stop where the digits stop" is learnt better than "stop after as
// many tokens as usual", but the strings longer than any it saw are still where it fails most.
#include "exercises/13/3.hpp"

namespace yours {

using namespace attend;

std::vector<double> failures(const models::CaptionerConfig& config, const std::vector<models::Hypothesis>& outputs,
                             const std::vector<data::Composed>& images) {
  std::size_t early = 0, not_right = 0;
  for (std::size_t n = 0; n < outputs.size(); ++n) {
    const models::Hypothesis& h = outputs[n];
    if (h.finished && h.tokens.size() < images[n].digits.size()) ++early;
    double previous = 0;
    bool moving = true;
    for (std::size_t t = 0; t < h.tokens.size(); ++t) {
      // (13.8)  m_t = Σ_i α_ti · column(i)
      double m_t = 0;
      for (std::size_t i = 0; i < h.attention[t].size(); ++i) {
        m_t += h.attention[t][i] * config.pixel_column(i % config.grid_columns());
      }
      if (t > 0 && !(m_t > previous)) moving = false;
      previous = m_t;
    }
    if (!moving) ++not_right;
  }
  const auto count = static_cast<double>(outputs.size());
  return {static_cast<double>(early) / count, static_cast<double>(not_right) / count};
}

std::string fails_first() { return "the end token"; }

}  // namespace yours
