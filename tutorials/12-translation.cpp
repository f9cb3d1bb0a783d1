// Chapter 12 — translation on real data (docs/12-translation.md).
//
// The course's models on the task the articles were written for: Spanish → English sentence pairs from the Tatoeba
// Project (via manythings.org/anki), tatoeba/spa-eng.tsv and hin-eng.tsv found as docs/data.md says (--data-dir DIR
// searched first; `attend data fetch spa-eng hin-eng` downloads them). The
// program shows how a sentence becomes tokens (12.1), with a tokeniser written by hand for ASCII text as a second
// route; splits the pairs by distinct Spanish sentence so that every test sentence keeps all its English
// translations as references; computes BLEU (12.2)-(12.5) by hand, on one sentence and on a whole test set, next to
// data::corpus_bleu; trains the vanilla, Bahdanau and Luong-general decoders with the same budget and compares
// their BLEU with greedy decoding and with beam search (12.6), overall and by source length, checking beam search's
// scores by teacher forcing and beam width 1 against greedy decoding; draws the attention of a few test sentences;
// and last trains the Bahdanau model on the 3k Hindi → English pairs, to show what so little data can and cannot do.
// --small: a few hundred pairs of each file and a few steps; every check still runs. Deterministic except the lines
// "time: ...".

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "data/bleu.hpp"
#include "data/pairs.hpp"
#include "data/text.hpp"
#include "data/vocabulary.hpp"
#include "models/search.hpp"
#include "models/seq2seq.hpp"
#include "models/train.hpp"
#include "plot/svg.hpp"
#include "tutorials/common.hpp"

using namespace attend;            // Tensor, Tape, Variable, Rng, and nn::, models::, data::, plot::
using namespace attend::tutorial;  // this folder's helpers (common.hpp)

namespace {

using Tokens = std::vector<std::string>;
using Sequence = std::vector<std::int64_t>;

std::string joined(const Tokens& tokens) {
  std::string text;
  for (const std::string& token : tokens) text += (text.empty() ? "" : " ") + token;
  return text;
}

// [docs:ascii-words]
// (12.1) by hand, for text that is all ASCII: lower case; spaces and control characters separate words; every other
// character that is not a letter or digit is a token of its own, except ' and - between two letters or digits and
// . and , between two digits, which stay inside the word ("don't", "well-known", "3.5").
Tokens ascii_words(const std::string& text) {
  const auto byte = [&](std::size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0; };
  const auto alnum = [&](std::size_t k) { return std::isalnum(byte(k)) != 0; };
  const auto digit = [&](std::size_t k) { return std::isdigit(byte(k)) != 0; };
  Tokens tokens;
  std::string word;
  for (std::size_t k = 0; k < text.size(); ++k) {
    const unsigned char c = static_cast<unsigned char>(text[k]);
    const bool inside = k > 0 && (((c == '\'' || c == '-') && alnum(k - 1) && alnum(k + 1)) ||
                                  ((c == '.' || c == ',') && digit(k - 1) && digit(k + 1)));
    if (std::isalnum(c) || inside) {
      word += static_cast<char>(std::tolower(c));
      continue;
    }
    if (!word.empty()) tokens.push_back(word);
    word.clear();
    if (c != ' ' && !std::iscntrl(c)) tokens.push_back(std::string(1, static_cast<char>(c)));
  }
  if (!word.empty()) tokens.push_back(word);
  return tokens;
}
// [docs:end]

bool is_ascii(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 128; });
}

// ---- BLEU by hand ---------------------------------------------------------------------------------------------------

// [docs:bleu-by-hand]
constexpr std::size_t N = 4;  // BLEU-4: n-grams of orders n = 1..N, weights w_n = 1/N

// count(g, s) for every n-gram g of the token sequence s
std::map<Tokens, std::size_t> ngram_counts(const Tokens& s, std::size_t n) {
  std::map<Tokens, std::size_t> counts;
  for (std::size_t start = 0; start + n <= s.size(); ++start) {
    ++counts[Tokens(s.begin() + start, s.begin() + start + n)];
  }
  return counts;
}

// What BLEU is made of, summed over the outputs counted so far.
struct BleuCounts {
  std::vector<double> m = std::vector<double>(N, 0.0);  // m_n: clipped n-gram matches
  std::vector<double> t = std::vector<double>(N, 0.0);  // t_n: the outputs' n-grams
  double c = 0, r = 0;                                  // output length, reference length
};

// One output ŷ and the references y^1..y^M of its source, added to `counts`.
void add_counts(BleuCounts& counts, const Tokens& y_hat, const std::vector<Tokens>& references) {
  for (std::size_t n = 1; n <= N; ++n) {
    for (const auto& [g, in_output] : ngram_counts(y_hat, n)) {
      std::size_t in_references = 0;  // max_m count(g, y^m): the most any one reference holds
      for (const Tokens& y : references) {
        const std::map<Tokens, std::size_t> in_y = ngram_counts(y, n);
        const auto found = in_y.find(g);
        if (found != in_y.end()) in_references = std::max(in_references, found->second);
      }
      // (12.2)  the clipped count min(count(g, ŷ), max_m count(g, y^m)) adds to m_n
      counts.m[n - 1] += static_cast<double>(std::min(in_output, in_references));
    }
    // (12.2)  t_n counts the output's |ŷ| − n + 1 n-grams, and at least one (NLTK's convention)
    counts.t[n - 1] += std::max(1.0, static_cast<double>(y_hat.size()) - static_cast<double>(n) + 1);
  }
  counts.c += static_cast<double>(y_hat.size());
  // (12.3)  r adds the length of the reference closest in length to ŷ; of two equally close, the shorter
  std::size_t closest = references.front().size();
  for (const Tokens& y : references) {
    const auto distance = [&](std::size_t length) { return std::abs(double(length) - double(y_hat.size())); };
    if (distance(y.size()) < distance(closest) || (distance(y.size()) == distance(closest) && y.size() < closest)) {
      closest = y.size();
    }
  }
  counts.r += static_cast<double>(closest);
}

// (12.2)  p_n = m_n / t_n
double precision(const BleuCounts& counts, std::size_t n) { return counts.m[n - 1] / counts.t[n - 1]; }

// (12.3)  BP = 1 if c > r, else exp(1 − r/c)
double brevity_penalty(const BleuCounts& counts) {
  if (counts.c == 0) return 0;
  return counts.c > counts.r ? 1.0 : std::exp(1 - counts.r / counts.c);
}

// (12.4)  BLEU = BP · exp(Σ_n w_n log p_n), w_n = 1/N; 0 when some p_n is 0
double bleu(const BleuCounts& counts) {
  double sum = 0;
  for (std::size_t n = 1; n <= N; ++n) {
    if (counts.m[n - 1] == 0) return 0;
    sum += (1.0 / N) * std::log(precision(counts, n));
  }
  return brevity_penalty(counts) * std::exp(sum);
}
// [docs:end]

// ---- Data -----------------------------------------------------------------------------------------------------------

// A language pair ready for training: the split, the vocabularies, and the training pairs as ids.
struct Corpus {
  data::TranslationData data;
  data::Vocabulary source_vocabulary, target_vocabulary;
  std::vector<Sequence> train_sources, train_targets;
  std::vector<data::TranslationExample> train_examples;  // a sample of training sources, all their references
};

Corpus make_corpus(const data::PairFile& file, const data::TranslationSplitOptions& split, std::size_t min_count,
                   std::size_t train_examples) {
  Corpus corpus;
  // [docs:data]
  // Tokenise (12.1), keep pairs of at most split.max_words words a side, and split by distinct source sentence: a test
  // sentence never occurs as a training source, and keeps every translation the file gives it.
  corpus.data = data::make_translation_data(file, split);
  // Vocabularies from the training pairs only: tokens seen at least min_count times; the rest read as <unk>.
  std::vector<Tokens> sources, targets;
  for (const data::TokenPair& pair : corpus.data.train) {
    sources.push_back(pair.source);
    targets.push_back(pair.target);
  }
  corpus.source_vocabulary = data::build_vocabulary(sources, min_count);
  corpus.target_vocabulary = data::build_vocabulary(targets, min_count);
  for (const data::TokenPair& pair : corpus.data.train) {
    corpus.train_sources.push_back(corpus.source_vocabulary.encode(pair.source));
    corpus.train_targets.push_back(corpus.target_vocabulary.encode(pair.target));
  }
  // [docs:end]
  // Training sources with all their training translations, evenly spread over the file: BLEU on data the model saw.
  std::map<std::string, std::size_t> group;
  std::vector<data::TranslationExample> all;
  for (const data::TokenPair& pair : corpus.data.train) {
    const auto [at, added] = group.emplace(joined(pair.source), all.size());
    if (added) all.push_back({pair.source, {}});
    all[at->second].references.push_back(pair.target);
  }
  const std::size_t count = std::min(train_examples, all.size());
  for (std::size_t k = 0; k < count; ++k) corpus.train_examples.push_back(all[k * all.size() / count]);
  return corpus;
}

// The pairs of a file, or every `every`-th of them (--small).
data::PairFile every_nth(const data::PairFile& file, std::size_t every) {
  data::PairFile fewer = file;
  fewer.pairs.clear();
  for (std::size_t k = 0; k < file.pairs.size(); k += every) fewer.pairs.push_back(file.pairs[k]);
  return fewer;
}

// ---- Training and translating ---------------------------------------------------------------------------------------

struct Run {
  std::vector<double> losses;  // the mean loss of each stretch of `report_every` steps
  double seconds = 0;
  std::size_t tokens = 0;  // target tokens trained on, end tokens included
};

// [docs:train]
// Chapter 9's training: models::train, Adam 2e-3 on the teacher-forced cross-entropy, gradients clipped to norm 1,
// batches of 64 pairs of similar source lengths, a fixed number of steps (here less than one pass over the Spanish
// pairs); the mean loss of each stretch of report_every steps.
Run train(models::Seq2seq<float>& model, const Corpus& corpus, std::size_t steps, std::size_t report_every,
          std::uint64_t order_seed) {
  models::TrainOptions training;
  training.steps = steps;
  training.batch_size = 64;
  training.lr = 2e-3;
  training.seed = order_seed;  // the same order of batches for every model (seed 7)
  Run run;
  double loss_sum = 0;
  training.on_step = [&](const models::TrainStep& done) {
    run.tokens += done.tokens;
    loss_sum += done.loss;
    if (done.step % report_every == 0) {
      run.losses.push_back(loss_sum / static_cast<double>(report_every));
      loss_sum = 0;
    }
  };
  const auto start = std::chrono::steady_clock::now();
  models::train(model, corpus.train_sources, corpus.train_targets, training);
  run.seconds = tutorial::seconds_since(start);
  return run;
}
// [docs:end]

// [docs:translate]
// The output of every source, 100 sources per batch: beam width 1 is greedy decoding, and with a wider beam the
// outputs are ranked by (12.6), log p(y | x) / |y|^α with α = search.length_penalty.
std::vector<models::Hypothesis> translate(models::Seq2seq<float>& model, const std::vector<Sequence>& sources,
                                          const models::SearchOptions& search) {
  std::vector<models::Hypothesis> outputs;
  for (std::size_t first = 0; first < sources.size(); first += 100) {
    const std::size_t last = std::min(first + 100, sources.size());
    const std::vector<Sequence> chunk(sources.begin() + static_cast<std::ptrdiff_t>(first),
                                      sources.begin() + static_cast<std::ptrdiff_t>(last));
    const models::Batch batch = models::make_batch(chunk);
    for (models::Hypothesis& h : models::decode(model, batch.source, batch.source_lengths, search)) {
      outputs.push_back(std::move(h));
    }
  }
  return outputs;
}

// Corpus BLEU of the outputs against every reference of each example.
data::BleuScore score(const std::vector<models::Hypothesis>& outputs,
                      const std::vector<data::TranslationExample>& examples, const data::Vocabulary& target) {
  std::vector<Tokens> hypotheses;
  std::vector<std::vector<Tokens>> references;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    hypotheses.push_back(target.decode(outputs[k].tokens));
    references.push_back(examples[k].references);
  }
  return data::corpus_bleu(hypotheses, references);
}
// [docs:end]

std::vector<Sequence> sources_of(const std::vector<data::TranslationExample>& examples,
                                 const data::Vocabulary& vocabulary) {
  std::vector<Sequence> sources;
  for (const data::TranslationExample& example : examples) sources.push_back(vocabulary.encode(example.source));
  return sources;
}

// The output as text for people (data::detokenize).
std::string text_of(const models::Hypothesis& output, const data::Vocabulary& target) {
  return data::detokenize(target.decode(output.tokens), data::Tokenization::words);
}

// [docs:teacher-forcing]
// log p(ŷ | x) of each output, recomputed with teacher forcing: the model reads ŷ_{j-1} and its softmax at step j is
// evaluated at ŷ_j; the end token's probability counts when the output finished with it.
std::vector<double> teacher_forced_log_p(models::Seq2seq<float>& model, const std::vector<Sequence>& sources,
                                         const std::vector<models::Hypothesis>& outputs) {
  std::vector<Sequence> targets;
  for (const models::Hypothesis& h : outputs) targets.push_back(h.tokens);
  const models::Batch batch = models::make_batch(sources, targets);
  Tape<float> tape;
  const models::TeacherForced<float> forced = model.forward(tape, batch);
  const attend::Tensor<float>& logits = forced.logits.value();  // (B, T, V_y)
  const std::size_t T = logits.shape()[1], V = logits.shape()[2];
  std::vector<double> log_p(outputs.size(), 0.0);
  for (std::size_t b = 0; b < outputs.size(); ++b) {
    const std::size_t steps = outputs[b].tokens.size() + (outputs[b].finished ? 1 : 0);
    for (std::size_t j = 0; j < steps; ++j) {
      const float* row = logits.data() + (b * T + j) * V;
      const double row_max = *std::max_element(row, row + V);
      double sum = 0;
      for (std::size_t v = 0; v < V; ++v) sum += std::exp(row[v] - row_max);
      // log p(ŷ_j | ŷ_<j, x) = logit of ŷ_j − log Σ_v exp(logit_v)
      log_p[b] += row[batch.target_out.data()[b * T + j]] - row_max - std::log(sum);
    }
  }
  return log_p;
}
// [docs:end]

// The attention of one output as a heatmap: source words across, output words (and the end token) down.
std::string heatmap(const models::Hypothesis& output, const data::TranslationExample& example,
                    const data::Vocabulary& target, const std::string& decoder) {
  Tokens output_tokens = target.decode(output.tokens);
  if (output.finished) output_tokens.push_back("<eos>");
  std::vector<std::vector<double>> alpha;
  for (const std::vector<float>& row : output.attention) alpha.emplace_back(row.begin(), row.end());
  plot::HeatmapOptions options;
  options.title = decoder + ", greedy output";  // the sentence itself is along the top
  return plot::attention_svg(example.source, output_tokens, alpha, options);
}

// One configuration for every model of the chapter; only the decoder changes.
models::Seq2seqConfig configure(const Corpus& corpus, const std::string& decoder, std::size_t embedding_dim,
                                std::size_t hidden_size, std::uint64_t seed) {
  // [docs:config]
  models::Seq2seqConfig config;
  config.source_vocab_size = corpus.source_vocabulary.size();
  config.target_vocab_size = corpus.target_vocabulary.size();
  config.set_decoder(decoder);  // "vanilla", "bahdanau" or "luong-general"
  config.embedding_dim = embedding_dim;
  config.hidden_size = hidden_size;  // GRU encoder (one direction) and decoder
  config.max_target_length = 30;     // decoding stops here; the references have at most 10 words
  config.seed = seed;                // the initial weights (seed 1)
  // [docs:end]
  return config;
}

// "4.021 2.615 2.165": the mean losses of a run's stretches.
std::string losses_of(const Run& run) {
  std::string text;
  char loss[32];
  for (double l : run.losses) {
    std::snprintf(loss, sizeof loss, "%s%.3f", text.empty() ? "" : " ", l);
    text += loss;
  }
  return text;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * fraction);
  return text;
}

// The chapter's settings; --small keeps every step but makes them tiny.
struct Settings {
  std::size_t every;            // keep every n-th pair of the Spanish file
  std::size_t test_size;        // distinct source sentences
  std::size_t validation_size;  //
  std::size_t steps;            // training steps of 64 pairs per decoder
  std::size_t report_every;     // the loss is printed as the mean of each stretch of this many steps
  std::size_t embedding_dim, hidden_size;
  std::size_t hindi_steps, hindi_every, hindi_test_size;
  std::uint64_t seed = 0;  // --seed S: added to the seeds of the initial weights (1) and of the batch order (7)
};

Settings settings_for(bool small) {
  Settings s;
  s.every = small ? 250 : 1;
  s.test_size = small ? 40 : 2000;
  s.validation_size = small ? 20 : 1000;
  s.steps = small ? 4 : 1200;
  s.report_every = small ? 2 : 300;
  s.embedding_dim = small ? 8 : 64;
  s.hidden_size = small ? 16 : 128;
  s.hindi_steps = small ? 4 : 2000;
  s.hindi_every = small ? 5 : 1;
  s.hindi_test_size = small ? 30 : 300;
  return s;
}

// ---- The text: normalisation and tokens -----------------------------------------------------------------------------

// How many sentences the two routes of (12.1) disagree on.
struct TokenizeDifferences {
  std::size_t ascii_sentences = 0, ascii_differ = 0;  // ascii_words vs data::tokenize, all-ASCII sentences
  std::size_t sentences = 0, round_trip_differ = 0;   // tokenize(detokenize(tokens)) vs tokens, every sentence
};

TokenizeDifferences tokenize_differences(const data::PairFile& file) {
  // [docs:tokenize-checks]
  std::size_t ascii_sentences = 0, ascii_differ = 0, sentences = 0, round_trip_differ = 0;
  for (const data::SentencePair& pair : file.pairs) {
    for (const std::string& text : {pair.source, pair.target}) {
      const Tokens tokens = data::tokenize(text, data::Tokenization::words);
      // a second route: the rule written out for ASCII text
      if (is_ascii(text)) {
        ++ascii_sentences;
        if (ascii_words(text) != tokens) ++ascii_differ;
      }
      // detokenize (the text people read) and tokenize again: the same tokens
      ++sentences;
      const std::string shown = data::detokenize(tokens, data::Tokenization::words);
      if (data::tokenize(shown, data::Tokenization::words) != tokens) ++round_trip_differ;
    }
  }
  // [docs:end]
  return {ascii_sentences, ascii_differ, sentences, round_trip_differ};
}

// (12.1) on a few sentences, then checked on every sentence of the file.
void show_tokens(const data::PairFile& file) {
  std::printf("(12.1) text -> tokens:\n");
  const std::vector<std::string> examples{"¿Qué es lo que haces?", "I'll be back at 6:30.", "Don't trust him.",
                                          "It costs 1,000 yen, or 3.5 dollars.",
                                          "Tom\xE2\x80\x99s well-known \xE2\x80\x9C"
                                          "fact\xE2\x80\x9D!"};
  for (const std::string& text : examples) {
    const Tokens tokens = data::tokenize(text, data::Tokenization::words);
    std::printf("  \"%s\"\n      -> %s\n", text.c_str(), joined(tokens).c_str());
  }
  // "canción" with ó as one code point (U+00F3) and as o followed by the combining accent U+0301: NFC makes them one
  const Tokens composed = data::tokenize("Canci\xC3\xB3n", data::Tokenization::words);
  const Tokens decomposed = data::tokenize("Cancio\xCC\x81n", data::Tokenization::words);
  tutorial::check("(12.1) \"canción\" with ó as U+00F3 and as o + U+0301: tokens that differ",
                  composed == decomposed ? 0 : 1, 0);
  const TokenizeDifferences d = tokenize_differences(file);
  tutorial::check("(12.1) ascii_words vs data::tokenize, " + std::to_string(d.ascii_sentences) +
                      " all-ASCII sentences: sentences that differ",
                  static_cast<double>(d.ascii_differ), 0);
  tutorial::check("(12.1) tokenize(detokenize(tokens)) vs tokens, " + std::to_string(d.sentences) +
                      " sentences: sentences that differ",
                  static_cast<double>(d.round_trip_differ), 0);
}

// ---- The split ------------------------------------------------------------------------------------------------------

data::TranslationSplitOptions split_options(const Settings& settings) {
  data::TranslationSplitOptions split;
  split.seed = 1;
  split.validation_size = settings.validation_size;
  split.test_size = settings.test_size;
  split.max_words = 10;
  return split;
}

// The fraction of the test sentences' tokens that read as <unk>.
double unknown_fraction(const Corpus& corpus) {
  std::size_t tokens = 0, unknown = 0;
  for (const Sequence& x : sources_of(corpus.data.test, corpus.source_vocabulary)) {
    tokens += x.size();
    unknown += static_cast<std::size_t>(std::count(x.begin(), x.end(), data::Vocabulary::unk_id));
  }
  return double(unknown) / double(tokens);
}

// The Spanish pairs split and encoded; prints the split and the vocabularies, and checks that no test sentence is a
// training source.
Corpus split_spanish(const data::PairFile& file, const data::TranslationSplitOptions& split, std::size_t test_size) {
  const Corpus spanish = make_corpus(file, split, /*min_count=*/2, /*train_examples=*/test_size);
  const data::TranslationData& data = spanish.data;
  std::size_t several = 0, most = 0;
  for (const data::TranslationExample& example : data.test) {
    several += example.references.size() > 1;
    most = std::max(most, example.references.size());
  }
  std::printf(
      "\nthe split (seed %llu): %zu pairs with at most %zu words a side, %zu distinct Spanish sentences:\n"
      "  %zu training pairs, %zu validation and %zu test sentences\n"
      "  test sentences with more than one reference: %zu of %zu (at most %zu references)\n",
      static_cast<unsigned long long>(split.seed), data.kept_pairs, split.max_words, data.distinct_sources,
      data.train.size(), data.validation.size(), data.test.size(), several, data.test.size(), most);
  std::set<std::string> train_sources;
  for (const data::TokenPair& pair : data.train) train_sources.insert(joined(pair.source));
  std::size_t leaked = 0;
  for (const data::TranslationExample& example : data.test) leaked += train_sources.count(joined(example.source));
  tutorial::check("test sentences that are also training sources", static_cast<double>(leaked), 0);
  std::printf(
      "vocabularies (training tokens seen at least twice): %zu Spanish, %zu English, the 4 specials included;\n"
      "  %s of the test sentences' tokens read as <unk>\n",
      spanish.source_vocabulary.size(), spanish.target_vocabulary.size(), percent(unknown_fraction(spanish)).c_str());
  return spanish;
}

// ---- BLEU by hand on one sentence -----------------------------------------------------------------------------------

// Every English translation the file gives for one Spanish sentence, and two outputs written by hand: (12.2)-(12.4)
// by hand against data::corpus_bleu.
void bleu_on_one_sentence(const data::PairFile& whole_file) {
  const std::string example_source = "Es hora de irte a la cama.";
  data::TranslationExample example{data::tokenize(example_source, data::Tokenization::words), {}};
  for (const data::SentencePair& pair : whole_file.pairs) {
    if (pair.source == example_source) {
      example.references.push_back(data::tokenize(pair.target, data::Tokenization::words));
    }
  }
  std::printf("\nBLEU by hand: \"%s\" has %zu references in the file:\n", example_source.c_str(),
              example.references.size());
  for (const Tokens& y : example.references) std::printf("  %s\n", joined(y).c_str());
  const std::vector<Tokens> outputs_by_hand{data::tokenize("It's time to go to bed to bed.", data::Tokenization::words),
                                            data::tokenize("Time for bed.", data::Tokenization::words)};
  double worst_p = 0, worst_bp = 0, worst_bleu = 0;
  for (const Tokens& y_hat : outputs_by_hand) {
    BleuCounts counts;
    add_counts(counts, y_hat, example.references);
    const data::BleuScore library = data::corpus_bleu({y_hat}, {example.references});
    std::printf("output \"%s\": c = %.0f, r = %.0f\n", joined(y_hat).c_str(), counts.c, counts.r);
    for (std::size_t n = 1; n <= N; ++n) {
      std::printf("  n = %zu: %2.0f of %2.0f n-grams match, p_%zu = %.4f\n", n, counts.m[n - 1], counts.t[n - 1], n,
                  precision(counts, n));
      worst_p = std::max(worst_p, std::abs(precision(counts, n) - library.precisions[n - 1]));
    }
    std::printf("  BP = %.4f, BLEU = %.4f\n", brevity_penalty(counts), bleu(counts));
    worst_bp = std::max(worst_bp, std::abs(brevity_penalty(counts) - library.brevity_penalty));
    worst_bleu = std::max(worst_bleu, std::abs(bleu(counts) - library.bleu));
  }
  tutorial::check("(12.2) p_n by hand vs data::corpus_bleu", worst_p, 1e-12);
  tutorial::check("(12.3) BP by hand vs data::corpus_bleu", worst_bp, 1e-12);
  tutorial::check("(12.4) BLEU by hand vs data::corpus_bleu", worst_bleu, 1e-12);
}

// ---- Three decoders, one budget -------------------------------------------------------------------------------------

// One decoder of the comparison, trained, and its translations of the test set.
struct Trained {
  std::string decoder;
  std::unique_ptr<models::Seq2seq<float>> model;
  Run run;
  std::vector<models::Hypothesis> greedy, beam;  // beam width 1 and 5
  data::BleuScore greedy_bleu, beam_bleu, train_bleu;
  double translate_seconds = 0;
};

// Trains one decoder, then translates the test set twice (and the training examples once, greedy).
Trained train_and_translate(const Corpus& spanish, const std::string& decoder, const Settings& settings) {
  const std::vector<Sequence> test_sources = sources_of(spanish.data.test, spanish.source_vocabulary);
  const std::size_t embedding_dim = settings.embedding_dim, hidden_size = settings.hidden_size;
  const std::size_t steps = settings.steps, report_every = settings.report_every;
  const data::TranslationData& data = spanish.data;
  Trained trained{decoder, nullptr, {}, {}, {}, {}, {}, {}, 0};
  // [docs:compare]
  auto model = std::make_unique<models::Seq2seq<float>>(
      configure(spanish, decoder, embedding_dim, hidden_size, /*seed=*/1 + settings.seed));
  const Run run = train(*model, spanish, steps, report_every, /*order_seed=*/7 + settings.seed);
  const auto decode_start = std::chrono::steady_clock::now();
  trained.greedy = translate(*model, test_sources, {/*beam_width=*/1});
  trained.beam = translate(*model, test_sources, {/*beam_width=*/5, /*max_length=*/0, /*length_penalty=*/1.0});
  trained.greedy_bleu = score(trained.greedy, data.test, spanish.target_vocabulary);
  trained.beam_bleu = score(trained.beam, data.test, spanish.target_vocabulary);
  // [docs:end]
  trained.train_bleu = score(translate(*model, sources_of(spanish.train_examples, spanish.source_vocabulary), {1}),
                             spanish.train_examples, spanish.target_vocabulary);
  trained.translate_seconds = tutorial::seconds_since(decode_start);
  trained.run = run;
  trained.model = std::move(model);
  return trained;
}

// Each decoder trained and translating in turn; prints the losses, then the timings.
std::vector<Trained> compare_decoders(const Corpus& spanish, const std::vector<std::string>& decoders,
                                      const Settings& settings) {
  std::printf("\ntraining: %zu steps of 64 pairs for each decoder, GRU, E = %zu, H = %zu, Adam 2e-3, clip 1\n",
              settings.steps, settings.embedding_dim, settings.hidden_size);
  std::printf("%-14s %10s   loss, mean of each %zu steps\n", "decoder", "parameters", settings.report_every);
  std::vector<Trained> trained;
  for (const std::string& decoder : decoders) {
    trained.push_back(train_and_translate(spanish, decoder, settings));
    std::printf("%-14s %10zu   %s\n", decoder.c_str(), trained.back().model->parameter_count(),
                losses_of(trained.back().run).c_str());
  }
  for (const Trained& t : trained) {
    std::printf("time: %-14s training %6.1f s (%5.0f target tokens/s), translating %5.1f s\n", t.decoder.c_str(),
                t.run.seconds, double(t.run.tokens) / t.run.seconds, t.translate_seconds);
  }
  return trained;
}

void print_test_bleu(const std::vector<Trained>& trained, const Corpus& spanish) {
  std::printf("\ntest BLEU (%zu Spanish sentences, all references, on our tokens):\n", spanish.data.test.size());
  std::printf("%-14s %7s %7s   %-27s %6s %8s   %s\n", "decoder", "greedy", "beam 5", "greedy: p_1 p_2 p_3 p_4", "BP",
              "c/r", "training BLEU");
  for (const Trained& t : trained) {
    const data::BleuScore& g = t.greedy_bleu;
    std::printf("%-14s %7.2f %7.2f   %5.1f %5.1f %5.1f %5.1f       %6.3f %8.3f   %6.2f\n", t.decoder.c_str(),
                100 * g.bleu, 100 * t.beam_bleu.bleu, 100 * g.precisions[0], 100 * g.precisions[1],
                100 * g.precisions[2], 100 * g.precisions[3], g.brevity_penalty,
                double(g.hypothesis_length) / double(g.reference_length), 100 * t.train_bleu.bleu);
  }
  std::printf("(training BLEU: greedy, on %zu training sentences with all their training translations)\n",
              spanish.train_examples.size());
}

// ---- Corpus BLEU by hand, and the mean of sentence BLEU -------------------------------------------------------------

// (12.5) by hand on the greedy outputs of one decoder, against data::corpus_bleu; prints it next to the mean of
// the sentence BLEUs.
void corpus_bleu_by_hand(const Trained& shown, const Corpus& spanish) {
  const data::TranslationData& data = spanish.data;
  const std::vector<models::Hypothesis>& greedy = shown.greedy;
  // [docs:corpus]
  // (12.5)  corpus BLEU: m_n, t_n, c and r summed over all outputs first; against it, the mean of sentence BLEUs
  BleuCounts corpus;
  double sentence_sum = 0;
  std::size_t sentence_zero = 0, zero_short = 0;
  for (std::size_t k = 0; k < data.test.size(); ++k) {
    const Tokens y_hat = spanish.target_vocabulary.decode(greedy[k].tokens);
    add_counts(corpus, y_hat, data.test[k].references);
    BleuCounts sentence;
    add_counts(sentence, y_hat, data.test[k].references);
    sentence_sum += bleu(sentence);
    if (bleu(sentence) == 0) {
      ++sentence_zero;
      zero_short += y_hat.size() < N;
    }
  }
  // [docs:end]
  const data::BleuScore& library = shown.greedy_bleu;
  double worst_corpus = std::abs(bleu(corpus) - library.bleu);
  for (std::size_t n = 1; n <= N; ++n) {
    worst_corpus = std::max(worst_corpus, std::abs(precision(corpus, n) - library.precisions[n - 1]));
  }
  std::printf("\n%s, greedy, the %zu test sentences:\n", shown.decoder.c_str(), data.test.size());
  std::printf("  corpus BLEU (12.5)           %6.2f   (c = %.0f, r = %.0f)\n", 100 * bleu(corpus), corpus.c, corpus.r);
  std::printf("  mean of the sentence BLEUs   %6.2f   (%zu sentences score 0, %zu of them shorter than %zu tokens)\n",
              100 * sentence_sum / double(data.test.size()), sentence_zero, zero_short, N);
  tutorial::check("(12.5) corpus BLEU and p_n from counts summed by hand vs data::corpus_bleu", worst_corpus, 1e-12);
}

// ---- Beam search ----------------------------------------------------------------------------------------------------

// Sources first..first+99 (or fewer at the end).
template <class T>
std::vector<T> hundred_from(const std::vector<T>& all, std::size_t first) {
  return std::vector<T>(all.begin() + static_cast<std::ptrdiff_t>(first),
                        all.begin() + static_cast<std::ptrdiff_t>(std::min(first + 100, all.size())));
}

// Beam width 1 through the beam search against greedy decoding written on its own.
void check_beam_width_1(const Trained& shown, const std::vector<Sequence>& test_sources) {
  std::size_t differ = 0;
  double worst_log_p = 0;
  for (std::size_t first = 0; first < test_sources.size(); first += 100) {
    const models::Batch batch = models::make_batch(hundred_from(test_sources, first));
    const std::vector<models::Hypothesis> plain =
        models::greedy_decode(*shown.model, batch.source, batch.source_lengths);
    for (std::size_t b = 0; b < plain.size(); ++b) {
      differ += plain[b].tokens != shown.greedy[first + b].tokens;
      worst_log_p = std::max(worst_log_p, std::abs(plain[b].log_prob - shown.greedy[first + b].log_prob));
    }
  }
  tutorial::check("(12.6) beam width 1 vs models::greedy_decode, outputs that differ", double(differ), 0);
  tutorial::check("(12.6) beam width 1 vs models::greedy_decode, log p(y|x)", worst_log_p, 1e-9);
}

// The beam's scores (12.6) by hand, and its log p(y | x) by teacher forcing.
void check_beam_scores(models::Seq2seq<float>& model, const std::vector<Sequence>& test_sources,
                       const std::vector<models::Hypothesis>& width_5) {
  // [docs:beam-check]
  // (12.6)  s(y) = log p(y | x) / |y|^α, |y| counting the end token; log p(y | x) again by teacher forcing
  const double alpha = 1.0;
  double worst_score = 0, worst_forced = 0;
  for (std::size_t first = 0; first < test_sources.size(); first += 100) {
    const std::size_t last = std::min(first + 100, test_sources.size());
    const std::vector<Sequence> chunk(test_sources.begin() + static_cast<std::ptrdiff_t>(first),
                                      test_sources.begin() + static_cast<std::ptrdiff_t>(last));
    const std::vector<models::Hypothesis> outputs(width_5.begin() + static_cast<std::ptrdiff_t>(first),
                                                  width_5.begin() + static_cast<std::ptrdiff_t>(last));
    const std::vector<double> log_p = teacher_forced_log_p(model, chunk, outputs);
    for (std::size_t b = 0; b < outputs.size(); ++b) {
      const double length = double(outputs[b].tokens.size() + (outputs[b].finished ? 1 : 0));
      worst_score = std::max(worst_score, std::abs(outputs[b].log_prob / std::pow(length, alpha) - outputs[b].score));
      worst_forced = std::max(worst_forced, std::abs(log_p[b] - outputs[b].log_prob));
    }
  }
  // [docs:end]
  tutorial::check("(12.6) s(y) = log p(y|x) / |y|^α by hand vs Hypothesis::score", worst_score, 1e-9);
  tutorial::check("(12.6) log p(y|x) of the beam's outputs by teacher forcing vs the beam's sums", worst_forced, 1e-3);
}

// Where beam search changed the output: the first three.
void show_beam_changes(const Trained& shown, const Corpus& spanish) {
  const data::TranslationData& data = spanish.data;
  std::vector<std::size_t> changed;
  for (std::size_t k = 0; k < data.test.size(); ++k) {
    if (shown.greedy[k].tokens != shown.beam[k].tokens) changed.push_back(k);
  }
  std::printf("\n%s: beam 5 changes %zu of the %zu outputs; the first three:\n", shown.decoder.c_str(), changed.size(),
              data.test.size());
  for (std::size_t n = 0; n < 3 && n < changed.size(); ++n) {
    const std::size_t k = changed[n];
    const models::Hypothesis& g = shown.greedy[k];
    const models::Hypothesis& b = shown.beam[k];
    std::printf("  \"%s\"\n", data::detokenize(data.test[k].source, data::Tokenization::words).c_str());
    std::printf("    greedy     log p %7.3f  s %7.3f  \"%s\"\n", g.log_prob, g.score,
                text_of(g, spanish.target_vocabulary).c_str());
    std::printf("    beam 5     log p %7.3f  s %7.3f  \"%s\"\n", b.log_prob, b.score,
                text_of(b, spanish.target_vocabulary).c_str());
    std::printf("    reference                         \"%s\"\n",
                data::detokenize(data.test[k].references[0], data::Tokenization::words).c_str());
  }
}

// What length normalisation does: greedy, beam 5 ranked by log p alone (α = 0), and by (12.6) with α = 1.
void length_normalisation(const Trained& shown, const std::vector<Sequence>& test_sources, const Corpus& spanish) {
  const std::vector<models::Hypothesis> raw = translate(*shown.model, test_sources, {5, 0, /*length_penalty=*/0.0});
  const data::BleuScore raw_bleu = score(raw, spanish.data.test, spanish.target_vocabulary);
  std::printf("\n%s on the %zu test sentences:\n%-30s BLEU   p_1   p_2   p_3   p_4     BP    c/r\n",
              shown.decoder.c_str(), spanish.data.test.size(), "");
  const auto row = [](const std::string& name, const data::BleuScore& b) {
    const std::size_t width = data::utf8_characters(name).size();  // characters, not bytes: "α" is two
    std::printf("  %s%s %6.2f %5.1f %5.1f %5.1f %5.1f  %5.3f  %5.3f\n", name.c_str(),
                std::string(width < 26 ? 26 - width : 0, ' ').c_str(), 100 * b.bleu, 100 * b.precisions[0],
                100 * b.precisions[1], 100 * b.precisions[2], 100 * b.precisions[3], b.brevity_penalty,
                double(b.hypothesis_length) / double(b.reference_length));
  };
  row("greedy", shown.greedy_bleu);
  row("beam 5, α = 0: log p", raw_bleu);
  row("beam 5, α = 1: log p / |y|", shown.beam_bleu);
}

// ---- BLEU by source length ------------------------------------------------------------------------------------------

// Prints a table of test BLEU by source length and returns one curve per decoder.
std::vector<plot::Series> bleu_by_length(const std::vector<Trained>& trained, const Corpus& spanish) {
  const data::TranslationData& data = spanish.data;
  // [docs:buckets]
  // The test sentences by the number of words of their source (1–3 together: the translations of the shortest are
  // often too short to hold a 4-gram), corpus BLEU within each bucket: chapters 4 and 10's curves on real data.
  const std::vector<std::pair<std::size_t, std::size_t>> buckets{{1, 3}, {4, 4}, {5, 5}, {6, 6},
                                                                 {7, 7}, {8, 8}, {9, 9}, {10, 10}};
  std::vector<plot::Series> curves;
  for (const Trained& t : trained) curves.push_back({t.decoder, {}, {}});
  std::printf("\ntest BLEU by source length (greedy):\n%-7s %9s", "words", "sentences");
  for (const Trained& t : trained) std::printf(" %14s", t.decoder.c_str());
  std::printf("\n");
  for (const auto& [shortest, longest] : buckets) {
    std::vector<std::size_t> members;
    for (std::size_t k = 0; k < data.test.size(); ++k) {
      const std::size_t words = data::word_count(data.test[k].source);
      if (words >= shortest && words <= longest) members.push_back(k);
    }
    if (members.empty()) continue;
    std::printf(
        "%-7s %9zu",
        (shortest == longest ? std::to_string(shortest) : std::to_string(shortest) + "-" + std::to_string(longest))
            .c_str(),
        members.size());
    for (std::size_t d = 0; d < trained.size(); ++d) {
      std::vector<models::Hypothesis> outputs;
      std::vector<data::TranslationExample> examples;
      for (std::size_t k : members) {
        outputs.push_back(trained[d].greedy[k]);
        examples.push_back(data.test[k]);
      }
      const double b = 100 * score(outputs, examples, spanish.target_vocabulary).bleu;
      curves[d].x.push_back(static_cast<double>(longest));
      curves[d].y.push_back(b);
      std::printf(" %14.2f", b);
    }
    std::printf("\n");
  }
  // [docs:end]
  return curves;
}

void draw_bleu_by_length(const tutorial::Options& options, const std::vector<plot::Series>& curves) {
  double highest = 0;
  for (const plot::Series& curve : curves) {
    highest = std::max(highest, *std::max_element(curve.y.begin(), curve.y.end()));
  }
  tutorial::write_figure(options, "12-bleu-by-length.svg",
                         plot::line_chart_svg(curves, {"Spanish → English: test BLEU against source length",
                                                       "source length in words (1–3 drawn at 3)", "BLEU (greedy)", 0.0,
                                                       std::max(10.0, 10 * std::ceil(highest / 10))}));
}

// ---- Attention on real sentences ------------------------------------------------------------------------------------

// Two test sentences of 7 to 9 words: their references and outputs, and the attention of each attention decoder.
void attention_on_real_sentences(const tutorial::Options& options, const std::vector<Trained>& trained,
                                 const Corpus& spanish) {
  const data::TranslationData& data = spanish.data;
  std::vector<std::size_t> pictured;  // the first two test sentences of 7 to 9 words
  for (std::size_t k = 0; k < data.test.size() && pictured.size() < 2; ++k) {
    const std::size_t words = data::word_count(data.test[k].source);
    if (words >= 7 && words <= 9) pictured.push_back(k);
  }
  for (std::size_t k = 0; pictured.size() < 2; ++k) pictured.push_back(k);  // --small: whatever there is
  std::printf("\nthe attention of two test sentences:\n");
  for (std::size_t n = 0; n < pictured.size(); ++n) {
    const data::TranslationExample& test = data.test[pictured[n]];
    std::printf("  \"%s\"\n", data::detokenize(test.source, data::Tokenization::words).c_str());
    for (const Tokens& y : test.references) {
      std::printf("    reference      \"%s\"\n", data::detokenize(y, data::Tokenization::words).c_str());
    }
    for (const Trained& t : trained) {
      std::printf("    %-14s \"%s\"\n", t.decoder.c_str(),
                  text_of(t.greedy[pictured[n]], spanish.target_vocabulary).c_str());
    }
  }
  for (std::size_t d = 1; d < trained.size(); ++d) {
    for (std::size_t n = 0; n < pictured.size(); ++n) {
      tutorial::write_figure(options, "12-heatmap-" + trained[d].decoder + "-" + std::to_string(n + 1) + ".svg",
                             heatmap(trained[d].greedy[pictured[n]], data.test[pictured[n]], spanish.target_vocabulary,
                                     trained[d].decoder));
    }
  }
}

// ---- Hindi -> English: 3k pairs -------------------------------------------------------------------------------------

// How many outputs equal one of their references exactly.
std::size_t exact_matches(const std::vector<models::Hypothesis>& outputs,
                          const std::vector<data::TranslationExample>& examples, const data::Vocabulary& target) {
  std::size_t right = 0;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const Tokens y_hat = target.decode(outputs[k].tokens);
    const auto& references = examples[k].references;
    right += std::find(references.begin(), references.end(), y_hat) != references.end();
  }
  return right;
}

// "  <source>\n    reference \"...\"\n    output    \"...\"" for one example.
void print_example(const data::TranslationExample& example, const models::Hypothesis& output,
                   const data::Vocabulary& target) {
  std::printf("  %s\n    reference \"%s\"\n    output    \"%s\"\n",
              data::detokenize(example.source, data::Tokenization::words).c_str(),
              data::detokenize(example.references[0], data::Tokenization::words).c_str(),
              text_of(output, target).c_str());
}

// The Bahdanau model on the 3k Hindi → English pairs: BLEU on training and test sentences, and a few of each.
void hindi_to_english(const std::string& hindi_path, const data::TranslationSplitOptions& split,
                      const Settings& settings) {
  const std::size_t hindi_test_size = settings.hindi_test_size, hindi_steps = settings.hindi_steps;
  const std::size_t embedding_dim = settings.embedding_dim, hidden_size = settings.hidden_size;
  data::PairReadOptions hindi_read;
  hindi_read.source_column = data::pair_column(hindi_path, "hin");
  const data::PairFile hindi_file = every_nth(data::read_pair_file(hindi_path, hindi_read), settings.hindi_every);
  data::TranslationSplitOptions hindi_split = split;
  hindi_split.validation_size = 0;
  hindi_split.test_size = hindi_test_size;
  // [docs:hindi]
  const Corpus hindi = make_corpus(hindi_file, hindi_split, /*min_count=*/2, /*train_examples=*/hindi_test_size);
  models::Seq2seq<float> hindi_model(configure(hindi, "bahdanau", embedding_dim, hidden_size, 1 + settings.seed));
  const Run hindi_run = train(hindi_model, hindi, hindi_steps, hindi_steps / 4, 7 + settings.seed);
  const std::vector<models::Hypothesis> hindi_test =
      translate(hindi_model, sources_of(hindi.data.test, hindi.source_vocabulary), {1});
  const std::vector<models::Hypothesis> hindi_train =
      translate(hindi_model, sources_of(hindi.train_examples, hindi.source_vocabulary), {1});
  // [docs:end]
  const double epochs = double(hindi_steps * 64) / double(hindi.data.train.size());
  std::printf(
      "\n%s: %zu pairs%s; %zu with at most %zu words a side, %zu distinct Hindi sentences:\n"
      "  %zu training pairs, %zu test sentences; vocabularies %zu Hindi, %zu English;\n"
      "  %s of the test sentences' tokens read as <unk>\n",
      "tatoeba/hin-eng.tsv", hindi_file.pairs.size(),
      settings.hindi_every > 1 ? (" (every " + std::to_string(settings.hindi_every) + "th)").c_str() : "",
      hindi.data.kept_pairs, hindi_split.max_words, hindi.data.distinct_sources, hindi.data.train.size(),
      hindi.data.test.size(), hindi.source_vocabulary.size(), hindi.target_vocabulary.size(),
      percent(unknown_fraction(hindi)).c_str());
  std::printf("bahdanau, %zu steps of 64 (%.1f passes over the training pairs), %zu parameters; loss %s\n", hindi_steps,
              epochs, hindi_model.parameter_count(), losses_of(hindi_run).c_str());
  std::printf("time: hindi training %.1f s\n", hindi_run.seconds);
  const data::BleuScore hindi_train_bleu = score(hindi_train, hindi.train_examples, hindi.target_vocabulary);
  const data::BleuScore hindi_test_bleu = score(hindi_test, hindi.data.test, hindi.target_vocabulary);
  std::printf("greedy, %zu training sentences: BLEU %6.2f, %3zu outputs equal to a reference\n",
              hindi.train_examples.size(), 100 * hindi_train_bleu.bleu,
              exact_matches(hindi_train, hindi.train_examples, hindi.target_vocabulary));
  std::printf(
      "greedy, %zu test sentences:     BLEU %6.2f, %3zu outputs equal to a reference; "
      "p_1..p_4 %.1f %.1f %.1f %.1f\n",
      hindi.data.test.size(), 100 * hindi_test_bleu.bleu,
      exact_matches(hindi_test, hindi.data.test, hindi.target_vocabulary), 100 * hindi_test_bleu.precisions[0],
      100 * hindi_test_bleu.precisions[1], 100 * hindi_test_bleu.precisions[2], 100 * hindi_test_bleu.precisions[3]);
  std::printf("training sentences:\n");
  for (std::size_t n = 1; n <= 3; ++n) {  // three from the middle of the file (its first lines are single words)
    const std::size_t k = n * hindi.train_examples.size() / 4;
    print_example(hindi.train_examples[k], hindi_train[k], hindi.target_vocabulary);
  }
  std::printf("test sentences:\n");
  for (std::size_t k = 0; k < 5 && k < hindi.data.test.size(); ++k) {
    print_example(hindi.data.test[k], hindi_test[k], hindi.target_vocabulary);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string data_dir;  // --data-dir: searched first (data/locate.hpp)
  const tutorial::Options options = tutorial::parse_options(argc, argv, tutorial::Seed::varies, &data_dir);
  Settings settings = settings_for(options.small);
  settings.seed = options.seed;
  const auto program_start = std::chrono::steady_clock::now();
  const std::string spanish_path = tutorial::data_file("tatoeba/spa-eng.tsv", data_dir);
  const std::string hindi_path = tutorial::data_file("tatoeba/hin-eng.tsv", data_dir);
  std::printf("Chapter 12: translation on real data, Spanish -> English and Hindi -> English (Tatoeba)\n\n");
  tutorial::announce_seed(options);

  // ---- The text: normalisation and tokens ---------------------------------------------------------------------------
  data::PairReadOptions read;
  read.source_column = data::pair_column(spanish_path, "spa");  // spa-eng.tsv: Spanish in column 1
  const data::PairFile whole_file = data::read_pair_file(spanish_path, read);
  const data::PairFile file = every_nth(whole_file, settings.every);
  std::printf(
      "%s: %zu pairs%s\n\n", "tatoeba/spa-eng.tsv", whole_file.pairs.size(),
      settings.every > 1
          ? (", every " + std::to_string(settings.every) + "th kept: " + std::to_string(file.pairs.size())).c_str()
          : "");
  show_tokens(file);

  // ---- The split ----------------------------------------------------------------------------------------------------
  const data::TranslationSplitOptions split = split_options(settings);
  const Corpus spanish = split_spanish(file, split, settings.test_size);

  // ---- BLEU by hand on one sentence ---------------------------------------------------------------------------------
  bleu_on_one_sentence(whole_file);

  // ---- Three decoders, one budget -----------------------------------------------------------------------------------
  const std::vector<Trained> trained = compare_decoders(spanish, {"vanilla", "bahdanau", "luong-general"}, settings);
  print_test_bleu(trained, spanish);

  // ---- Corpus BLEU by hand, and the mean of sentence BLEU -----------------------------------------------------------
  const Trained& shown = trained[1];  // bahdanau
  corpus_bleu_by_hand(shown, spanish);

  // ---- Beam search --------------------------------------------------------------------------------------------------
  const std::vector<Sequence> test_sources = sources_of(spanish.data.test, spanish.source_vocabulary);
  check_beam_width_1(shown, test_sources);
  check_beam_scores(*shown.model, test_sources, shown.beam);
  show_beam_changes(shown, spanish);
  length_normalisation(shown, test_sources, spanish);

  // ---- BLEU by source length ----------------------------------------------------------------------------------------
  draw_bleu_by_length(options, bleu_by_length(trained, spanish));

  // ---- Attention on real sentences ----------------------------------------------------------------------------------
  attention_on_real_sentences(options, trained, spanish);

  // ---- Hindi -> English: 3k pairs -----------------------------------------------------------------------------------
  hindi_to_english(hindi_path, split, settings);
  std::printf("time: the whole program %.0f s\n", tutorial::seconds_since(program_start));
  return tutorial::exit_status();
}
