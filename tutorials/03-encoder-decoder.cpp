// Chapter 3 — the basic encoder-decoder (docs/03-encoder-decoder.md).
//
// The encoder of chapter 2 squeezes the source into one vector c = h_Tx; a second recurrent network, the decoder,
// writes the target one token at a time from c: s_j = f(s_{j-1}, y_{j-1}, c) and p(y_j | y_<j, c) = g(y_{j-1}, s_j, c),
// so that p(y | x) = Π_j p(y_j | y_<j, c). This program trains that model (models::Seq2seq with the "vanilla" decoder)
// for a few hundred steps on the toy copy task of models/sequences.hpp, then takes it apart: the product rule step by
// step, g with explicit loops, the teacher-forced logits of training next to the same steps run one at a time, greedy
// decoding by hand next to the library's, and the two ways of running the same trained decoder side by side — reading
// the true previous token (teacher forcing) or its own previous prediction (inference) — with an example where one
// early mistake derails the rest. Deterministic; exits with status 1 if a check fails.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "models/search.hpp"
#include "models/sequences.hpp"
#include "plot/svg.hpp"
#include "tutorials/common.hpp"

using namespace attend;
using namespace attend::data;
using namespace attend::models;
using namespace attend::plot;

namespace {

// p = softmax(logits) of one row, in double: p_v = exp(x_v - m) / Σ_w exp(x_w - m), m = max_w x_w
template <class T>
std::vector<double> softmax_row(const T* logits, std::size_t V) {
  const double m = static_cast<double>(*std::max_element(logits, logits + V));
  std::vector<double> p(V);
  double total = 0;
  for (std::size_t v = 0; v < V; ++v) total += p[v] = std::exp(static_cast<double>(logits[v]) - m);
  for (double& p_v : p) p_v /= total;
  return p;
}

// The most probable token of one row of logits among those a decoder may output (never <pad> or <sos>).
template <class T>
std::int64_t argmax_token(const T* logits, std::size_t V) {
  std::size_t best = Vocabulary::eos_id;
  for (std::size_t v = Vocabulary::eos_id; v < V; ++v) {
    if (logits[v] > logits[best]) best = v;
  }
  return static_cast<std::int64_t>(best);
}

// How many positions of `target` hold the same token in `output`.
std::size_t right_positions(const std::vector<std::int64_t>& output, const std::vector<std::int64_t>& target) {
  std::size_t right = 0;
  for (std::size_t j = 0; j < std::min(output.size(), target.size()); ++j) right += output[j] == target[j];
  return right;
}

// The tokens with the end token appended: what a decoder emits, position by position.
std::vector<std::int64_t> with_end(std::vector<std::int64_t> tokens) {
  tokens.push_back(Vocabulary::eos_id);
  return tokens;
}

// How many positions of `output` differ from `target` (a missing or extra position counts as wrong).
std::size_t wrong_positions(const std::vector<std::int64_t>& output, const std::vector<std::int64_t>& target) {
  std::size_t wrong = 0;
  for (std::size_t j = 0; j < std::max(output.size(), target.size()); ++j) {
    wrong += j >= output.size() || j >= target.size() || output[j] != target[j];
  }
  return wrong;
}

// "  ^^ ^": a caret under every wrong position.
std::string carets(const std::vector<std::int64_t>& output, const std::vector<std::int64_t>& target) {
  std::string marks;
  for (std::size_t j = 0; j < std::max(output.size(), target.size()); ++j) {
    marks += j >= output.size() || j >= target.size() || output[j] != target[j] ? '^' : ' ';
  }
  while (!marks.empty() && marks.back() == ' ') marks.pop_back();
  return marks;
}

// The toy task's settings and its two sets of examples.
struct Toy {
  sequences::TaskConfig task;
  std::vector<sequences::Example> train_set, test_set;
};

Toy make_task() {
  // [docs:task]
  // The toy task: copy a random string of 3 to 10 letters (a..j). Ids 0..3 are <pad> <sos> <eos> <unk>.
  sequences::TaskConfig task;
  task.task = sequences::Task::copy;
  task.symbols = 10;
  task.min_length = 3;
  task.max_length = 10;
  Rng data_rng(3);
  const std::vector<sequences::Example> train_set = sequences::generate(task, 4000, data_rng);
  const std::vector<sequences::Example> test_set = sequences::generate(task, 500, data_rng);
  // [docs:end]
  return {task, train_set, test_set};
}

// [docs:model]
// The vanilla encoder-decoder for the task, and how long to train it.
Seq2seqConfig configure(const sequences::TaskConfig& task) {
  Seq2seqConfig config;
  config.source_vocab_size = config.target_vocab_size = sequences::vocab_size(task);  // V = 14
  config.set_decoder("vanilla");  // s_j = f(s_{j-1}, [E y_{j-1}; c]), c = h_Tx
  config.embedding_dim = 16;      // E
  config.hidden_size = 64;        // H, encoder and decoder
  config.max_target_length = task.max_length + 5;
  return config;
}

models::TrainOptions training_options(bool small) {
  models::TrainOptions training;
  training.steps = small ? 60 : 700;
  training.batch_size = 32;
  training.lr = 3e-3;  // Adam's
  training.seed = 0;   // the order of the batches
  return training;
}
// [docs:end]

// The model's sizes, and the mean training loss over each seventh of the steps.
void print_training(const Toy& toy, const Seq2seqConfig& config, Seq2seq<float>& model,
                    const models::TrainOptions& training, const std::vector<double>& losses) {
  std::printf("vanilla encoder-decoder: V = %zu, E = %zu, H = %zu, %zu parameters; copy task, lengths %zu..%zu\n",
              config.target_vocab_size, config.embedding_dim, config.hidden_size, model.parameter_count(),
              toy.task.min_length, toy.task.max_length);
  std::printf("training with teacher forcing, %zu steps of %zu examples (Adam, lr %g):\n", training.steps,
              training.batch_size, training.lr);
  const std::size_t window = losses.size() / 7;  // the loss of one batch is noisy: means over windows of steps
  for (std::size_t first = 0; first + window <= losses.size(); first += window) {
    double mean = 0;
    for (std::size_t step = first; step < first + window; ++step) mean += losses[step] / static_cast<double>(window);
    std::printf("  steps %3zu-%3zu  mean loss %.3f\n", first + 1, first + window, mean);
  }
  std::printf("\n");
}

// One example through the product rule, step by step: what each step computed, and p(y | x).
struct ProductRule {
  Encoded<double> encoded;
  Variable<double> c;
  std::vector<DecoderStep<double>> steps;
  double p_y = 1, log_p_y = 0;
};

// (3.1)-(3.3) one step at a time; prints p(y_j | y_<j, c) of each step.
ProductRule product_rule(Seq2seq<double>& exact, Tape<double>& tape, const Batch& one, std::size_t V) {
  // [docs:product-rule]
  Encoded<double> encoded = exact.encode(tape, one.source, one.source_lengths);
  const Variable<double> c = encoded.memory.context;  // (2.7)  c = h_Tx: (1, H)
  DecoderState<double> state = encoded.state;         // s_0 = h_Tx
  const std::size_t N = one.target_out.shape()[1];    // N = T_y + 1: the end token is predicted too
  double p_y = 1, log_p_y = 0;
  std::vector<DecoderStep<double>> steps;
  for (std::size_t j = 0; j < N; ++j) {
    const Ids y_prev(Shape{1}, {one.target_in.data()[j]});  // the true y_{j-1}; y_0 = <sos>
    // (3.2)  s_j = f(s_{j-1}, y_{j-1}, c)
    steps.push_back(exact.decoder->step(y_prev, state, encoded.memory));
    // (3.3)  p(y_j | y_<j, c) = g(y_{j-1}, s_j, c) = softmax(W_o [s_j; c; E y_{j-1}] + b_o)
    const Variable<double> logits = exact.decoder->logits(steps.back().output);  // (1, V)
    const double p_y_j = softmax_row(logits.value().data(), V)[one.target_out.data()[j]];
    // (3.1)  p(y) = Π_j p(y_j | y_1..y_{j-1}, c), and log p(y) = Σ_j log p(y_j | y_1..y_{j-1}, c)
    p_y *= p_y_j;
    log_p_y += std::log(p_y_j);
    std::printf("  j = %2zu  y_{j-1} = %s  y_j = %s  p(y_j | y_<j, c) = %.4f\n", j + 1,
                sequences::spell({y_prev.data()[0]}).c_str(), sequences::spell({one.target_out.data()[j]}).c_str(),
                p_y_j);
    state = steps.back().state;
  }
  // [docs:end]
  return {encoded, c, steps, p_y, log_p_y};
}

// The training loss of the same example, against the product rule's sum of logs.
void check_loss(Seq2seq<double>& exact, Tape<double>& tape, const Batch& one, const ProductRule& rule) {
  const std::size_t N = one.target_out.shape()[1];
  // [docs:loss]
  // (3.5)  L = -(1/N) Σ_j log p(y_j | y_<j, x): the training loss of this one example averages its N = T_y + 1 terms
  const double L = exact.loss(tape, one).value().item();
  // [docs:end]
  std::printf("training loss of this example L = %.6f, and -N L = %.6f\n", L, -static_cast<double>(N) * L);
  tutorial::check("(3.1) log of the product = sum of the logs", std::abs(std::log(rule.p_y) - rule.log_p_y), 1e-12);
  tutorial::check("(3.1) sum of log p(y_j | ...) step by step = -N L from the loss", std::abs(rule.log_p_y + N * L),
                  1e-12);
}

// (3.3) at j = 1 with explicit loops, against the decoder's probabilities.
void output_layer_by_hand(Seq2seq<double>& exact, const Seq2seqConfig& config, const ProductRule& rule) {
  const std::size_t V = config.target_vocab_size;
  const std::vector<DecoderStep<double>>& steps = rule.steps;
  const Variable<double>& c = rule.c;
  // [docs:g-by-hand]
  // (3.3) at j = 1 with explicit loops: the features [s_1; c; E y_0], then one row of W_o per token, then softmax
  const std::size_t H = config.hidden_size, E = config.embedding_dim;
  const double* s_1 = steps[0].state.h.back().value().data();
  const Tensor<double>& E_table = exact.decoder->embedding.W.value;  // (V, E)
  std::vector<double> features;                                      // (H + H + E)
  for (std::size_t k = 0; k < H; ++k) features.push_back(s_1[k]);
  for (std::size_t k = 0; k < H; ++k) features.push_back(c.value().data()[k]);
  for (std::size_t k = 0; k < E; ++k) features.push_back(E_table.at({Vocabulary::sos_id, k}));
  std::vector<double> g(V);  // W_o [s_1; c; E y_0] + b_o
  for (std::size_t v = 0; v < V; ++v) {
    g[v] = exact.decoder->output.b.value.data()[v];
    for (std::size_t f = 0; f < features.size(); ++f) g[v] += exact.decoder->output.W.value.at({v, f}) * features[f];
  }
  // [docs:end]
  const std::vector<double> p_by_hand = softmax_row(g.data(), V);
  const std::vector<double> p_library = softmax_row(exact.decoder->logits(steps[0].output).value().data(), V);
  double worst = 0;
  for (std::size_t v = 0; v < V; ++v) worst = std::max(worst, std::abs(p_by_hand[v] - p_library[v]));
  tutorial::check("(3.3) p(y_1 | c) with explicit loops = the decoder's", worst, 1e-14);
}

// (3.4): the first step again, with the annotations replaced by noise.
void check_s_unused(Seq2seq<double>& exact, Tape<double>& tape, const ProductRule& rule) {
  const Encoded<double>& encoded = rule.encoded;
  // [docs:s-unused]
  // (3.4)  ŷ_t = D(h_t; s): the vanilla decoder leaves the slot s unused. Replace every annotation h_1..h_Tx it could
  // read by noise: its step does not change, because all it knows of the source is c.
  SourceMemory<double> scrambled = encoded.memory;
  scrambled.annotations = tape.constant(Rng(9).normal_tensor<double>(encoded.memory.annotations.shape(), 0, 1));
  const DecoderStep<double> step_1 = exact.decoder->step(Ids(Shape{1}, {Vocabulary::sos_id}), encoded.state, scrambled);
  // [docs:end]
  double worst = 0;
  for (std::size_t f = 0; f < step_1.output.value().size(); ++f) {
    worst = std::max(worst, std::abs(step_1.output.value().data()[f] - rule.steps[0].output.value().data()[f]));
  }
  tutorial::check("(3.4) annotations replaced by noise: the decoder step is unchanged", worst, 0.0);
}

// The teacher-forced logits of 8 test examples, all steps at once and one step at a time.
void check_teacher_forcing(Seq2seq<double>& exact, Tape<double>& tape, const std::vector<sequences::Example>& test_set,
                           std::size_t V) {
  // [docs:teacher-forcing]
  // Training runs all steps at once with the true previous tokens: logits (B, T, V) for 8 test examples.
  const Batch eight = sequences::batch_of(test_set, {0, 1, 2, 3, 4, 5, 6, 7});
  const Variable<double> forced = exact.forward(tape, eight).logits;
  // The same steps one at a time: step j reads column j of target_in, <sos> y_1 … y_n.
  Encoded<double> encoded_8 = exact.encode(tape, eight.source, eight.source_lengths);
  DecoderState<double> s_prev = encoded_8.state;
  const std::size_t B = eight.size(), T_8 = eight.target_in.shape()[1];
  double worst = 0;
  for (std::size_t j = 0; j < T_8; ++j) {
    Ids y_prev(Shape{B});
    for (std::size_t b = 0; b < B; ++b) y_prev.data()[b] = eight.target_in.data()[b * T_8 + j];
    const DecoderStep<double> step = exact.decoder->step(y_prev, s_prev, encoded_8.memory);
    const Variable<double> logits_j = exact.decoder->logits(step.output);  // (B, V)
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t v = 0; v < V; ++v) {
        worst = std::max(worst, std::abs(logits_j.value().at({b, v}) - forced.value().at({b, j, v})));
      }
    }
    s_prev = step.state;
  }
  // [docs:end]
  tutorial::check("teacher-forced logits (B, T, V) = the steps run one at a time", worst, 1e-12);
}

// (3.6) greedy decoding by hand, against models::greedy_decode.
void greedy_by_hand(Seq2seq<double>& exact, const Seq2seqConfig& config, const ProductRule& rule, const Batch& one) {
  const std::size_t V = config.target_vocab_size;
  const Encoded<double>& encoded = rule.encoded;
  // [docs:greedy]
  // (3.6)  ŷ = argmax_y p(y | x), approximated greedily: ŷ_j = argmax_v p(v | ŷ_<j, c), fed back as the next input
  std::vector<std::int64_t> y_hat;
  double log_p_greedy = 0;
  DecoderState<double> s = encoded.state;
  Ids y_prev(Shape{1}, {Vocabulary::sos_id});
  for (std::size_t j = 0; j < config.max_target_length; ++j) {
    const DecoderStep<double> step = exact.decoder->step(y_prev, s, encoded.memory);
    const Variable<double> logits_j = exact.decoder->logits(step.output);
    const std::int64_t y_hat_j = argmax_token(logits_j.value().data(), V);
    log_p_greedy += std::log(softmax_row(logits_j.value().data(), V)[y_hat_j]);
    if (y_hat_j == Vocabulary::eos_id) break;
    y_hat.push_back(y_hat_j);
    y_prev.data()[0] = y_hat_j;  // the model's own prediction, not the true token
    s = step.state;
  }
  // [docs:end]
  const Hypothesis library = greedy_decode(exact, one.source, one.source_lengths)[0];
  std::printf("\ngreedy output by hand: %s (log p = %.6f); models::greedy_decode: %s (log p = %.6f)\n",
              sequences::spell(y_hat).c_str(), log_p_greedy, sequences::spell(library.tokens).c_str(),
              library.log_prob);
  tutorial::check("(3.6) greedy by hand = greedy_decode: tokens that differ",
                  static_cast<double>(wrong_positions(y_hat, library.tokens)), 0.0);
  tutorial::check("(3.6) greedy by hand = greedy_decode: log p(y | x)", std::abs(log_p_greedy - library.log_prob),
                  1e-12);
}

// The outputs of the two ways of running the trained decoder on the test set.
struct TwoWays {
  std::vector<std::vector<std::int64_t>> forced_argmax;  // per example: one token per target position (y and <eos>)
  std::vector<std::vector<std::int64_t>> free_running;   // per example: the greedy output, without <eos>
};

TwoWays run_both_ways(Seq2seq<float>& model, const std::vector<sequences::Example>& test_set, std::size_t V) {
  // [docs:side-by-side]
  // The trained model run both ways on the 500 test examples. Teacher forcing: argmax of every step that read the
  // true y_{j-1}. Free running: greedy decoding, every step reading the model's own ŷ_{j-1}.
  std::vector<std::vector<std::int64_t>> forced_argmax;  // per example: one token per target position (y and <eos>)
  Tape<float> eval_tape;
  NoGradGuard<float> no_grad(eval_tape);
  for (const std::vector<std::size_t>& indices : batch_order(test_set.size(), 100, nullptr)) {
    eval_tape.clear();
    const Batch batch = sequences::batch_of(test_set, indices);
    const Variable<float> logits = model.forward(eval_tape, batch).logits;  // (B, T, V)
    const std::size_t T_b = logits.shape()[1];
    for (std::size_t b = 0; b < indices.size(); ++b) {
      std::vector<std::int64_t> tokens;
      for (std::size_t j = 0; j <= test_set[indices[b]].target.size(); ++j) {
        tokens.push_back(argmax_token(logits.value().data() + (b * T_b + j) * V, V));
      }
      forced_argmax.push_back(tokens);
    }
  }
  const std::vector<std::vector<std::int64_t>> free_running = sequences::predict(model, test_set);
  // [docs:end]
  return {forced_argmax, free_running};
}

// How often each way gets a token, and a whole output, right; per output position j too (drawn as a figure).
void compare_two_ways(const tutorial::Options& options, const Toy& toy, const TwoWays& ways) {
  const std::vector<sequences::Example>& test_set = toy.test_set;
  const auto& [forced_argmax, free_running] = ways;
  std::size_t positions = 0, forced_right = 0, free_right = 0, forced_exact = 0, free_exact = 0, disagree = 0;
  // per output position j: how many targets have a position j, and how often each way gets it right
  std::vector<double> at_j(toy.task.max_length + 1, 0.0), forced_at_j = at_j, free_at_j = at_j;
  for (std::size_t k = 0; k < test_set.size(); ++k) {
    const std::vector<std::int64_t> target = with_end(test_set[k].target);
    const std::vector<std::int64_t> free_k = with_end(free_running[k]);
    for (std::size_t j = 0; j < target.size(); ++j) {
      at_j[j] += 1;
      forced_at_j[j] += forced_argmax[k][j] == target[j];
      free_at_j[j] += j < free_k.size() && free_k[j] == target[j];
    }
    const std::size_t wrong_tf = wrong_positions(forced_argmax[k], target);
    const std::size_t wrong_fr = wrong_positions(with_end(free_running[k]), target);
    positions += target.size();
    forced_right += right_positions(forced_argmax[k], target);
    free_right += right_positions(with_end(free_running[k]), target);
    forced_exact += wrong_tf == 0;
    free_exact += wrong_fr == 0;
    disagree += (wrong_tf == 0) != (wrong_fr == 0);
  }
  tutorial::check(
      "an output is right under teacher forcing exactly when it is right free running: examples that "
      "disagree",
      static_cast<double>(disagree), 0.0);
  const double examples = static_cast<double>(test_set.size()), all = static_cast<double>(positions);
  std::printf("\nthe same trained decoder, two ways, on %zu test examples (%zu target positions, <eos> included):\n",
              test_set.size(), positions);
  std::printf("                                     tokens right   whole outputs right\n");
  std::printf("  teacher forcing (reads y_{j-1})       %5.1f %%          %5.1f %%\n", 100 * forced_right / all,
              100 * forced_exact / examples);
  std::printf("  free running    (reads its ŷ_{j-1})   %5.1f %%          %5.1f %%\n", 100 * free_right / all,
              100 * free_exact / examples);

  // the legend is plain text in the picture: yⱼ₋₁ rather than TeX's y_{j-1}
  plot::Series forced_curve{"teacher forcing (reads the true yⱼ₋₁)", {}, {}};
  plot::Series free_curve{"free running (reads its own ŷⱼ₋₁)", {}, {}};
  std::printf("\nright at output position j (<eos> included):\n  j              ");
  for (std::size_t j = 0; j < at_j.size(); ++j) std::printf("%6zu", j + 1);
  std::printf("\n  teacher forcing");
  for (std::size_t j = 0; j < at_j.size(); ++j) {
    std::printf("%5.0f%%", 100 * forced_at_j[j] / at_j[j]);
    forced_curve.x.push_back(static_cast<double>(j + 1));
    forced_curve.y.push_back(forced_at_j[j] / at_j[j]);
  }
  std::printf("\n  free running   ");
  for (std::size_t j = 0; j < at_j.size(); ++j) {
    std::printf("%5.0f%%", 100 * free_at_j[j] / at_j[j]);
    free_curve.x.push_back(static_cast<double>(j + 1));
    free_curve.y.push_back(free_at_j[j] / at_j[j]);
  }
  std::printf("\n");
  tutorial::write_figure(
      options, "03-teacher-forcing-vs-free-running.svg",
      plot::line_chart_svg({forced_curve, free_curve}, {"The same trained decoder, two ways", "output position j",
                                                        "share of test targets right at position j", 0.0, 1.0}));
}

// An example where one early mistake derails the rest: teacher forcing gets at most one position wrong, while free
// running, once wrong, stays wrong for at least three more positions.
void show_derailed_example(const std::vector<sequences::Example>& test_set, const TwoWays& ways) {
  for (std::size_t k = 0; k < test_set.size(); ++k) {
    const std::vector<std::int64_t> target = with_end(test_set[k].target);
    const std::vector<std::int64_t> free_k = with_end(ways.free_running[k]);
    if (wrong_positions(ways.forced_argmax[k], target) > 1 || wrong_positions(free_k, target) < 4) continue;
    std::printf("\none early mistake derails the rest (test example %zu):\n", k + 1);
    std::printf("  source x                  %s\n", sequences::spell(test_set[k].source).c_str());
    std::printf("  target y                  %s\n", sequences::spell(target).c_str());
    std::printf("  teacher forcing, argmax   %s\n", sequences::spell(ways.forced_argmax[k]).c_str());
    std::printf("                            %s\n", carets(ways.forced_argmax[k], target).c_str());
    std::printf("  free running, greedy      %s\n", sequences::spell(free_k).c_str());
    std::printf("                            %s\n", carets(free_k, target).c_str());
    break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const tutorial::Options options = tutorial::parse_options(argc, argv, tutorial::Seed::varies);
  std::printf("Chapter 3: the basic encoder-decoder, p(y | x) = prod_j p(y_j | y_<j, c)\n\n");
  tutorial::announce_seed(options);

  // ---- The task and the model, trained with teacher forcing ---------------------------------------------------------
  const Toy toy = make_task();
  Seq2seqConfig config = configure(toy.task);
  config.seed = tutorial::seeded(options, config.seed);  // --seed S: other initial weights
  Seq2seq<float> model(config);
  models::TrainOptions training = training_options(options.small);
  training.seed = tutorial::seeded(options, training.seed);  // and another batch order
  const std::vector<double> losses = sequences::train(model, toy.train_set, training);
  print_training(toy, config, model, training, losses);

  // ---- The product rule, step by step, on one test example ----------------------------------------------------------
  // The checks run in double precision on an exact copy of the trained weights.
  Seq2seq<double> exact(config);
  sequences::copy_parameters(model, exact);
  exact.eval();
  std::size_t shown = 0;  // the first test example of at least 6 letters
  while (toy.test_set[shown].source.size() < 6) ++shown;
  const Batch one = sequences::batch_of(toy.test_set, {shown});
  Tape<double> tape;
  const ProductRule rule = product_rule(exact, tape, one, config.target_vocab_size);
  std::printf("source x = %s, target y = %s: p(y | x) = %.6g, log p(y | x) = %.6f\n",
              sequences::spell(toy.test_set[shown].source).c_str(),
              sequences::spell(toy.test_set[shown].target).c_str(), rule.p_y, rule.log_p_y);
  check_loss(exact, tape, one, rule);

  // ---- The output layer by hand; the slot s stays empty -------------------------------------------------------------
  output_layer_by_hand(exact, config, rule);
  check_s_unused(exact, tape, rule);

  // ---- Teacher forcing: all steps at once ---------------------------------------------------------------------------
  check_teacher_forcing(exact, tape, toy.test_set, config.target_vocab_size);

  // ---- Greedy decoding: feeding back predictions --------------------------------------------------------------------
  greedy_by_hand(exact, config, rule, one);

  // ---- The two ways side by side ------------------------------------------------------------------------------------
  const TwoWays ways = run_both_ways(model, toy.test_set, config.target_vocab_size);
  compare_two_ways(options, toy, ways);
  show_derailed_example(toy.test_set, ways);
  return tutorial::exit_status();
}
