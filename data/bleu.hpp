// Corpus BLEU (Papineni et al. 2002), the translation metric of chapter 12 (docs/12-translation.md): how many of the
// model's n-grams, n = 1..N, occur in a reference translation, combined over the whole corpus and penalised when the
// outputs are shorter than the references. It follows NLTK's nltk.translate.bleu_score.corpus_bleu with uniform weights
// and no smoothing exactly (the tests compare against it), and works on whatever tokens it is given: scores on attend's
// tokens are not comparable with sacreBLEU's, which tokenises detokenised text its own way.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attend::data {

// For outputs ŷ_k (k = 1..K) with references y_k^1..y_k^{M_k}, and count(g, s) the number of times the n-gram g
// occurs in the token sequence s:
//   m_n = Σ_k Σ_{g ∈ n-grams(ŷ_k)} min(count(g, ŷ_k), max_m count(g, y_k^m))   clipped matches of order n
//   t_n = Σ_k max(1, |ŷ_k| − n + 1)                                            candidate n-grams of order n
//   p_n = m_n / t_n                                                             modified precision
//   c   = Σ_k |ŷ_k|                                                             output length
//   r   = Σ_k |y_k^m*|, m* the reference whose length is closest to |ŷ_k| (ties: the shorter)
//   BP  = 1 if c > r, else exp(1 − r/c)                                         brevity penalty
//   BLEU = BP · exp((1/N) Σ_{n=1..N} log p_n)
// Counts are summed over the corpus before dividing (a micro-average, not a mean of sentence scores). The max(1, ·) in
// t_n is NLTK's: an output shorter than n still counts one (unmatched) n-gram of order n, where Papineni et al. and
// sacreBLEU count none, so corpora of very short sentences score lower here than with sacreBLEU even on the same
// tokens. BLEU = 0 when c = 0 or when some m_n = 0; NLTK without smoothing gives 0 too, or 1e-77 or less when only an
// order n > 1 has no match (it stands sys.float_info.min in for p_n = 0).
struct BleuScore {
  double bleu = 0;                           // in [0, 1]; print 100·bleu
  std::vector<double> precisions;            // p_n for n = 1..N (0 when t_n = 0, i.e. no outputs)
  std::vector<std::size_t> matches, totals;  // m_n and t_n for n = 1..N
  double brevity_penalty = 0;                // BP (0 when c = 0)
  std::size_t hypothesis_length = 0;         // c
  std::size_t reference_length = 0;          // r
};

// hypotheses[k]: the tokens of output k; references[k]: one or more token lists for output k; max_order: N. No
// outputs give BLEU 0. Throws std::invalid_argument when the two sizes differ, when an output has no reference, or
// when max_order is 0.
BleuScore corpus_bleu(const std::vector<std::vector<std::string>>& hypotheses,
                      const std::vector<std::vector<std::vector<std::string>>>& references, std::size_t max_order = 4);

}  // namespace attend::data
