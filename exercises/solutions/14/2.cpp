// Exercise 14.2 — a solution (the task: exercises/14/2.hpp).
//
// Why it works: without P the encoder's output at position p depends on token p and on the multiset of all the
// source's tokens, nothing else (the permutation test); the decoder reads that output only through cross-attention,
// a softmax-weighted sum over the source positions, which does not depend on their order. So two sources with the
// same characters, each the same number of times, give the same output at every step — and two that differ in one
// count give different ones (for all but a negligible set of weights). What the model gets wrong: "09 May 2018" and
// "May 09 2018" are harmless (both mean 2018-05-09), but "12 May 2018" and "21 May 2018", "1 May 2018" and "1 May
// 2081", "03/05/2018" and "05/03/2018" are one source to it: it can get at most one of each such pair right, and all
// it knows of a date's digits is how many of each there are. The decoder's own positions do not help:
// they say where in the output it writes, not where in the source a digit was.
#include "exercises/14/2.hpp"

#include <algorithm>
#include <vector>

#include "data/vocabulary.hpp"

namespace yours {

using namespace attend;

void remove_source_positions(models::TransformerModel<double>& model) {
  Tensor<double>& P = model.src_pos.value;  // (max_positions, D), added to √D · E[token_p] at source position p
  std::fill(P.data(), P.data() + P.size(), 0.0);
}

bool same_output(const std::string& a, const std::string& b) {
  // the same multiset of characters: sorted, the two lists are equal
  std::vector<std::string> x = data::utf8_characters(a), y = data::utf8_characters(b);
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y;
}

}  // namespace yours
