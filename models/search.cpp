// Greedy decoding and beam search (search.hpp).
#include "models/search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <future>
#include <stdexcept>

#include "ops/select.hpp"
#include "runtime/kernels.hpp"

namespace attend::models {

namespace {

// Σ_v exp(x_v - m) in double: float logits' exps in a vectorised kernel within 1 ulp of std::exp (beam search takes
// one a token of every beam row, and glibc's scalar exp was a quarter of an int8 beam search), double logits' std::exp.
double sum_of_exps(const float* logits, float m, std::size_t V) {
  return kernels::exp_shifted_sum_in_double(logits, m, V);
}
double sum_of_exps(const double* logits, double m, std::size_t V) { return kernels::exp_shifted_sum(logits, m, V); }

// log Σ_v exp(x_v) of one row of logits, in double: m + log Σ exp(x - m), so that log p_v = x_v - log_total
template <class T>
double log_total(const T* logits, std::size_t V) {
  const T m = kernels::max_of(logits, V);
  return static_cast<double>(m) + std::log(sum_of_exps(logits, m, V));
}

// log softmax of one row of logits, in double: log p_v = x_v - m - log Σ exp(x - m)
template <class T>
void log_probabilities(const T* logits, std::size_t V, std::vector<double>& out) {
  out.resize(V);
  const double shift = log_total(logits, V);
  for (std::size_t v = 0; v < V; ++v) out[v] = static_cast<double>(logits[v]) - shift;
}

// <pad> and <sos> are never outputs: decoding skips them (their probabilities are left as they are, not renormalised)
bool emittable(std::size_t v) { return v != static_cast<std::size_t>(pad_id) && v != static_cast<std::size_t>(sos_id); }

double normalised(double log_prob, std::size_t length, double alpha) {
  return alpha == 0.0 ? log_prob : log_prob / std::pow(static_cast<double>(std::max<std::size_t>(length, 1)), alpha);
}

// Row `row` of α (rows, S), cut to the source's real length; of `maps` maps side by side (rows, M·S), each map's part
// cut so, the M one after the other.
template <class T>
std::vector<float> attention_row(const Variable<T>& alpha, std::size_t row, std::int64_t length, std::size_t maps) {
  const std::size_t width = alpha.shape()[1], S = width / maps;
  std::vector<float> result;
  result.reserve(maps * static_cast<std::size_t>(length));
  for (std::size_t m = 0; m < maps; ++m) {
    const T* a = alpha.value().data() + row * width + m * S;
    result.insert(result.end(), a, a + length);
  }
  return result;
}

template <class T>
DecoderState<T> gather_state(const DecoderState<T>& state, const std::vector<std::int64_t>& rows) {
  DecoderState<T> result;
  for (const Variable<T>& h : state.h) result.h.push_back(gather_rows(h, rows));
  for (const Variable<T>& c : state.c) result.c.push_back(gather_rows(c, rows));
  result.feed = gather_rows(state.feed, rows);
  return result;
}

void check_source(const Ids& source, const std::vector<std::int64_t>& lengths) {
  if (source.shape().rank() != 2 || source.shape()[0] != lengths.size() || lengths.empty()) {
    throw std::invalid_argument("decode: source " + to_string(source.shape()) + " with " +
                                std::to_string(lengths.size()) + " lengths (expected (batch, S) and batch lengths)");
  }
}

// A partial output during beam search.
struct Beam {
  Hypothesis hypothesis;
  std::size_t row = 0;     // the decoder row whose state it continues
  std::int64_t node = -1;  // its node in the last step of the source's tree (when one is kept)
};

// One continuation of a live beam: its summed log-probability, the beam, the token.
struct Candidate {
  double log_prob;
  std::size_t beam;
  std::int64_t token;
};

// The order of candidates: by summed log-probability, ties to the earlier beam, then to the smaller id.
bool ranks_before(const Candidate& x, const Candidate& y) {
  if (x.log_prob != y.log_prob) return x.log_prob > y.log_prob;
  if (x.beam != y.beam) return x.beam < y.beam;
  return x.token < y.token;
}

// The first v' ≥ v with row[v'] > bar (not a NaN), or V: 16 at a time, then one at a time.
template <class T>
std::size_t next_above(const T* row, std::size_t v, std::size_t V, T bar) {
  constexpr std::size_t chunk = 16;
  for (; v + chunk <= V; v += chunk) {
    bool any = false;
    for (std::size_t i = 0; i < chunk; ++i) any |= row[v + i] > bar;
    if (any) break;
  }
  while (v < V && !(row[v] > bar)) ++v;
  return v;
}

// The best `keep` = min(count, 2k) continuations of the live beams of a source, in order (ranks_before); returns
// keep. The best 2k overall are among each beam's best 2k, so only those are held: one pass over each beam's row of
// logits, inserting into a sorted run of at most 2k (the run's last is the bar a token must pass), instead of sorting
// every beam's V continuations — the same candidates, the same order, the same bits.
// Without `probabilities` (a single beam whose log-probability nobody reads) the candidates hold the logits
// themselves: the same order.
template <class T>
std::size_t rank_candidates(const std::vector<Beam>& live, const T* logits, std::size_t V, std::size_t k,
                            bool probabilities, std::vector<Candidate>& candidates) {
  candidates.clear();
  const std::size_t per_beam = 2 * k;
  for (std::size_t i = 0; i < live.size(); ++i) {
    const T* row = logits + live[i].row * V;
    const double shift = probabilities ? log_total(row, V) : 0.0;
    const std::size_t first = candidates.size();
    bool full = false;  // the run holds 2k: a token must rank before its last to enter
    T bar = 0;          // then the last's logit: a token whose logit is not above it cannot (within one beam the
                        // summed log-probability grows with the logit, and ties go to the smaller id, already in)
    for (std::size_t v = 0; v < V; ++v) {
      if (full && (v = next_above(row, v, V, bar)) == V) break;
      if (!emittable(v)) continue;
      // log p(y_<j, v) = log p(y_<j) + log p_v, as log_probabilities computes log p_v
      const Candidate c{live[i].hypothesis.log_prob + (static_cast<double>(row[v]) - shift), i,
                        static_cast<std::int64_t>(v)};
      if (candidates.size() - first < per_beam) {
        candidates.push_back(c);
      } else if (ranks_before(c, candidates.back())) {
        candidates.back() = c;
      } else {
        continue;
      }
      for (std::size_t p = candidates.size() - 1; p > first && ranks_before(candidates[p], candidates[p - 1]); --p)
        std::swap(candidates[p], candidates[p - 1]);
      full = candidates.size() - first == per_beam;
      bar = row[candidates.back().token];
    }
  }
  const std::size_t keep = std::min(candidates.size(), 2 * k);
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep), candidates.end(),
                    ranks_before);
  return keep;
}

// The search's state for B sources of k beams each: decoder row b·k + r is beam r of source b.
struct BeamSearch {
  std::size_t k = 1;
  std::size_t alternatives = 0;         // SearchOptions::alternatives
  double alpha = 0;                     // the length penalty
  bool probabilities = true;            // the candidates' log-probabilities, not their logits (SearchOptions::scores)
  std::vector<std::vector<Beam>> live;  // live[b]: at most k partial outputs; at the start one empty beam
  std::vector<std::vector<Hypothesis>> finished;
  std::vector<std::uint8_t> done;   // bytes, not vector<bool>'s bits: threads write the entries of their sources
  std::vector<Hypothesis> outputs;  // outputs[b]: source b's, once done
  std::vector<std::size_t> told;    // told[b]: the tokens of source b's output the observer was told
  std::vector<SearchTree>* trees;   // nullptr: none kept

  BeamSearch(std::size_t B, const SearchOptions& options)
      : k(options.beam_width),
        alternatives(options.beam_width > 1 ? options.alternatives : 0),
        alpha(options.length_penalty),
        probabilities(options.scores || options.beam_width > 1),
        live(B),
        finished(B),
        done(B, 0),
        outputs(B),
        told(B, 0),
        trees(options.trees) {
    for (std::size_t b = 0; b < B; ++b) live[b].push_back(Beam{Hypothesis{}, b * k});
    if (trees != nullptr) trees->assign(B, SearchTree());
  }

  // The node of a hypothesis just made from `parent` by `token` in source b's tree, at its last step; returns its
  // place.
  std::int64_t add_node(std::size_t b, const Beam& parent, const Hypothesis& h, std::int64_t token) {
    std::vector<SearchNode>& step = (*trees)[b].back();
    step.push_back(SearchNode{token, h.log_prob, parent.node, token == eos_id,
                              h.attention.empty() ? std::vector<float>() : h.attention.back()});
    return static_cast<std::int64_t>(step.size()) - 1;
  }

  // One step for source b: its k best continuations become its beams (rows b·k …, their parents' rows in
  // `parents`, their last tokens in y_prev); an end among the k best candidates finishes a hypothesis.
  // (`candidates` is the calling thread's scratch.)
  template <class T>
  void advance(std::size_t b, const Variable<T>& logits, const Variable<T>& step_alpha, std::size_t maps,
               std::int64_t length, bool last_step, std::vector<std::int64_t>& parents, Ids& y_prev,
               std::vector<Candidate>& candidates) {
    const std::size_t V = logits.shape()[1];
    const std::size_t keep = rank_candidates(live[b], logits.value().data(), V, k, probabilities, candidates);
    if (trees != nullptr) (*trees)[b].emplace_back();
    std::vector<Beam> next;
    for (std::size_t c = 0; c < keep && next.size() < k; ++c) {
      // an end token ranked below k is not taken (as in fairseq): counting it would stop the search on k poor
      // finished outputs while better ones are still being written
      if (candidates[c].token == eos_id && c >= k) continue;
      const Beam& parent = live[b][candidates[c].beam];
      Hypothesis h = parent.hypothesis;
      if (probabilities) h.token_log_probs.push_back(candidates[c].log_prob - parent.hypothesis.log_prob);
      h.log_prob = candidates[c].log_prob;
      if (!step_alpha.empty()) h.attention.push_back(attention_row(step_alpha, parent.row, length, maps));
      const std::int64_t node = trees != nullptr ? add_node(b, parent, h, candidates[c].token) : -1;
      if (candidates[c].token == eos_id) {
        // a finished hypothesis leaves the beam; its score is normalised by its length, end token included
        h.finished = true;
        h.score = normalised(h.log_prob, h.tokens.size() + 1, alpha);
        finished[b].push_back(std::move(h));
      } else {
        h.tokens.push_back(candidates[c].token);
        next.push_back(Beam{std::move(h), parent.row, node});
      }
    }
    // the new beams take rows b·k … b·k + k - 1 and continue their parents' states
    for (std::size_t r = 0; r < next.size(); ++r) {
      parents[b * k + r] = static_cast<std::int64_t>(next[r].row);
      next[r].row = b * k + r;
      y_prev.data()[b * k + r] = next[r].hypothesis.tokens.back();
    }
    live[b] = std::move(next);
    // done when the best candidate of the step was an end (as OpenNMT): every live beam is then less probable
    // than a finished output and can only lose probability, so with α = 0 nothing better can come (with α > 0
    // this is the usual heuristic); also when nothing is left to extend, or at the maximum length
    const bool best_was_end = !candidates.empty() && candidates.front().token == eos_id;
    if (best_was_end || live[b].empty() || last_step) finish(b);
  }

  // Source b's search is over: its output is the best it holds.
  void finish(std::size_t b) {
    done[b] = 1;
    outputs[b] = best(b);
  }

  // Tells `observer` the tokens of source b's output that settled since it was last told (SearchObserver::settled).
  void tell(std::size_t b, SearchObserver& observer) {
    const Hypothesis* h = done[b] ? &outputs[b] : &live[b].front().hypothesis;
    std::size_t settled = h->tokens.size();
    const auto agree = [&settled, h](const Hypothesis& other) {
      const auto end = h->tokens.begin() + static_cast<std::ptrdiff_t>(std::min(settled, other.tokens.size()));
      settled = static_cast<std::size_t>(std::mismatch(h->tokens.begin(), end, other.tokens.begin()).first -
                                         h->tokens.begin());
    };
    if (!done[b]) {
      for (const Beam& beam : live[b]) agree(beam.hypothesis);
      // of the finished ones only the best can still be the output (their scores are final)
      const Hypothesis* best_finished = nullptr;
      for (const Hypothesis& f : finished[b])
        if (best_finished == nullptr || f.score > best_finished->score) best_finished = &f;
      if (best_finished != nullptr) agree(*best_finished);
    }
    if (settled <= told[b]) return;
    std::vector<SettledToken> tokens;
    for (std::size_t j = told[b]; j < settled; ++j) {
      tokens.push_back(SettledToken{h->tokens[j], j < h->token_log_probs.size() ? h->token_log_probs[j] : 0.0,
                                    j < h->attention.size() ? h->attention[j] : std::vector<float>()});
    }
    observer.settled(b, told[b], tokens);
    told[b] = settled;
  }

  // The best finished hypothesis of source b; when none finished within the maximum length, the best unfinished one.
  Hypothesis best(std::size_t b) {
    std::vector<Hypothesis>& pool = finished[b];
    if (pool.empty()) {
      for (Beam& beam : live[b]) {
        beam.hypothesis.score = normalised(beam.hypothesis.log_prob, beam.hypothesis.tokens.size(), alpha);
        pool.push_back(std::move(beam.hypothesis));
      }
    }
    // best first; of equal scores the one finished first (as max_element takes the first of equals)
    std::stable_sort(pool.begin(), pool.end(),
                     [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
    Hypothesis output = pool.front();
    for (std::size_t at = 1; at < pool.size() && output.alternatives.size() < alternatives; ++at) {
      const std::vector<std::int64_t>& tokens = pool[at].tokens;
      if (tokens == output.tokens ||
          std::find(output.alternatives.begin(), output.alternatives.end(), tokens) != output.alternatives.end())
        continue;
      output.alternatives.push_back(tokens);
    }
    return output;
  }
};

// The recurrent decoders (decoder.hpp) as a stepper: the encoded memory, and the decoder state of every row.
template <class T>
class RecurrentStepper : public Stepper<T> {
 public:
  RecurrentStepper(Decoder<T>& decoder, const Encoded<T>& encoded)
      : decoder_(decoder), memory_(encoded.memory), state_(encoded.state) {}

  void expand(std::size_t k) override {
    std::vector<std::int64_t> rows(memory_.mask.shape()[0] * k);
    for (std::size_t r = 0; r < rows.size(); ++r) rows[r] = static_cast<std::int64_t>(r / k);
    memory_.annotations = gather_rows(memory_.annotations, rows);
    memory_.keys = memory_.keys.map([&](const Variable<T>& keys) { return gather_rows(keys, rows); });
    memory_.context = gather_rows(memory_.context, rows);
    memory_.mask = gather_mask(memory_.mask, rows);
    state_ = gather_state(state_, rows);
  }

  typename Stepper<T>::Step step(const Ids& y_prev) override {
    Tape<T>& tape = state_.h.front().tape();
    if (!marked_) {
      mark_ = tape.size();
      marked_ = true;
    } else {
      // the tape keeps the source side and the state; the last step's other nodes (its logits above all) go, so
      // that a long search runs in the memory of one step
      std::vector<Variable<T>> kept = state_.h;
      kept.insert(kept.end(), state_.c.begin(), state_.c.end());
      if (!state_.feed.empty()) kept.push_back(state_.feed);
      kept = tape.truncate_keeping(mark_, kept);
      std::size_t next = 0;
      for (Variable<T>& h : state_.h) h = kept[next++];
      for (Variable<T>& c : state_.c) c = kept[next++];
      if (!state_.feed.empty()) state_.feed = kept[next];
    }
    DecoderStep<T> step = decoder_.step(y_prev, state_, memory_);
    state_ = std::move(step.state);
    return {decoder_.logits(step.output), step.alpha};
  }

  void reorder(const std::vector<std::int64_t>& parents) override { state_ = gather_state(state_, parents); }

 private:
  Decoder<T>& decoder_;
  SourceMemory<T> memory_;
  DecoderState<T> state_;
  std::size_t mark_ = 0;  // the tape's size before the first step
  bool marked_ = false;
};

}  // namespace

// x (N, ...) → rows[0], rows[1], … of x: (rows.size(), ...), via the embedding op on x seen as a table (N, rest).
// Rows 0, 1, …, N − 1 (greedy search's expand(1)) give x itself: no copy.
template <class T>
Variable<T> gather_rows(const Variable<T>& x, const std::vector<std::int64_t>& rows) {
  if (x.empty()) return x;
  const Shape& shape = x.shape();
  bool identity = rows.size() == shape[0];
  for (std::size_t r = 0; r < rows.size() && identity; ++r) identity = rows[r] == static_cast<std::int64_t>(r);
  if (identity) return x;
  std::vector<std::int64_t> table{static_cast<std::int64_t>(shape[0]), -1};
  std::vector<std::int64_t> result{static_cast<std::int64_t>(rows.size())};
  for (std::size_t axis = 1; axis < shape.rank(); ++axis) result.push_back(static_cast<std::int64_t>(shape[axis]));
  Ids ids(Shape{rows.size()});
  std::copy(rows.begin(), rows.end(), ids.data());
  return reshape(embedding(reshape(x, table), ids), result);
}

Mask gather_mask(const Mask& mask, const std::vector<std::int64_t>& rows) {
  const std::size_t S = mask.shape()[1];
  Mask result(Shape{rows.size(), S});
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::copy(mask.data() + rows[r] * static_cast<std::int64_t>(S),
              mask.data() + (rows[r] + 1) * static_cast<std::int64_t>(S), result.data() + r * S);
  }
  return result;
}

template <class T>
std::vector<Hypothesis> greedy_decode(Stepper<T>& stepper, const std::vector<std::int64_t>& lengths,
                                      std::size_t max_length) {
  if (max_length == 0) throw std::invalid_argument("greedy_decode: maximum length 0");
  const std::size_t B = lengths.size();
  std::vector<Hypothesis> result(B);
  std::vector<bool> done(B, false);
  Ids y_prev(Shape{B}, sos_id);
  std::vector<double> log_p;
  for (std::size_t j = 0; j < max_length; ++j) {
    const typename Stepper<T>::Step step = stepper.step(y_prev);
    const std::size_t V = step.logits.shape()[1];
    // ŷ_j = argmax_v p(v | ŷ_<j, x) over the tokens a model may emit, fed back as the next step's y_{j-1}: the first
    // emittable one of each row's three most likely (only <pad> and <sos> are not emittable)
    const TopK<T> likeliest = topk(step.logits, std::min<std::size_t>(3, V));
    const std::size_t K = likeliest.indices.shape()[1];
    bool all_done = true;
    for (std::size_t b = 0; b < B; ++b) {
      if (done[b]) continue;
      log_probabilities(step.logits.value().data() + b * V, V, log_p);
      std::int64_t best = likeliest.indices.data()[b * K];
      for (std::size_t c = 1; c < K && !emittable(static_cast<std::size_t>(best)); ++c)
        best = likeliest.indices.data()[b * K + c];
      Hypothesis& h = result[b];
      h.log_prob += log_p[static_cast<std::size_t>(best)];
      h.token_log_probs.push_back(log_p[static_cast<std::size_t>(best)]);
      if (!step.alpha.empty()) h.attention.push_back(attention_row(step.alpha, b, lengths[b], step.maps));
      if (best == eos_id) {
        h.finished = true;
        done[b] = true;
      } else {
        h.tokens.push_back(best);
        all_done = false;
      }
      y_prev.data()[b] = best;
    }
    if (all_done) break;
  }
  for (Hypothesis& h : result) {
    h.score = normalised(h.log_prob, h.tokens.size() + (h.finished ? 1 : 0), 1.0);
  }
  return result;
}

// work(b0, b1, scratch) for `parts` consecutive ranges of the B sources, the first on this thread and each other on a
// thread of its own, each with its own scratch; returns when all are done (an exception in one is rethrown).
template <class Work>
void in_parts(std::size_t B, std::size_t parts, const Work& work, std::vector<std::vector<Candidate>>& scratch) {
  std::vector<std::future<void>> others;
  for (std::size_t p = 1; p < parts; ++p) {
    others.push_back(std::async(std::launch::async, [&, p] { work(B * p / parts, B * (p + 1) / parts, scratch[p]); }));
  }
  work(0, B / parts, scratch[0]);
  for (std::future<void>& other : others) other.get();
}

template <class T>
std::vector<Hypothesis> decode(Stepper<T>& stepper, const std::vector<std::int64_t>& lengths,
                               const SearchOptions& options, std::size_t default_max_length) {
  const std::size_t k = options.beam_width;
  if (k == 0) throw std::invalid_argument("decode: beam width 0");
  const std::size_t max_length = options.max_length ? options.max_length : default_max_length;
  if (max_length == 0) throw std::invalid_argument("decode: maximum length 0");
  const std::size_t B = lengths.size();
  // k rows per source: row b·k + r is beam r of source b; the source side is copied k times
  stepper.expand(k);
  BeamSearch search(B, options);
  Ids y_prev(Shape{B * k}, sos_id);
  // a part of the sources a thread, when there is enough work for a thread to pay: a softmax of each row (beam search,
  // or scores asked for) and at least 64 rows. Measured on the spa-eng test set, int8, --threads 2 (Zen 5): beam 5
  // 351-418 sentences/s with the search on two threads, 248-358 on one; greedy decoding without scores, whose rows
  // cost one pass over the logits, 2,276-2,569 on two and 2,817-3,149 on one
  const bool pays = search.probabilities && B * k >= 64;
  const std::size_t parts = pays ? std::max<std::size_t>(1, std::min(options.threads, B)) : 1;
  std::vector<std::vector<Candidate>> scratch(parts);
  SearchObserver* observer = options.observer;
  std::vector<std::uint8_t> stepping;  // the sources this step advances, whose settled tokens the observer is told
  const auto all_done = [&search] {
    return std::all_of(search.done.begin(), search.done.end(), [](std::uint8_t d) { return d != 0; });
  };
  for (std::size_t j = 0; j < max_length; ++j) {
    if (observer != nullptr) {
      for (std::size_t b = 0; b < B; ++b)
        if (!search.done[b] && !observer->wanted(b)) search.finish(b);
      if (all_done()) break;
      stepping = search.done;
    }
    const typename Stepper<T>::Step step = stepper.step(y_prev);  // logits (B·k, V)
    std::vector<std::int64_t> parents(B * k);
    const auto advance = [&](std::size_t b0, std::size_t b1, std::vector<Candidate>& candidates) {
      for (std::size_t b = b0; b < b1; ++b) {
        for (std::size_t r = 0; r < k; ++r) parents[b * k + r] = static_cast<std::int64_t>(b * k);
        if (!search.done[b]) {
          search.advance(b, step.logits, step.alpha, step.maps, lengths[b], j + 1 == max_length, parents, y_prev,
                         candidates);
        }
      }
    };
    in_parts(B, parts, advance, scratch);
    for (std::size_t b = 0; b < B && observer != nullptr && observer->tells(); ++b)
      if (stepping[b] == 0) search.tell(b, *observer);
    if (all_done()) break;
    // greedy decoding (k = 1) keeps every row where it is: no copy of the state
    bool moved = false;
    for (std::size_t r = 0; r < parents.size() && !moved; ++r) moved = parents[r] != static_cast<std::int64_t>(r);
    if (moved) stepper.reorder(parents);
  }
  std::vector<Hypothesis> result(B);
  for (std::size_t b = 0; b < B; ++b) {
    if (!search.done[b]) search.finish(b);
    result[b] = std::move(search.outputs[b]);
    if (!search.probabilities) result[b].log_prob = result[b].score = 0;  // sums of logits: not scores
  }
  return result;
}

template <class T>
std::vector<Hypothesis> greedy_decode(Decoder<T>& decoder, const Encoded<T>& encoded,
                                      const std::vector<std::int64_t>& lengths, std::size_t max_length) {
  RecurrentStepper<T> stepper(decoder, encoded);
  return greedy_decode(stepper, lengths, max_length);
}

template <class T>
std::vector<Hypothesis> decode(Decoder<T>& decoder, const Encoded<T>& encoded, const std::vector<std::int64_t>& lengths,
                               const SearchOptions& options, std::size_t default_max_length) {
  RecurrentStepper<T> stepper(decoder, encoded);
  return decode(stepper, lengths, options, default_max_length);
}

template <class T>
std::vector<Hypothesis> greedy_decode(Seq2seq<T>& model, const Ids& source, const std::vector<std::int64_t>& lengths,
                                      std::size_t max_length) {
  check_source(source, lengths);
  Tape<T> tape;
  NoGradGuard<T> no_grad(tape);
  const Encoded<T> encoded = model.encode(tape, source, lengths);
  return greedy_decode(*model.decoder, encoded, lengths, max_length ? max_length : model.config().max_target_length);
}

template <class T>
std::vector<Hypothesis> decode(Seq2seq<T>& model, const Ids& source, const std::vector<std::int64_t>& lengths,
                               const SearchOptions& options) {
  check_source(source, lengths);
  TapeWithContext<T> on(Context{nullptr, options.products});  // the products of the search's precision
  Tape<T>& tape = on.tape;
  NoGradGuard<T> no_grad(tape);
  const Encoded<T> encoded = model.encode(tape, source, lengths);
  return decode(*model.decoder, encoded, lengths, options, model.config().max_target_length);
}

#define ATTEND_INSTANTIATE(T)                                                                                         \
  template std::vector<Hypothesis> decode<T>(Seq2seq<T>&, const Ids&, const std::vector<std::int64_t>&,               \
                                             const SearchOptions&);                                                   \
  template std::vector<Hypothesis> greedy_decode<T>(Seq2seq<T>&, const Ids&, const std::vector<std::int64_t>&,        \
                                                    std::size_t);                                                     \
  template std::vector<Hypothesis> decode<T>(Decoder<T>&, const Encoded<T>&, const std::vector<std::int64_t>&,        \
                                             const SearchOptions&, std::size_t);                                      \
  template std::vector<Hypothesis> greedy_decode<T>(Decoder<T>&, const Encoded<T>&, const std::vector<std::int64_t>&, \
                                                    std::size_t);                                                     \
  template std::vector<Hypothesis> decode<T>(Stepper<T>&, const std::vector<std::int64_t>&, const SearchOptions&,     \
                                             std::size_t);                                                            \
  template std::vector<Hypothesis> greedy_decode<T>(Stepper<T>&, const std::vector<std::int64_t>&, std::size_t);      \
  template Variable<T> gather_rows<T>(const Variable<T>&, const std::vector<std::int64_t>&);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend::models
