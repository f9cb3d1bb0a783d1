// Greedy decoding and beam search: width 1 equals greedy exactly (and without scores, its outputs are the same), a wide
// beam finds the exact best output of a tiny model (checked against enumerating every output), batching does not change
// a sentence's result, and the attention rows that come back are distributions over the real source positions
// (models/search.hpp).
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "autograd/helpers.hpp"
#include "models/search.hpp"
#include "nn/optim.hpp"
#include "precision/precision.hpp"

using namespace attend;
using namespace attend::models;
using attend::testing::message_has;

namespace {

Seq2seqConfig search_model(const std::string& decoder, nn::CellKind cell, std::size_t target_vocab = 9) {
  Seq2seqConfig config;
  config.source_vocab_size = 10;
  config.target_vocab_size = target_vocab;
  config.cell = cell;
  config.embedding_dim = 6;
  config.hidden_size = 8;
  config.set_decoder(decoder);
  config.max_target_length = 7;
  config.seed = 21;
  return config;
}

// an untrained model's outputs are arbitrary but deterministic; make its end token likely enough to end some outputs
template <class T>
void favour_end_token(Seq2seq<T>& model, T bias) {
  model.decoder->output.b.value.data()[eos_id] += bias;
}

// `count` sources of 1 to 9 tokens (ids 4 … 9), drawn with `seed`.
std::vector<std::vector<std::int64_t>> random_sources(std::size_t count, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<std::int64_t>> sources(count);
  for (auto& source : sources) {
    source.resize(1 + rng.next() % 9);
    for (auto& token : source) token = 4 + static_cast<std::int64_t>(rng.next() % 6);
  }
  return sources;
}

Batch three_sources() { return make_batch({{4, 5, 6, 7, 8}, {9, 4}, {5, 6, 7}}); }

// log p(y | x) of one complete output by teacher forcing: Σ_j log softmax(logits_j)[y_j]
double sequence_log_prob(Seq2seq<double>& model, const std::vector<std::int64_t>& source,
                         const std::vector<std::int64_t>& output) {
  Tape<double> tape;
  Batch batch = make_batch({source}, {output});
  // target_out = output + <eos>; score the given output exactly as written (it may end with eos already)
  std::vector<std::int64_t> expected = output;
  Variable<double> logp = log_softmax(model.forward(tape, batch).logits, -1);
  const std::size_t V = logp.shape()[2];
  double total = 0;
  for (std::size_t j = 0; j < expected.size(); ++j) total += logp.value().data()[j * V + expected[j]];
  return total;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(search)

BOOST_AUTO_TEST_CASE(beam_width_one_is_greedy_decoding_exactly) {
  for (const char* decoder : {"vanilla", "bahdanau", "luong-general", "luong-dot"}) {
    for (nn::CellKind cell : {nn::CellKind::gru, nn::CellKind::lstm}) {
      BOOST_TEST_CONTEXT(decoder << " " << nn::to_string(cell)) {
        Seq2seq<float> model(search_model(decoder, cell));
        model.eval();
        favour_end_token(model, 1.5f);
        const Batch batch = three_sources();
        const auto greedy = greedy_decode(model, batch.source, batch.source_lengths);
        const auto beam = decode(model, batch.source, batch.source_lengths, {1, 0, 1.0});
        SearchOptions unscored{1, 0, 1.0};
        unscored.scores = false;  // as attend eval asks: the same outputs, no log-probabilities
        const auto outputs = decode(model, batch.source, batch.source_lengths, unscored);
        BOOST_REQUIRE(greedy.size() == 3u);
        BOOST_REQUIRE(beam.size() == 3u);
        BOOST_REQUIRE(outputs.size() == 3u);
        std::size_t finished = 0;
        for (std::size_t b = 0; b < 3; ++b) {
          for (std::int64_t y : greedy[b].tokens) BOOST_TEST((y != pad_id && y != sos_id));
          BOOST_TEST(beam[b].tokens == greedy[b].tokens, boost::test_tools::per_element());
          BOOST_TEST(beam[b].log_prob == greedy[b].log_prob);
          BOOST_TEST(beam[b].score == greedy[b].score);
          BOOST_TEST(beam[b].finished == greedy[b].finished);
          BOOST_TEST(beam[b].attention == greedy[b].attention);
          BOOST_TEST(outputs[b].tokens == greedy[b].tokens, boost::test_tools::per_element());
          BOOST_TEST(outputs[b].finished == greedy[b].finished);
          BOOST_TEST(outputs[b].attention == greedy[b].attention);
          BOOST_TEST((outputs[b].log_prob == 0.0 && outputs[b].score == 0.0));
          finished += greedy[b].finished;
        }
        BOOST_TEST(finished > 0u);  // the comparison covers outputs that end with <eos>
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(with_a_large_vocabulary_width_one_still_is_greedy_decoding) {
  // 500 tokens: the search skips most of a row on their logits alone (models/search.cpp, next_above), 16 at a time;
  // 80 sources of 1 to 9 tokens, their outputs by both searches, with and without scores
  Seq2seq<float> model(search_model("bahdanau", nn::CellKind::gru, 500));
  model.eval();
  const std::vector<std::vector<std::int64_t>> sources = random_sources(80, 8);
  const Batch batch = make_batch(sources);
  const auto greedy = greedy_decode(model, batch.source, batch.source_lengths);
  SearchOptions unscored{1, 0, 1.0};
  unscored.scores = false;
  for (const SearchOptions& options : {SearchOptions{1, 0, 1.0}, unscored}) {
    const auto beam = decode(model, batch.source, batch.source_lengths, options);
    BOOST_REQUIRE(beam.size() == sources.size());
    std::size_t same = 0;
    for (std::size_t b = 0; b < sources.size(); ++b) same += beam[b].tokens == greedy[b].tokens;
    BOOST_TEST(same == sources.size());
  }
}

BOOST_AUTO_TEST_CASE(the_search_on_several_threads_gives_the_same_results) {
  // 70 sources, greedy with scores and beam 3 (70 and 210 rows: the sources split among the threads); every result as
  // on one thread, bit for bit, search trees included
  Seq2seq<float> model(search_model("bahdanau", nn::CellKind::lstm, 60));
  model.eval();
  favour_end_token(model, 1.0f);
  const std::vector<std::vector<std::int64_t>> sources = random_sources(70, 9);
  const Batch batch = make_batch(sources);
  for (const std::size_t k : {std::size_t{1}, std::size_t{3}}) {
    std::vector<SearchTree> trees_1, trees_3;
    SearchOptions one{k, 0, 1.0, &trees_1}, three{k, 0, 1.0, &trees_3};
    three.threads = 3;
    const auto a = decode(model, batch.source, batch.source_lengths, one);
    const auto b = decode(model, batch.source, batch.source_lengths, three);
    BOOST_REQUIRE(a.size() == sources.size());
    BOOST_REQUIRE(b.size() == sources.size());
    std::size_t same = 0, finished = 0;
    for (std::size_t s = 0; s < sources.size(); ++s) {
      same += a[s].tokens == b[s].tokens && a[s].log_prob == b[s].log_prob && a[s].score == b[s].score &&
              a[s].finished == b[s].finished && a[s].attention == b[s].attention;
      finished += a[s].finished;
    }
    BOOST_TEST(same == sources.size(), "beam " << k);
    BOOST_TEST(finished > 0u);
    BOOST_REQUIRE(trees_3.size() == trees_1.size());
    for (std::size_t s = 0; s < sources.size(); ++s) {
      BOOST_REQUIRE(trees_3[s].size() == trees_1[s].size());
      for (std::size_t j = 0; j < trees_1[s].size(); ++j) {
        BOOST_REQUIRE(trees_3[s][j].size() == trees_1[s][j].size());
        for (std::size_t n = 0; n < trees_1[s][j].size(); ++n) {
          BOOST_TEST(trees_3[s][j][n].token == trees_1[s][j][n].token);
          BOOST_TEST(trees_3[s][j][n].parent == trees_1[s][j][n].parent);
        }
      }
    }
  }
}

// The precision travels with the search (SearchOptions::products), never through the process: one model a precision
// (every precision this machine runs: float32, f64products, and int8 or bf16 where the CPU and build have them), each
// decoding 40 sources by beam search on a thread of its own, all at once, gives the bytes it gives alone — and every
// precision but float32 gives other scores than float32's, so that products that never arrived would fail.
BOOST_AUTO_TEST_CASE(models_of_different_precisions_decode_side_by_side) {
  const Batch batch = make_batch(random_sources(40, 13));
  std::vector<std::string> names;
  for (const std::string& name : precision_names()) {
    if (find_precision(name)->unavailable().empty()) names.push_back(name);
  }
  BOOST_TEST_REQUIRE(names.size() >= 2u);  // float32 and f64products run everywhere
  std::vector<std::unique_ptr<Seq2seq<float>>> models;
  std::vector<std::unique_ptr<Products>> products;
  for (const std::string& name : names) {
    models.push_back(std::make_unique<Seq2seq<float>>(search_model("bahdanau", nn::CellKind::gru, 40)));
    models.back()->eval();
    favour_end_token(*models.back(), 1.0f);
    products.push_back(make_products(name, matrices_of(models.back()->parameters())));
  }
  const auto search = [&](std::size_t m) {
    SearchOptions options{3, 0, 1.0};
    options.products = products[m].get();
    return decode(*models[m], batch.source, batch.source_lengths, options);
  };
  std::vector<std::vector<Hypothesis>> alone, together(names.size());
  for (std::size_t m = 0; m < names.size(); ++m) alone.push_back(search(m));
  std::vector<std::thread> threads;
  for (std::size_t m = 0; m < names.size(); ++m) {
    threads.emplace_back([&, m] {
      for (int repeat = 0; repeat < 3; ++repeat) together[m] = search(m);
    });
  }
  for (std::thread& t : threads) t.join();
  for (std::size_t m = 0; m < names.size(); ++m) {
    std::size_t same = 0, same_as_float32 = 0;
    for (std::size_t s = 0; s < alone[m].size(); ++s) {
      same += together[m][s].tokens == alone[m][s].tokens && together[m][s].score == alone[m][s].score &&
              together[m][s].attention == alone[m][s].attention;
      same_as_float32 += alone[m][s].score == alone[0][s].score;
    }
    BOOST_TEST(same == alone[m].size(), names[m]);
    if (m > 0) BOOST_TEST(same_as_float32 < alone[m].size(), names[m] << " gives float32's scores");
  }
}

BOOST_AUTO_TEST_CASE(a_wide_beam_finds_the_best_output_found_by_enumeration) {
  // V = 5 tokens (pad, sos, eos, unk, one word) of which 3 can be output, at most 3 output tokens: 3 + 9 + 27 outputs
  // with α = 0 beam search stops only when no unfinished output can beat a finished one, so a beam wide enough to
  // keep every candidate is exact
  for (double alpha : {0.0}) {
    BOOST_TEST_CONTEXT("length penalty " << alpha) {
      Seq2seqConfig config = search_model("bahdanau", nn::CellKind::gru, 5);
      config.max_target_length = 3;
      Seq2seq<double> model(config);
      model.eval();
      favour_end_token(model, 0.5);
      const std::vector<std::int64_t> source{4, 7, 5};
      double best = -INFINITY;
      std::vector<std::int64_t> best_output;
      std::function<void(std::vector<std::int64_t>&)> enumerate = [&](std::vector<std::int64_t>& prefix) {
        for (std::int64_t v = 0; v < 5; ++v) {
          if (v == pad_id || v == sos_id) continue;  // never outputs
          prefix.push_back(v);
          if (v == eos_id) {
            const double score = sequence_log_prob(model, source, prefix) /
                                 (alpha == 0.0 ? 1.0 : std::pow(static_cast<double>(prefix.size()), alpha));
            if (score > best) {
              best = score;
              best_output.assign(prefix.begin(), prefix.end() - 1);
            }
          } else if (prefix.size() < 3) {
            enumerate(prefix);
          }
          prefix.pop_back();
        }
      };
      std::vector<std::int64_t> prefix;
      enumerate(prefix);
      BOOST_REQUIRE(std::isfinite(best));
      Batch batch = make_batch({source});
      const Hypothesis found = decode(model, batch.source, batch.source_lengths, {125, 3, alpha})[0];
      BOOST_TEST(found.finished);
      BOOST_TEST(found.tokens == best_output, boost::test_tools::per_element());
      BOOST_TEST(found.score == best, boost::test_tools::tolerance(1e-9));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_sentence_decodes_the_same_alone_and_in_a_batch) {
  Seq2seq<float> model(search_model("luong-concat", nn::CellKind::gru));
  model.eval();
  favour_end_token(model, 1.0f);
  const Batch batch = three_sources();
  const auto together = decode(model, batch.source, batch.source_lengths, {4, 0, 1.0});
  const std::vector<std::vector<std::int64_t>> sources{{4, 5, 6, 7, 8}, {9, 4}, {5, 6, 7}};
  for (std::size_t b = 0; b < 3; ++b) {
    Batch alone = make_batch({sources[b]});
    const Hypothesis h = decode(model, alone.source, alone.source_lengths, {4, 0, 1.0})[0];
    BOOST_TEST(h.tokens == together[b].tokens, boost::test_tools::per_element());
    BOOST_TEST(h.log_prob == together[b].log_prob, boost::test_tools::tolerance(1e-5));
  }
}

// The search's tree (SearchOptions::trees): at most k unfinished nodes a step, best first; every node's log-probability
// is its path's, scored by teacher forcing; the output decode() returns is a path of it, with its attention rows; and
// keeping the tree changes no output.
BOOST_AUTO_TEST_CASE(the_search_tree_holds_every_kept_hypothesis_and_the_output_as_a_path) {
  Seq2seq<double> model(search_model("bahdanau", nn::CellKind::gru));
  model.eval();
  const Batch batch = three_sources();
  const std::vector<std::vector<std::int64_t>> sources{{4, 5, 6, 7, 8}, {9, 4}, {5, 6, 7}};
  for (const std::size_t k : {1u, 3u}) {
    BOOST_TEST_CONTEXT("beam " << k) {
      std::vector<SearchTree> trees;
      SearchOptions options{k};
      const auto plain = decode(model, batch.source, batch.source_lengths, options);
      options.trees = &trees;
      const auto outputs = decode(model, batch.source, batch.source_lengths, options);
      BOOST_TEST_REQUIRE(trees.size() == 3u);
      for (std::size_t b = 0; b < 3; ++b) {
        BOOST_TEST(outputs[b].tokens == plain[b].tokens, boost::test_tools::per_element());
        BOOST_TEST(outputs[b].log_prob == plain[b].log_prob);
        std::vector<std::int64_t> best_path = outputs[b].tokens;
        if (outputs[b].finished) best_path.push_back(eos_id);
        bool found = false;
        for (std::size_t j = 0; j < trees[b].size(); ++j) {
          const std::vector<SearchNode>& step = trees[b][j];
          BOOST_TEST_REQUIRE(!step.empty());
          BOOST_TEST(std::count_if(step.begin(), step.end(), [](const SearchNode& x) { return !x.finished; }) <=
                     static_cast<std::ptrdiff_t>(k));
          for (std::size_t n = 0; n < step.size(); ++n) {
            if (n > 0) BOOST_TEST(step[n].log_prob <= step[n - 1].log_prob);
            // the path from the first step to this node
            std::vector<std::int64_t> path;
            std::vector<const SearchNode*> nodes;
            for (std::int64_t at = static_cast<std::int64_t>(n), i = static_cast<std::int64_t>(j); i >= 0; --i) {
              const SearchNode& node = trees[b][static_cast<std::size_t>(i)][static_cast<std::size_t>(at)];
              BOOST_TEST_REQUIRE((i == 0 ? node.parent == -1 : node.parent >= 0));
              BOOST_TEST_REQUIRE((node.finished == (node.token == eos_id)));
              if (i < static_cast<std::int64_t>(j)) BOOST_TEST_REQUIRE(!node.finished);  // a finished node ends a path
              path.insert(path.begin(), node.token);
              nodes.insert(nodes.begin(), &node);
              at = node.parent;
            }
            BOOST_TEST(step[n].log_prob == sequence_log_prob(model, sources[b], path),
                       boost::test_tools::tolerance(1e-9));
            if (path != best_path || step[n].log_prob != outputs[b].log_prob) continue;
            found = true;
            for (std::size_t t = 0; t < nodes.size(); ++t) {
              BOOST_TEST(nodes[t]->attention == outputs[b].attention[t], boost::test_tools::per_element());
            }
          }
        }
        BOOST_TEST(found, "source " << b << ": its output is no path of the tree");
      }
      // the test sees trees whose hypotheses do not all extend the best, and finished nodes
      std::size_t later_parents = 0, finished = 0;
      for (const SearchTree& tree : trees) {
        for (const auto& step : tree) {
          for (const SearchNode& node : step) {
            later_parents += node.parent > 0 ? 1 : 0;
            finished += node.finished ? 1 : 0;
          }
        }
      }
      BOOST_TEST((k == 1 ? later_parents == 0 : later_parents > 0));
      BOOST_TEST(finished > 0u);
    }
  }
}

// The alternatives are the other hypotheses the search finished — the tree's finished leaves — by their normalised
// score, without the output and without repeats; asking for them changes no output; greedy decoding has none.
BOOST_AUTO_TEST_CASE(alternatives_are_the_other_finished_outputs_by_score) {
  Seq2seq<double> model(search_model("bahdanau", nn::CellKind::gru));
  model.eval();
  const Batch batch = three_sources();
  std::size_t seen = 0;
  for (const std::size_t k : {1u, 3u, 5u}) {
    BOOST_TEST_CONTEXT("beam " << k) {
      SearchOptions options{k};
      const auto plain = decode(model, batch.source, batch.source_lengths, options);
      std::vector<SearchTree> trees;
      options.trees = &trees;
      options.alternatives = 2;
      const auto outputs = decode(model, batch.source, batch.source_lengths, options);
      for (std::size_t b = 0; b < 3; ++b) {
        BOOST_TEST(outputs[b].tokens == plain[b].tokens, boost::test_tools::per_element());
        BOOST_TEST(plain[b].alternatives.empty());
        // the oracle: every finished leaf's path and score, in the order the search finished them
        std::vector<std::pair<double, std::vector<std::int64_t>>> leaves;
        for (std::size_t j = 0; j < trees[b].size(); ++j) {
          for (const SearchNode& node : trees[b][j]) {
            if (!node.finished) continue;
            std::vector<std::int64_t> path;
            for (std::int64_t at = node.parent, i = static_cast<std::int64_t>(j) - 1; i >= 0; --i) {
              const SearchNode& up = trees[b][static_cast<std::size_t>(i)][static_cast<std::size_t>(at)];
              path.insert(path.begin(), up.token);
              at = up.parent;
            }
            leaves.emplace_back(node.log_prob / static_cast<double>(path.size() + 1), path);
          }
        }
        std::stable_sort(leaves.begin(), leaves.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
        std::vector<std::vector<std::int64_t>> want;
        for (const auto& [score, path] : leaves) {
          if (k == 1 || want.size() == 2 || path == outputs[b].tokens) continue;
          if (std::find(want.begin(), want.end(), path) == want.end()) want.push_back(path);
        }
        BOOST_TEST(outputs[b].alternatives == want);
        seen += want.size();
      }
    }
  }
  BOOST_TEST(seen > 0u);  // some source had alternatives to check
}

namespace {

// Records what a search tells: each source's settled tokens, the step at which each settled, and asks `wanted`.
struct Recorder : SearchObserver {
  std::vector<std::vector<SettledToken>> told;
  std::vector<std::vector<std::size_t>> told_at;  // the step (from 1) each token settled at
  std::vector<std::size_t> steps;                 // steps the source was asked about
  std::function<bool(std::size_t b, std::size_t step)> want = [](std::size_t, std::size_t) { return true; };
  bool telling = true;  // tells(): false, the search only asks
  explicit Recorder(std::size_t B) : told(B), told_at(B), steps(B, 0) {}
  bool wanted(std::size_t b) override { return want(b, ++steps[b]); }
  bool tells() const override { return telling; }
  void settled(std::size_t b, std::size_t first, const std::vector<SettledToken>& tokens) override {
    BOOST_TEST(first == told[b].size());  // in order, none twice
    BOOST_TEST(!tokens.empty());
    for (const SettledToken& t : tokens) {
      told[b].push_back(t);
      told_at[b].push_back(steps[b]);
    }
  }
};

// A model that always prefers token 4 and never ends: its search runs to the maximum length unless stopped. Counts its
// steps.
class EndlessStepper : public Stepper<float> {
 public:
  std::size_t steps = 0;
  void expand(std::size_t k) override { rows_ *= k; }
  Step step(const Ids&) override {
    ++steps;
    Tensor<float> logits(Shape{rows_, 6}, 0.0f);
    for (std::size_t r = 0; r < rows_; ++r) {
      logits.data()[r * 6 + 4] = 3.0f;
      logits.data()[r * 6 + eos_id] = -100.0f;
    }
    return {tape_.constant(logits), Variable<float>()};
  }
  void reorder(const std::vector<std::int64_t>&) override {}
  explicit EndlessStepper(std::size_t rows) : rows_(rows) {}

 private:
  Tape<float> tape_;
  std::size_t rows_;
};

}  // namespace

// An observer is told every token of each output in order, once, each as soon as it can no longer change (greedy: at
// its own step), with its log-probability and attention row; watching changes no output.
BOOST_AUTO_TEST_CASE(an_observer_is_told_each_output_as_it_settles) {
  Seq2seq<double> model(search_model("bahdanau", nn::CellKind::gru));
  model.eval();
  favour_end_token(model, -0.5);
  const Batch batch = make_batch(random_sources(12, 4));
  std::size_t early = 0;     // beam search's tokens told before the source's last step
  std::size_t finished = 0;  // outputs that ended with the end token
  for (const std::size_t k : {1u, 3u}) {
    BOOST_TEST_CONTEXT("beam " << k) {
      const auto plain = decode(model, batch.source, batch.source_lengths, {k});
      Recorder recorder(12);
      SearchOptions watched{k};
      watched.observer = &recorder;
      const auto outputs = decode(model, batch.source, batch.source_lengths, watched);
      for (std::size_t b = 0; b < 12; ++b) {
        const Hypothesis& h = outputs[b];
        finished += h.finished;
        BOOST_TEST(h.tokens == plain[b].tokens, boost::test_tools::per_element());
        BOOST_TEST(h.log_prob == plain[b].log_prob);
        BOOST_REQUIRE(recorder.told[b].size() == h.tokens.size());
        double sum = 0;
        for (const double lp : h.token_log_probs) sum += lp;
        BOOST_TEST(h.token_log_probs.size() == h.tokens.size() + (h.finished ? 1 : 0));
        BOOST_TEST(sum == h.log_prob, boost::test_tools::tolerance(1e-9));
        for (std::size_t j = 0; j < h.tokens.size(); ++j) {
          const SettledToken& t = recorder.told[b][j];
          BOOST_TEST(t.token == h.tokens[j]);
          BOOST_TEST(t.log_prob == h.token_log_probs[j]);
          BOOST_TEST((t.attention == std::vector<float>(h.attention[j].begin(), h.attention[j].end())));
          if (k == 1) BOOST_TEST(recorder.told_at[b][j] == j + 1);
          early += k > 1 && recorder.told_at[b][j] < recorder.steps[b];
        }
      }
    }
  }
  BOOST_TEST(early > 0u);  // beam search told some prefixes while its hypotheses were still being written
  BOOST_TEST(finished > 0u);
  // greedy_decode, written on its own, gives the tokens' log-probabilities too
  for (const Hypothesis& h : greedy_decode(model, batch.source, batch.source_lengths)) {
    double sum = 0;
    for (const double lp : h.token_log_probs) sum += lp;
    BOOST_TEST(sum == h.log_prob, boost::test_tools::tolerance(1e-9));
  }
}

// A source no longer wanted stops being searched (its output is what it held), the others decode as before; when no
// source is wanted the search stops stepping the model.
BOOST_AUTO_TEST_CASE(a_source_no_longer_wanted_stops_its_search) {
  Seq2seq<float> model(search_model("bahdanau", nn::CellKind::gru));
  model.eval();
  favour_end_token(model, -100.0f);  // every output runs to the maximum length, 7
  const Batch batch = three_sources();
  for (const std::size_t k : {1u, 2u}) {
    const auto plain = decode(model, batch.source, batch.source_lengths, {k});
    Recorder recorder(3);
    recorder.want = [](std::size_t b, std::size_t step) { return b != 1 || step <= 3; };
    SearchOptions watched{k};
    watched.observer = &recorder;
    const auto outputs = decode(model, batch.source, batch.source_lengths, watched);
    BOOST_TEST(outputs[1].tokens.size() == 3u);
    BOOST_TEST(!outputs[1].finished);
    BOOST_TEST(outputs[0].tokens == plain[0].tokens, boost::test_tools::per_element());
    BOOST_TEST(outputs[2].tokens == plain[2].tokens, boost::test_tools::per_element());
    BOOST_TEST(recorder.steps[1] == 4u);  // asked before steps 1 … 4, not after
  }
  for (const std::size_t k : {1u, 3u}) {
    EndlessStepper endless(2);
    Recorder recorder(2);
    recorder.want = [](std::size_t, std::size_t step) { return step <= 5; };
    SearchOptions watched{k, 100, 1.0};
    watched.observer = &recorder;
    const auto outputs = decode(endless, {1, 1}, watched, 100);
    BOOST_TEST(endless.steps == 5u);
    BOOST_TEST(outputs[0].tokens.size() == 5u);
    EndlessStepper unwatched(2);
    BOOST_TEST(decode(unwatched, {1, 1}, SearchOptions{k, 100, 1.0}, 100)[0].tokens.size() == 100u);
    // an observer that only asks (attend serve's, when no job streams) stops the search alike and is told nothing
    EndlessStepper asked(2);
    Recorder asking(2);
    asking.telling = false;
    asking.want = recorder.want;
    watched.observer = &asking;
    BOOST_TEST(decode(asked, {1, 1}, watched, 100)[0].tokens.size() == 5u);
    BOOST_TEST(asking.told[0].empty());
    BOOST_TEST(asking.told[1].empty());
  }
}

BOOST_AUTO_TEST_CASE(attention_rows_are_distributions_over_the_real_source) {
  Seq2seq<float> model(search_model("bahdanau", nn::CellKind::gru));
  model.eval();
  const Batch batch = three_sources();
  for (std::size_t width : {1u, 3u}) {
    const auto outputs = decode(model, batch.source, batch.source_lengths, {width, 0, 1.0});
    for (std::size_t b = 0; b < 3; ++b) {
      const Hypothesis& h = outputs[b];
      BOOST_TEST(h.attention.size() == h.tokens.size() + (h.finished ? 1 : 0));
      for (const auto& row : h.attention) {
        BOOST_TEST(static_cast<std::int64_t>(row.size()) == batch.source_lengths[b]);
        double total = 0;
        for (float a : row) total += a;
        BOOST_TEST(total == 1.0, boost::test_tools::tolerance(1e-5));
      }
      BOOST_TEST(h.tokens.size() <= 7u);
    }
  }
  // the vanilla decoder has no attention to report
  Seq2seq<float> vanilla(search_model("vanilla", nn::CellKind::gru));
  BOOST_TEST(decode(vanilla, batch.source, batch.source_lengths, {2, 0, 1.0})[0].attention.empty());
}

BOOST_AUTO_TEST_CASE(an_output_that_never_ends_stops_at_the_maximum_length) {
  Seq2seq<float> model(search_model("bahdanau", nn::CellKind::gru));
  favour_end_token(model, -100.0f);  // the end token is never chosen
  const Batch batch = three_sources();
  for (std::size_t width : {1u, 2u}) {
    const Hypothesis h = decode(model, batch.source, batch.source_lengths, {width, 4, 1.0})[0];
    BOOST_TEST(!h.finished);
    BOOST_TEST(h.tokens.size() == 4u);
  }
  BOOST_TEST(greedy_decode(model, batch.source, batch.source_lengths)[1].tokens.size() == 7u);
}

// gather_rows copies the rows asked for, in their order; rows 0 … N − 1 (greedy search's expand(1)) give the same node,
// no copy
BOOST_AUTO_TEST_CASE(gathering_rows_copies_them_unless_they_are_all_in_place) {
  Tape<double> tape;
  Tensor<double> value(Shape{3, 2, 2});
  for (std::size_t i = 0; i < value.size(); ++i) value.data()[i] = static_cast<double>(i);
  const Variable<double> x = tape.constant(value);
  const std::size_t nodes = tape.size();
  const Variable<double> same = gather_rows(x, {0, 1, 2});
  BOOST_TEST(same.index() == x.index());
  BOOST_TEST(tape.size() == nodes);
  const Variable<double> moved = gather_rows(x, {2, 0, 0, 1});
  BOOST_TEST((moved.shape() == Shape{4, 2, 2}));
  const std::vector<std::size_t> from{2, 0, 0, 1};
  for (std::size_t r = 0; r < from.size(); ++r)
    for (std::size_t i = 0; i < 4; ++i) BOOST_TEST(moved.value().data()[4 * r + i] == value.data()[4 * from[r] + i]);
  BOOST_TEST(gather_rows(x, {0, 1}).shape()[0] == 2u);  // the first rows, but not all of them: a copy
}

BOOST_AUTO_TEST_CASE(bad_requests_name_the_problem) {
  Seq2seq<float> model(search_model("bahdanau", nn::CellKind::gru));
  const Batch batch = three_sources();
  BOOST_CHECK_EXCEPTION(decode(model, batch.source, batch.source_lengths, {0, 0, 1.0}), std::invalid_argument,
                        message_has({"beam width 0"}));
  BOOST_CHECK_EXCEPTION(decode(model, batch.source, {5, 2}, {}), std::invalid_argument,
                        message_has({"(3,5)", "2 lengths"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(usage)

// The example of docs/reference/models.md, quoted from here so that it always compiles and works: a model learns to
// reverse short sequences, then decodes with a beam.
BOOST_AUTO_TEST_CASE(reference_example_trains_and_decodes) {
  // [docs:models-usage]
  models::Seq2seqConfig config;
  config.source_vocab_size = 10;  // ids 0..3 are <pad> <sos> <eos> <unk>; 4..9 are "words"
  config.target_vocab_size = 10;
  config.set_decoder("bahdanau");  // or vanilla, luong-dot, luong-general, luong-concat
  config.hidden_size = 32;
  config.embedding_dim = 16;
  models::Seq2seq<float> model(config);
  nn::Adam<float> adam(model.parameters(), {0.01});

  // reverse the source: (4 5 6) -> (6 5 4)
  const std::vector<std::vector<std::int64_t>> sources{{4, 5, 6}, {7, 8}, {9, 4, 8, 5}, {6, 6, 7}};
  std::vector<std::vector<std::int64_t>> targets;
  for (const auto& s : sources) targets.emplace_back(s.rbegin(), s.rend());
  const models::Batch batch = models::make_batch(sources, targets);  // padded, <sos>/<eos> added

  Tape<float> tape;
  for (int step = 0; step < 200; ++step) {
    tape.clear();
    adam.zero_grad();
    Variable<float> loss = model.loss(tape, batch);  // teacher forcing, mean cross-entropy
    tape.backward(loss);
    adam.step();
  }

  model.eval();
  const std::vector<models::Hypothesis> outputs =
      models::decode(model, batch.source, batch.source_lengths, {/*beam_width=*/3});
  // outputs[0].tokens == {6, 5, 4}; outputs[0].attention[j][i] = α_ij
  // [docs:end]
  for (std::size_t b = 0; b < sources.size(); ++b) {
    BOOST_TEST(outputs[b].tokens == targets[b], boost::test_tools::per_element());
    BOOST_TEST(outputs[b].finished);
    BOOST_TEST(outputs[b].attention.size() == targets[b].size() + 1);
  }
}

BOOST_AUTO_TEST_SUITE_END()
