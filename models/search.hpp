// Decoding: from a trained model and a batch of sources to output sequences, argmax_y p(y | x) approximated step by
// step. Greedy decoding keeps the single most probable token at each step; beam search keeps the k most probable
// partial outputs (by summed log-probability), sets a hypothesis aside when it ends with the end token among the k
// best candidates, stops when the best candidate of a step is an end (or at the maximum length), and returns the
// finished output with the best length-normalised score log p(y | x) / |y|^α. With α = 0 the stop loses nothing: every
// unfinished output is already less probable than a finished one. Width 1 is greedy decoding exactly.
// Both run a whole batch at once (beam search as B·k rows) and record each output token's attention weights.
// Neither ever outputs <pad> or <sos> (they are skipped, the other probabilities are not renormalised).
// Chapters: docs/03-encoder-decoder.md (greedy, feeding back predictions), docs/12-translation.md (beam search).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "models/seq2seq.hpp"
#include "runtime/context.hpp"

namespace attend::models {

// One hypothesis a search kept at a step: a node of its tree. `token` is what the step appended (the end token when
// it finished the hypothesis), `log_prob` the hypothesis's summed log-probability so far, `parent` its place among the
// previous step's nodes (−1 at the first step), `attention` the row that drew the token (as Hypothesis::attention's).
struct SearchNode {
  std::int64_t token = 0;
  double log_prob = 0;
  std::int64_t parent = -1;
  bool finished = false;
  std::vector<float> attention;
};

// A search's tree for one source: the nodes each step kept, best first — at most k that go on, and the hypotheses the
// step finished (leaves). The output decode() returns is one of its paths.
using SearchTree = std::vector<std::vector<SearchNode>>;

class SearchObserver;

struct SearchOptions {
  std::size_t beam_width = 1;   // k; 1 is greedy decoding
  std::size_t max_length = 0;   // most output tokens, the end token included; 0 means the model's max_target_length
  double length_penalty = 1.0;  // α in log p / |y|^α (|y| counts the end token); 0 compares raw log-probabilities
  // If given, decode() puts each source's tree here (one per source); left nullptr, it keeps none (the cost of none)
  std::vector<SearchTree>* trees = nullptr;
  // Greedy decoding (k = 1): whether to compute each output's log_prob and score. false (attend eval) leaves them 0
  // and skips a softmax over the vocabulary for every row and step, the search's largest cost beside the model's;
  // the outputs are the same, as one beam's continuations rank as its logits do. Beam search always computes them.
  bool scores = true;
  // Threads for the search's own work between the model's steps — ranking each source's continuations, which beam
  // search does over a softmax of every row — the sources split among them (each source's result is the same
  // whatever the count). attend eval and predict pass their --threads for a lone batch; several batches decode one a
  // thread, each with 1 here (apps/model.hpp, decode_batches).
  std::size_t threads = 1;
  // Beam search: up to this many other outputs of each source besides the best (Hypothesis::alternatives): the other
  // hypotheses it finished (the live ones when none finished within the maximum length), by score, each different
  // from the output and from the others — fewer when fewer are left. 0: none kept. Greedy decoding has none.
  std::size_t alternatives = 0;
  // The products the model's steps multiply with (precision/products.hpp: a precision's, e.g. int8 with the model's
  // weights quantized); nullptr: float32 (OpenBLAS). Must outlive the search.
  const Products* products = nullptr;
  // Told the tokens of each output as they settle, and asked whether each source is still wanted (SearchObserver);
  // nullptr: none. decode() with the observer as decode() without it, but for the sources no longer wanted.
  SearchObserver* observer = nullptr;
};

// One output sequence.
struct Hypothesis {
  std::vector<std::int64_t> tokens;  // y_1 … y_n, without the end token
  double log_prob = 0;               // log p(y | x), the end token's probability included when finished
  double score = 0;                  // log_prob / |y|^α, what beam search ranks by
  bool finished = false;             // ended with the end token (false: stopped at max_length)
  // attention[j][i] = α_ij: the weight of source position i (real positions only) at output step j, one row per
  // emitted token, the end token included when finished; empty for the vanilla decoder. A model that records several
  // maps (the Transformer's AttentionView::every) puts them one after the other in a row: M blocks of the source's
  // length
  std::vector<std::vector<float>> attention;
  // The tokens of the other outputs the search kept (SearchOptions::alternatives), best first.
  std::vector<std::vector<std::int64_t>> alternatives;
  // log p(y_j | y_<j, x) of each token, the end token's last when finished: they sum to log_prob (to rounding). Empty
  // when the search ranked by logits (SearchOptions::scores false).
  std::vector<double> token_log_probs;
};

// A token of a source's output that no later step of the search can change, as SearchObserver::settled tells it.
struct SettledToken {
  std::int64_t token = 0;
  double log_prob = 0;           // log p(y_j | y_<j, x)
  std::vector<float> attention;  // the row that drew it (Hypothesis::attention's), or empty
};

// What a search tells as it goes, and asks (attend serve's streams): called on the thread that runs the search,
// between its steps, with the source's place in the batch decode() was given.
class SearchObserver {
 public:
  virtual ~SearchObserver() = default;
  // Whether source b's output is still wanted, asked before each step: once false, the search stops extending it
  // (its output is what it holds then, as at the maximum length), and stops altogether when no source is wanted.
  virtual bool wanted(std::size_t b) = 0;
  // Tokens first … first + tokens.size() − 1 of source b's output have settled: every live hypothesis and the best
  // finished one (the only finished one that can still be the output) begin with them. Greedy decoding settles a
  // token a step; beam search when its hypotheses agree; when a source's search ends, the rest of its output. The end
  // token is not told. Together, in order, the tokens a source was told are its output's.
  virtual void settled(std::size_t b, std::size_t first, const std::vector<SettledToken>& tokens) = 0;
  // Whether settled() is to be called at all: false, the search only asks wanted() (and saves finding what settled).
  virtual bool tells() const { return true; }
};

// An observer of a part of a batch: source b of the part is source places[b] of `whole`'s.
class PartObserver final : public SearchObserver {
 public:
  PartObserver(SearchObserver& whole, std::vector<std::size_t> places) : whole_(whole), places_(std::move(places)) {}
  bool wanted(std::size_t b) override { return whole_.wanted(places_.at(b)); }
  void settled(std::size_t b, std::size_t first, const std::vector<SettledToken>& tokens) override {
    whole_.settled(places_.at(b), first, tokens);
  }
  bool tells() const override { return whole_.tells(); }

 private:
  SearchObserver& whole_;
  std::vector<std::size_t> places_;
};

// `options` for a part of a batch whose sources are the whole's places[0], places[1], …: its observer, if any, seen
// through `part` (PartObserver), which must outlive the search.
inline SearchOptions for_part(const SearchOptions& options, std::vector<std::size_t> places,
                              std::optional<PartObserver>& part) {
  SearchOptions own = options;
  if (options.observer != nullptr) own.observer = &part.emplace(*options.observer, std::move(places));
  return own;
}

// What the two searches need from a model: one output step at a time for a batch of rows, each row one partial output
// (greedy: row b is source b; beam search: row b·k + r is beam r of source b). The recurrent decoders and the
// Transformer (transformer.hpp) implement it; decode() and greedy_decode() below run on it.
template <class T>
class Stepper {
 public:
  struct Step {
    Variable<T> logits;    // (rows, V): the next token's scores for every row
    Variable<T> alpha;     // (rows, S): the attention over the source that drew it, or empty (none to show)
    std::size_t maps = 1;  // alpha holds M maps side by side: (rows, M·S)
  };
  virtual ~Stepper() = default;
  // Before the first step of a beam search of width k: row b becomes rows b·k … b·k + k − 1, each a copy.
  virtual void expand(std::size_t k) = 0;
  // Feeds each row's previous token (rows,) — <sos> at the first step — and moves every row's state on by it.
  virtual Step step(const Ids& y_prev) = 0;
  // After a step: row r continues the state of row parents[r] (beam search keeps and copies the best rows).
  virtual void reorder(const std::vector<std::int64_t>& parents) = 0;
};

// The searches on a stepper, recorded without gradients on a tape that outlives the call: lengths[b] is the number
// of real source positions of source b (the attention rows are cut to it). options.max_length 0 means
// default_max_length.
template <class T>
std::vector<Hypothesis> decode(Stepper<T>& stepper, const std::vector<std::int64_t>& lengths,
                               const SearchOptions& options, std::size_t default_max_length);
template <class T>
std::vector<Hypothesis> greedy_decode(Stepper<T>& stepper, const std::vector<std::int64_t>& lengths,
                                      std::size_t max_length);

// x (N, ...) → rows[0], rows[1], … of x: (rows.size(), ...) — a stepper's expand() and reorder() of its state; rows
// 0, 1, …, N − 1 give x itself.
template <class T>
Variable<T> gather_rows(const Variable<T>& x, const std::vector<std::int64_t>& rows);
Mask gather_mask(const Mask& mask, const std::vector<std::int64_t>& rows);

// The best output for each source of the batch (source ids (B, S) with their lengths). The model should be in
// evaluation mode (model.eval()). Records on its own tape without gradients.
template <class T>
std::vector<Hypothesis> decode(Seq2seq<T>& model, const Ids& source, const std::vector<std::int64_t>& lengths,
                               const SearchOptions& options = {});

// Greedy decoding written on its own, step by step with the argmax token and no beam bookkeeping. decode() with
// beam_width 1 runs the beam search with one beam and gives exactly these outputs (a test holds it to that).
template <class T>
std::vector<Hypothesis> greedy_decode(Seq2seq<T>& model, const Ids& source, const std::vector<std::int64_t>& lengths,
                                      std::size_t max_length = 0);

// The two searches from a batch already encoded (by a Seq2seq, or by the image captioner of captioner.hpp), recorded
// without gradients on a tape that outlives the call: lengths[b] is the number of real memory positions of row b
// (the attention rows are cut to it). options.max_length 0 means default_max_length.
template <class T>
std::vector<Hypothesis> decode(Decoder<T>& decoder, const Encoded<T>& encoded, const std::vector<std::int64_t>& lengths,
                               const SearchOptions& options, std::size_t default_max_length);
template <class T>
std::vector<Hypothesis> greedy_decode(Decoder<T>& decoder, const Encoded<T>& encoded,
                                      const std::vector<std::int64_t>& lengths, std::size_t max_length);

}  // namespace attend::models
