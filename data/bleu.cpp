// Corpus BLEU (data/bleu.hpp): per output and per order, the output's n-grams counted and clipped by the most times
// any one reference holds them; matches and totals summed over the corpus; then the brevity penalty and the geometric
// mean of the precisions. Chapter 12 (docs/12-translation.md) explains it.
#include "data/bleu.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

namespace attend::data {

namespace {

using Tokens = std::vector<std::string>;

// How often an n-gram occurs in the output, in the reference being read, and at most in any one reference so far.
struct NgramCounts {
  std::size_t hypothesis = 0, reference = 0, reference_max = 0;
};

// Appends a token to an n-gram's key: its byte length (raw, sizeof(std::size_t) bytes), then its bytes. The length
// prefix makes the key of a sequence of tokens unique whatever bytes the tokens contain (no separator to collide with).
void append_token(std::string& key, const std::string& token) {
  const std::size_t length = token.size();
  key.append(reinterpret_cast<const char*>(&length), sizeof length);
  key.append(token);
}

// The key of tokens[start .. start + n), built in `key` (reused between calls to save allocations).
void ngram_key(std::string& key, const Tokens& tokens, std::size_t start, std::size_t n) {
  key.clear();
  for (std::size_t t = start; t < start + n; ++t) append_token(key, tokens[t]);
}

// Σ_g min(count(g, hypothesis), max_m count(g, references[m])) over the n-grams g of the hypothesis. Only the
// hypothesis's n-grams enter the map; a reference's other n-grams are looked up and skipped.
std::size_t clipped_matches(const Tokens& hypothesis, const std::vector<Tokens>& references, std::size_t n) {
  if (hypothesis.size() < n) return 0;
  std::unordered_map<std::string, NgramCounts> counts;
  std::string key;
  for (std::size_t start = 0; start + n <= hypothesis.size(); ++start) {
    ngram_key(key, hypothesis, start, n);
    ++counts[key].hypothesis;
  }
  for (const Tokens& reference : references) {
    for (std::size_t start = 0; start + n <= reference.size(); ++start) {
      ngram_key(key, reference, start, n);
      const auto found = counts.find(key);
      if (found != counts.end()) ++found->second.reference;
    }
    for (auto& entry : counts) {
      entry.second.reference_max = std::max(entry.second.reference_max, entry.second.reference);
      entry.second.reference = 0;
    }
  }
  std::size_t matches = 0;
  for (const auto& entry : counts) matches += std::min(entry.second.hypothesis, entry.second.reference_max);
  return matches;
}

// The length of the reference closest in length to the output; of two equally close, the shorter.
std::size_t closest_reference_length(const std::vector<Tokens>& references, std::size_t hypothesis_length) {
  const auto distance = [hypothesis_length](std::size_t length) {
    return length > hypothesis_length ? length - hypothesis_length : hypothesis_length - length;
  };
  std::size_t best = references.front().size();
  for (const Tokens& reference : references) {
    const std::size_t length = reference.size();
    if (distance(length) < distance(best) || (distance(length) == distance(best) && length < best)) best = length;
  }
  return best;
}

}  // namespace

BleuScore corpus_bleu(const std::vector<std::vector<std::string>>& hypotheses,
                      const std::vector<std::vector<std::vector<std::string>>>& references, std::size_t max_order) {
  if (max_order == 0) throw std::invalid_argument("corpus_bleu: max_order must be at least 1");
  if (hypotheses.size() != references.size()) {
    throw std::invalid_argument("corpus_bleu: " + std::to_string(hypotheses.size()) + " hypotheses but " +
                                std::to_string(references.size()) +
                                " lists of references (one list, of one or more references, per hypothesis)");
  }
  for (std::size_t k = 0; k < references.size(); ++k) {
    if (references[k].empty()) {
      throw std::invalid_argument("corpus_bleu: hypothesis " + std::to_string(k) + " has no reference");
    }
  }

  BleuScore score;
  score.matches.assign(max_order, 0);
  score.totals.assign(max_order, 0);
  for (std::size_t k = 0; k < hypotheses.size(); ++k) {
    const Tokens& hypothesis = hypotheses[k];
    for (std::size_t n = 1; n <= max_order; ++n) {
      // m_n and t_n; an output shorter than n counts as one n-gram (NLTK's max(1, ·)), matching nothing
      score.matches[n - 1] += clipped_matches(hypothesis, references[k], n);
      score.totals[n - 1] += std::max<std::size_t>(1, hypothesis.size() >= n ? hypothesis.size() - n + 1 : 0);
    }
    // c and r
    score.hypothesis_length += hypothesis.size();
    score.reference_length += closest_reference_length(references[k], hypothesis.size());
  }

  // p_n = m_n / t_n
  score.precisions.assign(max_order, 0.0);
  for (std::size_t n = 0; n < max_order; ++n) {
    if (score.totals[n] > 0) score.precisions[n] = double(score.matches[n]) / double(score.totals[n]);
  }
  // BP = 1 if c > r, else exp(1 − r/c); 0 when c = 0
  const double c = double(score.hypothesis_length), r = double(score.reference_length);
  if (score.hypothesis_length == 0) {
    score.brevity_penalty = 0;
  } else {
    score.brevity_penalty = c > r ? 1.0 : std::exp(1.0 - r / c);
  }
  // BLEU = BP · exp((1/N) Σ_n log p_n); 0 when any p_n = 0 (the limit of the geometric mean)
  const bool all_matched = std::all_of(score.matches.begin(), score.matches.end(), [](std::size_t m) { return m > 0; });
  if (all_matched && score.hypothesis_length > 0) {
    double sum_log_precisions = 0;
    for (double p_n : score.precisions) sum_log_precisions += std::log(p_n);
    score.bleu = score.brevity_penalty * std::exp(sum_log_precisions / double(max_order));
  }
  return score;
}

}  // namespace attend::data
