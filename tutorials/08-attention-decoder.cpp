// Chapter 8 — the attention decoder (docs/08-attention-decoder.md).
//
// Bahdanau et al.'s decoder puts chapters 6 and 7 inside the recurrence: before each output step j it scores every
// source annotation h_i against its previous state s_{j-1}, turns the scores into weights α_ij, reads the context
// c_j = Σ_i α_ij h_i, and only then takes its step s_j = f(s_{j-1}, y_{j-1}, c_j) and predicts
// p(y_j | y_<j, x) = g(y_{j-1}, s_j, c_j). This program trains that decoder (models::BahdanauDecoder inside a
// models::Seq2seq) on the dates task with chapter 3's training loop (models::train), reports exact match on the
// validation and test dates, opens up the trained decoder and recomputes every step of one date by hand from its
// parameter tensors (checked against decoder->step()), and draws the attention of a few test dates as heatmaps.
// --small: a few hundred pairs and a few steps; every check still runs. Deterministic except the lines "time: ...".
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
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

// Ids back to text, up to the end token.
std::string text_of(const data::Vocabulary& vocabulary, const Sequence& ids) {
  std::string text;
  for (const std::string& character : vocabulary.decode(ids)) text += character;
  return text;
}

// The greedy output (beam width 1) of every source, 100 sources per batch.
std::vector<models::Hypothesis> decode_all(models::Seq2seq<float>& model, const std::vector<Sequence>& sources) {
  std::vector<models::Hypothesis> outputs;
  for (std::size_t first = 0; first < sources.size(); first += 100) {
    const std::size_t last = std::min(first + 100, sources.size());
    const std::vector<Sequence> chunk(sources.begin() + static_cast<std::ptrdiff_t>(first),
                                      sources.begin() + static_cast<std::ptrdiff_t>(last));
    const models::Batch batch = models::make_batch(chunk);
    for (models::Hypothesis& h : models::decode(model, batch.source, batch.source_lengths, {/*beam_width=*/1})) {
      outputs.push_back(std::move(h));
    }
  }
  return outputs;
}

// [docs:evaluate]
// Exact match of the greedy outputs ŷ = argmax_y p(y | x) (approximately: one token at a time) with the ISO dates.
dates::Scores exact_match(models::Seq2seq<float>& model, const std::vector<dates::Example>& examples,
                          const data::Vocabulary& source_vocabulary, const data::Vocabulary& target_vocabulary) {
  std::vector<Sequence> sources;
  std::vector<std::string> predictions, targets;
  for (const dates::Example& example : examples) {
    sources.push_back(ids_of(source_vocabulary, example.source));
    targets.push_back(example.target);
  }
  for (const models::Hypothesis& h : decode_all(model, sources)) {
    predictions.push_back(text_of(target_vocabulary, h.tokens));
  }
  return dates::score(predictions, targets);
}
// [docs:end]

// The text followed by spaces up to `width` characters (code points, not bytes: "MIÉ." is four).
std::string padded(const std::string& text, std::size_t width) {
  const std::size_t length = data::utf8_characters(text).size();
  return text + std::string(length < width ? width - length : 0, ' ');
}

// The dates task: the splits, the two character vocabularies, and the training pairs as ids.
struct Data {
  dates::Splits splits;
  data::Vocabulary source_vocabulary, target_vocabulary;
  std::vector<Sequence> train_sources, train_targets;
};

Data make_data(std::size_t train_size, std::size_t held_out) {
  // [docs:data]
  // Human-written dates in, ISO dates out; the validation and test dates never occur in training.
  const dates::Splits splits = dates::make_splits(/*seed=*/1, train_size, held_out, held_out);
  // Character vocabularies: <pad> <sos> <eos> <unk>, then every character the task can write.
  data::Vocabulary source_vocabulary, target_vocabulary;
  for (const std::string& c : dates::source_alphabet()) source_vocabulary.add(c);
  for (const std::string& c : dates::target_alphabet()) target_vocabulary.add(c);
  std::vector<Sequence> train_sources, train_targets;
  for (const dates::Example& example : splits.train) {
    train_sources.push_back(ids_of(source_vocabulary, example.source));
    train_targets.push_back(ids_of(target_vocabulary, example.target));
  }
  // [docs:end]
  std::printf("a training pair: \"%s\" -> \"%s\"; vocabularies of %zu source and %zu target tokens\n",
              splits.train[0].source.c_str(), splits.train[0].target.c_str(), source_vocabulary.size(),
              target_vocabulary.size());
  return {splits, source_vocabulary, target_vocabulary, train_sources, train_targets};
}

models::Seq2seqConfig configure(const data::Vocabulary& source_vocabulary, const data::Vocabulary& target_vocabulary,
                                std::size_t hidden_size) {
  // [docs:model]
  models::Seq2seqConfig config;
  config.source_vocab_size = source_vocabulary.size();
  config.target_vocab_size = target_vocabulary.size();
  config.set_decoder("bahdanau");    // the additive score on s_{j-1}, then the step reads c_j
  config.embedding_dim = 32;         // E, source and target embeddings
  config.hidden_size = hidden_size;  // H, encoder and decoder
  config.seed = 8;                   // the initial weights
  // [docs:end]
  return config;
}

// Chapter 3's loop (models::train) on the dates: Adam 2e-3 on (8.6) with teacher forcing, `epochs` passes over the
// training pairs (at most max_steps steps when that is not 0); prints the loss every 100 steps and the validation
// exact match after each pass.
void train(models::Seq2seq<float>& model, const Data& data, std::size_t epochs, std::size_t max_steps,
           std::size_t batch_size, std::uint64_t order_seed) {
  // [docs:train]
  models::TrainOptions training;
  training.epochs = epochs;
  training.steps = max_steps;  // 0: no limit
  training.batch_size = batch_size;
  training.lr = 2e-3;
  training.seed = order_seed;  // the order of the batches: seed 7, moved by --seed
  double loss_sum = 0;
  training.on_step = [&](const models::TrainStep& done) {
    loss_sum += done.loss;
    if (done.step % 100 == 0) {
      std::printf("epoch %zu  step %4zu  loss %.4f (mean of the last 100 steps)\n", done.epoch, done.step,
                  loss_sum / 100);
      loss_sum = 0;
    }
  };
  training.on_epoch = [&](std::size_t epoch, std::size_t steps) {
    const dates::Scores validation =
        exact_match(model, data.splits.validation, data.source_vocabulary, data.target_vocabulary);
    std::printf("epoch %zu done: step %zu, validation exact match %.4f\n", epoch, steps, validation.exact_match);
  };
  const auto start = std::chrono::steady_clock::now();
  models::train(model, data.train_sources, data.train_targets, training);
  // [docs:end]
  std::printf("time: training took %.0f s, the validation runs included\n", seconds_since(start));
}

// The greedy outputs of a few test dates, printed right or wrong.
std::vector<models::Hypothesis> show_test_dates(models::Seq2seq<float>& model, const Data& data,
                                                const std::vector<std::size_t>& shown) {
  std::vector<Sequence> shown_sources;
  for (std::size_t k : shown) shown_sources.push_back(ids_of(data.source_vocabulary, data.splits.test[k].source));
  const std::vector<models::Hypothesis> shown_outputs = decode_all(model, shown_sources);
  for (std::size_t n = 0; n < shown.size(); ++n) {
    const dates::Example& example = data.splits.test[shown[n]];
    const std::string output = text_of(data.target_vocabulary, shown_outputs[n].tokens);
    std::printf("  %s -> %s  %s\n", padded("\"" + example.source + "\"", 30).c_str(), output.c_str(),
                output == example.target ? "right" : ("wrong, expected " + example.target).c_str());
  }
  return shown_outputs;
}

// (8.1)-(8.3) at step j by hand: the scores, the weights and the context.
struct Attention {
  std::vector<double> e_ij, alpha_ij, c_j;
};

Attention attention_by_hand(const Tensor<float>& W_a, const Tensor<float>& U_a, const Tensor<float>& v_a,
                            const Tensor<float>& h, const std::vector<double>& s_prev) {
  const std::size_t T_x = h.shape()[1], H = h.shape()[2], A = v_a.shape()[1];
  // [docs:attention-by-hand]
  std::vector<double> e_ij(T_x), alpha_ij(T_x), c_j(H, 0.0);
  for (std::size_t i = 0; i < T_x; ++i) {
    const std::vector<double> h_i = row_of(h, i * H, H);
    for (std::size_t a = 0; a < A; ++a) {
      // (8.1)  e_ij = v_aᵀ tanh(W_a s_{j-1} + U_a h_i)
      e_ij[i] += v_a.at({0, a}) * std::tanh(row_times(W_a, a, s_prev) + row_times(U_a, a, h_i));
    }
  }
  const double e_max = *std::max_element(e_ij.begin(), e_ij.end());  // subtracted for safety; α is unchanged
  double Z = 0;
  for (std::size_t i = 0; i < T_x; ++i) Z += std::exp(e_ij[i] - e_max);
  for (std::size_t i = 0; i < T_x; ++i) {
    // (8.2)  α_ij = exp(e_ij) / Σ_k exp(e_kj)
    alpha_ij[i] = std::exp(e_ij[i] - e_max) / Z;
    // (8.3)  c_j = Σ_i α_ij h_i
    for (std::size_t m = 0; m < H; ++m) c_j[m] += alpha_ij[i] * h.at({0, i, m});
  }
  // [docs:end]
  return {e_ij, alpha_ij, c_j};
}

// (8.4)-(8.5) at step j by hand: the new state, the logits, and the probability of the true y_j.
struct Step {
  std::vector<double> s_j, logits;
  double p_y_j = 0;
};

Step step_by_hand(const Tensor<float>& W_ih, const Tensor<float>& W_hh, const Tensor<float>& b_ih,
                  const Tensor<float>& b_hh, const Tensor<float>& E_y, const Tensor<float>& W_o,
                  const Tensor<float>& b_o, std::int64_t y_prev, std::int64_t y_j, const std::vector<double>& s_prev,
                  const std::vector<double>& c_j) {
  const std::size_t H = s_prev.size(), E = E_y.shape()[1], V_y = b_o.shape()[0];
  std::vector<double> s_j(H), logits(V_y);
  // [docs:step-by-hand]
  // The GRU's input [E y_{j-1}; c_j]: (E + H,)
  std::vector<double> input = row_of(E_y, static_cast<std::size_t>(y_prev) * E, E);
  input.insert(input.end(), c_j.begin(), c_j.end());
  for (std::size_t k = 0; k < H; ++k) {
    // (8.4)  s_j = f(s_{j-1}, y_{j-1}, c_j): the GRU step (2.3)-(2.6) on the input [E y_{j-1}; c_j]
    const double r = sigmoid(row_times(W_ih, k, input) + b_ih.at({k}) + row_times(W_hh, k, s_prev) + b_hh.at({k}));
    const double z =
        sigmoid(row_times(W_ih, H + k, input) + b_ih.at({H + k}) + row_times(W_hh, H + k, s_prev) + b_hh.at({H + k}));
    const double n = std::tanh(row_times(W_ih, 2 * H + k, input) + b_ih.at({2 * H + k}) +
                               r * (row_times(W_hh, 2 * H + k, s_prev) + b_hh.at({2 * H + k})));
    s_j[k] = (1 - z) * n + z * s_prev[k];
  }
  // g's input [s_j; c_j; E y_{j-1}]: (H + H + E,)
  std::vector<double> features = s_j;
  features.insert(features.end(), c_j.begin(), c_j.end());
  features.insert(features.end(), input.begin(), input.begin() + static_cast<std::ptrdiff_t>(E));
  // (8.5)  p(y_j | y_<j, x) = g(y_{j-1}, s_j, c_j) = softmax(W_o [s_j; c_j; E y_{j-1}] + b_o)
  for (std::size_t v = 0; v < V_y; ++v) logits[v] = row_times(W_o, v, features) + b_o.at({v});
  const double logit_max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (double l : logits) sum += std::exp(l - logit_max);
  const double p_y_j = std::exp(logits[static_cast<std::size_t>(y_j)] - logit_max) / sum;  // of the true y_j
  // [docs:end]

  return {s_j, logits, p_y_j};
}

// The three largest weights of a step, with the source characters they fall on.
std::string largest_weights(const std::vector<double>& alpha_ij, const std::vector<std::string>& x_characters) {
  const std::size_t T_x = alpha_ij.size();
  std::vector<std::size_t> order(T_x);
  for (std::size_t i = 0; i < T_x; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return alpha_ij[a] > alpha_ij[b]; });
  std::string largest;
  for (std::size_t k = 0; k < std::min<std::size_t>(3, T_x); ++k) {
    char cell_text[48];
    std::snprintf(cell_text, sizeof cell_text, "  %.3f (%2zu: '%s')", alpha_ij[order[k]], order[k] + 1,
                  x_characters[order[k]].c_str());
    largest += cell_text;
  }
  return largest;
}

// One date through the trained decoder with teacher forcing, every equation by hand from the parameter tensors,
// checked against the library's step.
void walk_by_hand(models::Seq2seq<float>& model, const Data& data, const dates::Example& example) {
  // [docs:parameters]
  // The trained decoder's parameter tensors: the additive score, the GRU cell f and the output layer g.
  auto& decoder = dynamic_cast<models::BahdanauDecoder<float>&>(*model.decoder);
  auto& score = dynamic_cast<models::AdditiveScore<float>&>(*decoder.score);
  const Tensor<float>& W_a = score.W_a.value;  // (A, H), A = H here
  const Tensor<float>& U_a = score.U_a.value;  // (A, H)
  const Tensor<float>& v_a = score.v_a.value;  // (1, A)
  auto& cell = std::get<nn::GruCell<float>>(decoder.cells[0]);
  const Tensor<float>& W_ih = cell.W_ih.value;           // (3H, E + H): [W_r; W_z; W_n] on [E y_{j-1}; c_j]
  const Tensor<float>& W_hh = cell.W_hh.value;           // (3H, H): [U_r; U_z; U_n] on s_{j-1}
  const Tensor<float>& b_ih = cell.b_ih.value;           // (3H,)
  const Tensor<float>& b_hh = cell.b_hh.value;           // (3H,)
  const Tensor<float>& E_y = decoder.embedding.W.value;  // (V_y, E): the target embeddings
  const Tensor<float>& W_o = decoder.output.W.value;     // (V_y, H + H + E)
  const Tensor<float>& b_o = decoder.output.b.value;     // (V_y,)
  // [docs:end]
  const std::size_t H = model.config().hidden_size, V_y = data.target_vocabulary.size();
  const data::Vocabulary& target_vocabulary = data.target_vocabulary;
  const Sequence x = ids_of(data.source_vocabulary, example.source), y = ids_of(target_vocabulary, example.target);
  const std::vector<std::string> x_characters = data::utf8_characters(example.source);
  const std::size_t T_x = x.size();
  Tape<float> step_tape;
  const models::Batch one = models::make_batch({x}, {y});
  const models::Encoded<float> encoded = model.encode(step_tape, one.source, one.source_lengths);
  const Tensor<float>& h = encoded.memory.annotations.value();  // h_i: (1, T_x, H)
  models::DecoderState<float> state = encoded.state;            // s_0 = h_Tx
  std::printf("\none date by hand: \"%s\" -> \"%s\" (teacher forcing: y_{j-1} is the true previous character)\n",
              example.source.c_str(), example.target.c_str());
  std::printf("   j  y_{j-1}  y_j    p(y_j)  the largest weights α_ij (i: character)\n");
  double worst_e = 0, worst_alpha = 0, worst_c = 0, worst_s = 0, worst_logits = 0;
  for (std::size_t j = 1; j <= y.size() + 1; ++j) {  // the ten characters, then the end token
    const std::int64_t y_prev = j == 1 ? data::Vocabulary::sos_id : y[j - 2];
    const std::int64_t y_j = j <= y.size() ? y[j - 1] : data::Vocabulary::eos_id;
    // The library's step, to compare with: DecoderStep{output = [s_j; c_j; E y_{j-1}], alpha, state}.
    const models::DecoderStep<float> library = decoder.step(Ids(Shape{1}, {y_prev}), state, encoded.memory);
    const std::vector<double> s_prev = row_of(state.h.back().value(), 0, H);  // s_{j-1}: (H,)
    // (8.1)-(8.5) by hand
    const Attention attention = attention_by_hand(W_a, U_a, v_a, h, s_prev);
    const Step hand = step_by_hand(W_ih, W_hh, b_ih, b_hh, E_y, W_o, b_o, y_prev, y_j, s_prev, attention.c_j);
    // The same quantities from the library: e from the score module (a second route), the rest from step().
    const std::vector<double> library_e = row_of(score.score(state.h.back(), encoded.memory.keys).value(), 0, T_x);
    worst_e = std::max(worst_e, worst_difference(attention.e_ij, library_e));
    worst_alpha = std::max(worst_alpha, worst_difference(attention.alpha_ij, row_of(library.alpha.value(), 0, T_x)));
    worst_c = std::max(worst_c, worst_difference(attention.c_j, row_of(library.output.value(), H, H)));
    worst_s = std::max(worst_s, worst_difference(hand.s_j, row_of(library.state.h.back().value(), 0, H)));
    const std::vector<double> library_logits = row_of(decoder.logits(library.output).value(), 0, V_y);
    worst_logits = std::max(worst_logits, worst_difference(hand.logits, library_logits));

    std::printf("  %2zu  %-7s  %-5s  %.4f %s\n", j, target_vocabulary.token(y_prev).c_str(),
                target_vocabulary.token(y_j).c_str(), hand.p_y_j,
                largest_weights(attention.alpha_ij, x_characters).c_str());
    state = library.state;
  }
  tutorial::check("(8.1) e_ij by hand vs the AdditiveScore", worst_e, 1e-4);
  tutorial::check("(8.2) α_ij by hand vs decoder->step()", worst_alpha, 1e-5);
  tutorial::check("(8.3) c_j by hand vs decoder->step()", worst_c, 1e-5);
  tutorial::check("(8.4) s_j by hand vs decoder->step()", worst_s, 1e-5);
  tutorial::check("(8.5) logits by hand vs decoder->logits()", worst_logits, 1e-4);
}

// The attention of one greedy output as a heatmap.
std::string heatmap(const models::Hypothesis& output, const std::string& source,
                    const data::Vocabulary& target_vocabulary) {
  // [docs:heatmap]
  // Hypothesis::attention[j][i] = α_ij for each output character j, the end token included: one row each.
  std::vector<std::string> output_tokens = target_vocabulary.decode(output.tokens);
  if (output.finished) output_tokens.push_back("<eos>");
  std::vector<std::vector<double>> alpha;
  for (const std::vector<float>& row : output.attention) alpha.emplace_back(row.begin(), row.end());
  plot::HeatmapOptions heatmap;
  heatmap.title = "\"" + source + "\"";
  const std::string svg = plot::attention_svg(data::utf8_characters(source), output_tokens, alpha, heatmap);
  // [docs:end]
  return svg;
}

}  // namespace

int main(int argc, char** argv) {
  const tutorial::Options options = tutorial::parse_options(argc, argv, tutorial::Seed::varies);
  // The chapter's settings; --small keeps every step but makes them tiny.
  const std::size_t train_size = options.small ? 300 : 20000;
  const std::size_t held_out = options.small ? 40 : 1000;  // validation and test dates each
  const std::size_t epochs = options.small ? 1 : 3;
  const std::size_t max_steps = options.small ? 6 : 0;  // 0: no limit
  const std::size_t hidden_size = options.small ? 16 : 64;
  const std::size_t batch_size = 64;
  std::printf("Chapter 8: the attention decoder, trained on dates (%zu training pairs, %zu epochs, H = %zu)\n\n",
              train_size, epochs, hidden_size);
  tutorial::announce_seed(options);

  // ---- The data, the model, the training loop -----------------------------------------------------------------------
  const Data data = make_data(train_size, held_out);
  models::Seq2seqConfig config = configure(data.source_vocabulary, data.target_vocabulary, hidden_size);
  config.seed = tutorial::seeded(options, config.seed);  // --seed S: other initial weights (the same data)
  models::Seq2seq<float> model(config);
  std::printf("model: %s decoder, GRU cells, E = %zu, H = %zu: %zu parameters\n\n", config.decoder_name().c_str(),
              config.embedding_dim, config.hidden_size, model.parameter_count());
  train(model, data, epochs, max_steps, batch_size, tutorial::seeded(options, 7));

  // ---- Test exact match, and a few test dates -----------------------------------------------------------------------
  const dates::Scores test = exact_match(model, data.splits.test, data.source_vocabulary, data.target_vocabulary);
  std::printf("\ntest exact match %.4f (%zu dates never seen in training); year %.4f, month %.4f, day %.4f\n",
              test.exact_match, test.count, test.year, test.month, test.day);
  const std::vector<std::size_t> shown{34, 4, 20, 6, 13, 28, 1, 11};  // the first three get a heatmap
  const std::vector<models::Hypothesis> shown_outputs = show_test_dates(model, data, shown);

  // ---- One date through the trained decoder, every equation by hand -------------------------------------------------
  walk_by_hand(model, data, data.splits.test[shown[0]]);

  // ---- The attention of a few test dates, as heatmaps ---------------------------------------------------------------
  std::printf("\n");
  for (std::size_t n = 0; n < 3; ++n) {
    const std::string svg = heatmap(shown_outputs[n], data.splits.test[shown[n]].source, data.target_vocabulary);
    tutorial::write_figure(options, "08-heatmap-" + std::to_string(n + 1) + ".svg", svg);
  }
  return tutorial::exit_status();
}
