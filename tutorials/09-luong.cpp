// Chapter 9 — multiplicative attention (Luong) (docs/09-luong.md).
//
// Luong et al. (2015) reorder chapter 8's decoder: the recurrent step comes first, s_j = f(s_{j-1}, [E y_{j-1};
// h̃_{j-1}]), and the new state s_j is what gets scored against each annotation h_i — by a dot product s_jᵀ h_i
// ("dot"), a bilinear form s_jᵀ W_a h_i ("general") or a one-layer network v_aᵀ tanh(W_a [s_j; h_i]) ("concat").
// The context c_j and s_j are then combined into the attentional state h̃_j = tanh(W_c [c_j; s_j]), which both
// predicts y_j and is fed into the next step (input feeding). This program walks a date through all three Luong
// decoders by hand from their parameter tensors (checked against decoder->step()), then trains the three, the
// Bahdanau decoder of chapter 8 and the vanilla decoder of chapter 3 on the same dates with the same budget, and
// prints a table of parameters, training loss and test exact match; the training speed of each is on "time:" lines.
// --small: tiny data and a few steps; every check still runs. Deterministic except the lines "time: ...".
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "data/dates.hpp"
#include "data/vocabulary.hpp"
#include "models/search.hpp"
#include "models/seq2seq.hpp"
#include "models/train.hpp"
#include "plot/svg.hpp"
#include "tutorials/common.hpp"

using namespace attend;            // Tensor, Tape, Variable, Rng, and nn::, models::, data::, plot::
using namespace attend::tutorial;  // this folder's helpers (common.hpp)
namespace dates = attend::data::dates;

namespace {

using Sequence = std::vector<std::int64_t>;

// The dates task as chapter 8 sets it up: the splits, the two character vocabularies, the training pairs as ids.
struct Data {
  dates::Splits splits;
  data::Vocabulary source_vocabulary, target_vocabulary;
  std::vector<Sequence> train_sources, train_targets;
};

Data make_data(std::size_t train_size, std::size_t held_out) {
  Data data;
  data.splits = dates::make_splits(/*seed=*/1, train_size, held_out, held_out);
  for (const std::string& c : dates::source_alphabet()) data.source_vocabulary.add(c);
  for (const std::string& c : dates::target_alphabet()) data.target_vocabulary.add(c);
  for (const dates::Example& example : data.splits.train) {
    data.train_sources.push_back(ids_of(data.source_vocabulary, example.source));
    data.train_targets.push_back(ids_of(data.target_vocabulary, example.target));
  }
  return data;
}

// What one training run reports.
struct Run {
  double final_loss = 0;  // mean loss over the last (up to) 100 steps
  std::size_t steps = 0, tokens = 0;
  double seconds = 0, cpu_seconds = 0;  // wall-clock time, and the processor time this program used
};

// [docs:train]
// Chapter 8's training: models::train, Adam 2e-3 on the teacher-forced cross-entropy, gradients clipped to norm 1,
// batches of 64 of similar lengths, `epochs` passes over the data (or max_steps steps when that is not 0).
Run train(models::Seq2seq<float>& model, const Data& data, std::size_t epochs, std::size_t max_steps,
          std::uint64_t order_seed) {
  models::TrainOptions training;
  training.epochs = epochs;
  training.steps = max_steps;  // 0: no limit
  training.batch_size = 64;
  training.lr = 2e-3;
  training.seed = order_seed;  // the same order of batches for every model (seed 7)
  Run run;
  double last_loss = 0;
  training.on_step = [&](const models::TrainStep& done) {
    run.tokens += done.tokens;
    last_loss = done.loss;
  };
  training.on_epoch = [&](std::size_t epoch, std::size_t steps) {
    // progress on standard error (standard output is what the chapter quotes)
    std::fprintf(stderr, "  training: epoch %zu/%zu done, step %zu, loss %.3f\n", epoch, epochs, steps, last_loss);
  };
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  const std::vector<double> losses = models::train(model, data.train_sources, data.train_targets, training);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  run.steps = losses.size();
  const std::size_t last = std::min<std::size_t>(100, losses.size());  // the mean of the last (up to) 100 steps
  for (std::size_t k = losses.size() - last; k < losses.size(); ++k) {
    run.final_loss += losses[k] / static_cast<double>(last);
  }
  return run;
}
// [docs:end]

// Exact match of the greedy outputs on a split, 100 dates per batch (chapter 8).
dates::Scores exact_match(models::Seq2seq<float>& model, const std::vector<dates::Example>& examples,
                          const Data& data) {
  std::vector<std::string> predictions, targets;
  for (std::size_t first = 0; first < examples.size(); first += 100) {
    std::vector<Sequence> sources;
    for (std::size_t k = first; k < std::min(first + 100, examples.size()); ++k) {
      sources.push_back(ids_of(data.source_vocabulary, examples[k].source));
      targets.push_back(examples[k].target);
    }
    const models::Batch batch = models::make_batch(sources);
    for (const models::Hypothesis& h : models::decode(model, batch.source, batch.source_lengths, {1})) {
      std::string text;
      for (const std::string& c : data.target_vocabulary.decode(h.tokens)) text += c;
      predictions.push_back(text);
    }
  }
  return dates::score(predictions, targets);
}

// The attention of the greedy output for one date, as a heatmap (chapter 8).
std::string heatmap(models::Seq2seq<float>& model, const dates::Example& example, const Data& data) {
  const std::vector<std::string> source = data::utf8_characters(example.source);
  const models::Batch batch = models::make_batch({ids_of(data.source_vocabulary, example.source)});
  const models::Hypothesis output = models::decode(model, batch.source, batch.source_lengths, {1})[0];
  std::vector<std::string> output_tokens = data.target_vocabulary.decode(output.tokens);
  if (output.finished) output_tokens.push_back("<eos>");
  std::vector<std::vector<double>> alpha;
  for (const std::vector<float>& row : output.attention) alpha.emplace_back(row.begin(), row.end());
  plot::HeatmapOptions options;
  options.title = model.config().decoder_name() + ": \"" + example.source + "\"";
  return plot::attention_svg(source, output_tokens, alpha, options);
}

// The worst difference of each equation over every step of a walk.
struct Worst {
  double s = 0, e = 0, alpha = 0, c = 0, h_tilde = 0, feed = 0, logits = 0;
};

// (9.1) by hand: the GRU step s_j from s_{j-1} and the input [E y_{j-1}; h̃_{j-1}], before any attention.
std::vector<double> step_by_hand(const Tensor<float>& W_ih, const Tensor<float>& W_hh, const Tensor<float>& b_ih,
                                 const Tensor<float>& b_hh, const Tensor<float>& E_y, std::int64_t y_prev,
                                 const std::vector<double>& s_prev, const std::vector<double>& h_tilde_prev) {
  const std::size_t H = s_prev.size(), E = E_y.shape()[1];
  // [docs:step]
  // The GRU's input [E y_{j-1}; h̃_{j-1}]: (E + H,)
  std::vector<double> input = row_of(E_y, static_cast<std::size_t>(y_prev) * E, E);
  input.insert(input.end(), h_tilde_prev.begin(), h_tilde_prev.end());
  std::vector<double> s_j(H);
  for (std::size_t k = 0; k < H; ++k) {
    // (9.1)  s_j = f(s_{j-1}, [E y_{j-1}; h̃_{j-1}]): the GRU step (2.3)-(2.6) first, before any attention
    const double r = sigmoid(row_times(W_ih, k, input) + b_ih.at({k}) + row_times(W_hh, k, s_prev) + b_hh.at({k}));
    const double z =
        sigmoid(row_times(W_ih, H + k, input) + b_ih.at({H + k}) + row_times(W_hh, H + k, s_prev) + b_hh.at({H + k}));
    const double n = std::tanh(row_times(W_ih, 2 * H + k, input) + b_ih.at({2 * H + k}) +
                               r * (row_times(W_hh, 2 * H + k, s_prev) + b_hh.at({2 * H + k})));
    s_j[k] = (1 - z) * n + z * s_prev[k];
  }
  // [docs:end]
  return s_j;
}

// (9.2)-(9.4) by hand: the scores e_ij of s_j against every annotation h_i of h: (1, T_x, H), by the decoder's score.
std::vector<double> scores_by_hand(models::Score<float>& score, const Tensor<float>& h,
                                   const std::vector<double>& s_j) {
  const std::size_t T_x = h.shape()[1], H = h.shape()[2];
  // [docs:scores]
  std::vector<double> e_ij(T_x, 0.0);
  for (std::size_t i = 0; i < T_x; ++i) {
    const std::vector<double> h_i = row_of(h, i * H, H);
    if (score.kind() == models::ScoreKind::dot) {
      // (9.2)  dot:  e_ij = s_jᵀ h_i
      for (std::size_t k = 0; k < H; ++k) e_ij[i] += s_j[k] * h_i[k];
    } else if (score.kind() == models::ScoreKind::general) {
      const Tensor<float>& W_a = static_cast<models::GeneralScore<float>&>(score).W_a.value;  // (H, H)
      // (9.3)  general:  e_ij = s_jᵀ W_a h_i
      for (std::size_t k = 0; k < H; ++k) e_ij[i] += s_j[k] * row_times(W_a, k, h_i);
    } else {
      const Tensor<float>& W_a = static_cast<models::ConcatScore<float>&>(score).W_a.value;  // (A, H + H)
      const Tensor<float>& v_a = static_cast<models::ConcatScore<float>&>(score).v_a.value;  // (1, A)
      for (std::size_t a = 0; a < v_a.shape()[1]; ++a) {
        // (9.4)  concat:  e_ij = v_aᵀ tanh(W_a [s_j; h_i]): W_a's first H columns multiply s_j, the last H h_i
        e_ij[i] += v_a.at({0, a}) * std::tanh(row_times(W_a, a, s_j) + row_times(W_a, a, h_i, H));
      }
    }
  }
  // [docs:end]
  return e_ij;
}

// (9.5)-(9.8) by hand: the weights, the context, the attentional state h̃_j and the logits.
struct Combined {
  std::vector<double> alpha_ij, c_j, h_tilde, logits;
};

Combined combine_by_hand(const Tensor<float>& h, const std::vector<double>& e_ij, const std::vector<double>& s_j,
                         const Tensor<float>& W_c, const Tensor<float>& W_o, const Tensor<float>& b_o) {
  const std::size_t T_x = h.shape()[1], H = h.shape()[2], V_y = b_o.shape()[0];
  // [docs:combine]
  const double e_max = *std::max_element(e_ij.begin(), e_ij.end());  // subtracted for safety; α is unchanged
  double Z = 0;
  for (double e : e_ij) Z += std::exp(e - e_max);
  std::vector<double> alpha_ij(T_x), c_j(H, 0.0), h_tilde(H), logits(V_y);
  for (std::size_t i = 0; i < T_x; ++i) {
    // (9.5)  α_ij = exp(e_ij) / Σ_k exp(e_kj)
    alpha_ij[i] = std::exp(e_ij[i] - e_max) / Z;
    // (9.6)  c_j = Σ_i α_ij h_i
    for (std::size_t m = 0; m < H; ++m) c_j[m] += alpha_ij[i] * h.at({0, i, m});
  }
  for (std::size_t k = 0; k < H; ++k) {
    // (9.7)  h̃_j = tanh(W_c [c_j; s_j]): W_c's first H columns multiply c_j, the last H s_j
    h_tilde[k] = std::tanh(row_times(W_c, k, c_j) + row_times(W_c, k, s_j, H));
  }
  // (9.8)  p(y_j | y_<j, x) = softmax(W_o h̃_j + b_o)
  for (std::size_t v = 0; v < V_y; ++v) logits[v] = row_times(W_o, v, h_tilde) + b_o.at({v});
  // [docs:end]
  return {alpha_ij, c_j, h_tilde, logits};
}

// Walks one date through a Luong decoder with teacher forcing, recomputing every step by hand from the parameter
// tensors, and returns the worst difference from the library of each equation.
Worst walk_by_hand(models::Seq2seq<float>& model, const dates::Example& example, const Data& data) {
  // [docs:parameters]
  auto& decoder = dynamic_cast<models::LuongDecoder<float>&>(*model.decoder);
  models::Score<float>& score = *decoder.score;
  auto& cell = std::get<nn::GruCell<float>>(decoder.cells[0]);
  const Tensor<float>& W_ih = cell.W_ih.value;           // (3H, E + H): [W_r; W_z; W_n] on [E y_{j-1}; h̃_{j-1}]
  const Tensor<float>& W_hh = cell.W_hh.value;           // (3H, H): [U_r; U_z; U_n] on s_{j-1}
  const Tensor<float>& b_ih = cell.b_ih.value;           // (3H,)
  const Tensor<float>& b_hh = cell.b_hh.value;           // (3H,)
  const Tensor<float>& E_y = decoder.embedding.W.value;  // (V_y, E)
  const Tensor<float>& W_c = decoder.W_c.value;          // (H, H + H) on [c_j; s_j]
  const Tensor<float>& W_o = decoder.output.W.value;     // (V_y, H): the output layer reads h̃_j only
  const Tensor<float>& b_o = decoder.output.b.value;     // (V_y,)
  // [docs:end]
  const std::size_t H = model.config().hidden_size, V_y = data.target_vocabulary.size();
  const Sequence x = ids_of(data.source_vocabulary, example.source), y = ids_of(data.target_vocabulary, example.target);
  const std::size_t T_x = x.size();

  Tape<float> tape;
  const models::Batch one = models::make_batch({x}, {y});
  const models::Encoded<float> encoded = model.encode(tape, one.source, one.source_lengths);
  const Tensor<float>& h = encoded.memory.annotations.value();  // h_i: (1, T_x, H)
  models::DecoderState<float> state = encoded.state;            // s_0 = h_Tx, h̃_0 = 0
  Worst worst;
  for (std::size_t j = 1; j <= y.size() + 1; ++j) {
    const std::int64_t y_prev = j == 1 ? data::Vocabulary::sos_id : y[j - 2];
    const models::DecoderStep<float> library = decoder.step(Ids(Shape{1}, {y_prev}), state, encoded.memory);
    const std::vector<double> s_prev = row_of(state.h.back().value(), 0, H);    // s_{j-1}
    const std::vector<double> h_tilde_prev = row_of(state.feed.value(), 0, H);  // h̃_{j-1}
    // (9.1)-(9.8) by hand
    const std::vector<double> s_j = step_by_hand(W_ih, W_hh, b_ih, b_hh, E_y, y_prev, s_prev, h_tilde_prev);
    const std::vector<double> e_ij = scores_by_hand(score, h, s_j);
    const auto [alpha_ij, c_j, h_tilde, logits] = combine_by_hand(h, e_ij, s_j, W_c, W_o, b_o);

    // The library's values: s_j, α_j, h̃_j (output and the fed state) from step(); e_ij from the score module and c_j
    // from models::context (second routes, since step() keeps them inside).
    const Variable<float>& library_s = library.state.h.back();
    worst.s = std::max(worst.s, worst_difference(s_j, row_of(library_s.value(), 0, H)));
    const Variable<float> library_e = score.score(library_s, encoded.memory.keys);
    worst.e = std::max(worst.e, worst_difference(e_ij, row_of(library_e.value(), 0, T_x)));
    worst.alpha = std::max(worst.alpha, worst_difference(alpha_ij, row_of(library.alpha.value(), 0, T_x)));
    const Variable<float> library_c = models::context(library.alpha, encoded.memory.annotations);
    worst.c = std::max(worst.c, worst_difference(c_j, row_of(library_c.value(), 0, H)));
    worst.h_tilde = std::max(worst.h_tilde, worst_difference(h_tilde, row_of(library.output.value(), 0, H)));
    worst.feed = std::max(worst.feed, worst_difference(h_tilde, row_of(library.state.feed.value(), 0, H)));
    const Variable<float> library_logits = decoder.logits(library.output);
    worst.logits = std::max(worst.logits, worst_difference(logits, row_of(library_logits.value(), 0, V_y)));
    state = library.state;
  }
  return worst;
}

// [docs:configs]
// One configuration for all five decoders; only the decoder (and its score) changes.
models::Seq2seqConfig configure(const Data& data, std::size_t hidden_size, const std::string& decoder,
                                std::uint64_t seed) {
  models::Seq2seqConfig config;
  config.source_vocab_size = data.source_vocabulary.size();
  config.target_vocab_size = data.target_vocabulary.size();
  config.set_decoder(decoder);  // luong-*: input feeding on (config.input_feeding)
  config.embedding_dim = 32;
  config.hidden_size = hidden_size;
  config.seed = seed;  // the initial weights
  return config;
}
// [docs:end]

// One date through each untrained Luong decoder, every equation by hand, and the checks.
void luong_by_hand(const Data& data, std::size_t hidden_size) {
  const dates::Example& example = data.splits.test[0];
  std::printf("one date by hand through the untrained Luong decoders: \"%s\" -> \"%s\"\n", example.source.c_str(),
              example.target.c_str());
  Worst worst;
  const std::vector<std::pair<std::string, std::string>> luong{
      {"luong-dot", "(9.2) dot"}, {"luong-general", "(9.3) general"}, {"luong-concat", "(9.4) concat"}};
  for (const auto& [decoder, equation] : luong) {
    models::Seq2seq<float> model(configure(data, hidden_size, decoder, /*seed=*/1));
    model.eval();
    const Worst w = walk_by_hand(model, example, data);
    tutorial::check(equation + " e_ij by hand vs the score module", w.e, 1e-4);
    worst.s = std::max(worst.s, w.s);
    worst.alpha = std::max(worst.alpha, w.alpha);
    worst.c = std::max(worst.c, w.c);
    worst.h_tilde = std::max(worst.h_tilde, w.h_tilde);
    worst.feed = std::max(worst.feed, w.feed);
    worst.logits = std::max(worst.logits, w.logits);
  }
  tutorial::check("(9.1) s_j by hand vs decoder->step(), all three", worst.s, 1e-5);
  tutorial::check("(9.5) α_ij by hand vs decoder->step(), all three", worst.alpha, 1e-5);
  tutorial::check("(9.6) c_j by hand vs models::context, all three", worst.c, 1e-5);
  tutorial::check("(9.7) h̃_j by hand vs decoder->step() output, all three", worst.h_tilde, 1e-5);
  tutorial::check("(9.7) h̃_j by hand vs the state fed to step j + 1, all three", worst.feed, 1e-5);
  tutorial::check("(9.8) logits by hand vs decoder->logits(), all three", worst.logits, 1e-4);
}

// One decoder trained from one draw of initial weights: its run, its test scores, its size, and (from seed 1, for an
// attention decoder) the attention of one test date.
struct Trained {
  Run run;
  dates::Scores test;
  std::size_t parameters = 0;
  std::string heatmap_svg;
};

Trained train_one(const Data& data, std::size_t hidden_size, const std::string& decoder, std::uint64_t seed,
                  std::uint64_t order_seed, std::size_t epochs, std::size_t max_steps, bool draw) {
  // [docs:compare]
  models::Seq2seq<float> model(configure(data, hidden_size, decoder, seed));
  const Run run = train(model, data, epochs, max_steps, order_seed);
  const dates::Scores test = exact_match(model, data.splits.test, data);
  // [docs:end]
  std::string svg;
  if (draw && decoder != "vanilla") svg = heatmap(model, data.splits.test[34], data);
  return {run, test, model.parameter_count(), svg};
}

// The five decoders on the same task and budget, each trained twice, from two draws of initial weights, to show how
// much of a difference is luck: a table of parameters, loss and exact match, then the timings. Returns the heatmaps,
// (name, SVG).
std::vector<std::pair<std::string, std::string>> compare_decoders(const Data& data,
                                                                  const std::vector<std::string>& decoders,
                                                                  std::size_t hidden_size, std::size_t epochs,
                                                                  std::size_t max_steps,
                                                                  const tutorial::Options& options) {
  std::printf("\n%-14s %10s %11s %16s %7s %7s\n", "decoder", "parameters", "final loss", "exact: run 1", "run 2",
              "mean");
  std::vector<std::string> times;
  std::vector<std::pair<std::string, std::string>> figures;  // (name, SVG): the attention of one test date
  for (const std::string& decoder : decoders) {
    std::size_t parameters = 0;
    double loss = 0, cpu_seconds = 0, wall_seconds = 0;
    std::size_t steps = 0, tokens = 0;
    std::vector<double> exact;
    // seeds 1 and 2 (--seed S: 1 + S and 2 + S); the first run draws the heatmap
    for (const std::uint64_t seed : {tutorial::seeded(options, 1), tutorial::seeded(options, 2)}) {
      const Trained trained = train_one(data, hidden_size, decoder, seed, tutorial::seeded(options, 7), epochs,
                                        max_steps, seed == tutorial::seeded(options, 1));
      if (!trained.heatmap_svg.empty()) figures.emplace_back("09-heatmap-" + decoder + ".svg", trained.heatmap_svg);
      const Run& run = trained.run;
      parameters = trained.parameters;
      loss += run.final_loss / 2;
      exact.push_back(trained.test.exact_match);
      cpu_seconds += run.cpu_seconds;
      wall_seconds += run.seconds;
      steps += run.steps;
      tokens += run.tokens;
    }
    std::printf("%-14s %10zu %11.4f %16.4f %7.4f %7.4f\n", decoder.c_str(), parameters, loss, exact[0], exact[1],
                (exact[0] + exact[1]) / 2);
    char line[200];
    std::snprintf(line, sizeof line,
                  "time: %-14s %4zu steps in %5.1f s (%5.1f s of CPU): %6.0f target tokens per "
                  "CPU second",
                  decoder.c_str(), steps, wall_seconds, cpu_seconds, static_cast<double>(tokens) / cpu_seconds);
    times.push_back(line);
  }
  std::printf(
      "(exact match on the %zu test dates; final loss: the mean of the last 100 steps, averaged over the two\n"
      " runs; every run: the same %zu training pairs in the same order, %zu epochs, E = 32, H = %zu, Adam 2e-3)\n",
      data.splits.test.size(), data.train_sources.size(), epochs, hidden_size);
  for (const std::string& line : times) std::printf("%s\n", line.c_str());
  return figures;
}

}  // namespace

int main(int argc, char** argv) {
  const tutorial::Options options = tutorial::parse_options(argc, argv, tutorial::Seed::varies);
  const std::size_t train_size = options.small ? 300 : 10000;
  const std::size_t held_out = options.small ? 40 : 1000;  // validation and test dates each
  const std::size_t epochs = options.small ? 1 : 2;
  const std::size_t max_steps = options.small ? 4 : 0;
  const std::size_t hidden_size = options.small ? 16 : 64;
  std::printf("Chapter 9: multiplicative attention (Luong) on dates (%zu training pairs, %zu epochs, H = %zu)\n\n",
              train_size, epochs, hidden_size);
  tutorial::announce_seed(options);
  const Data data = make_data(train_size, held_out);

  // ---- One date through each Luong decoder, every equation by hand -------------------------------------------------
  luong_by_hand(data, hidden_size);

  // ---- The five decoders on the same task and budget ---------------------------------------------------------------
  const std::vector<std::string> decoders{"luong-dot", "luong-general", "luong-concat", "bahdanau", "vanilla"};
  const std::vector<std::pair<std::string, std::string>> figures =
      compare_decoders(data, decoders, hidden_size, epochs, max_steps, options);
  std::printf("\nthe attention of the first run of each decoder on \"%s\"\n", data.splits.test[34].source.c_str());
  for (const auto& [name, svg] : figures) tutorial::write_figure(options, name, svg);
  return tutorial::exit_status();
}
