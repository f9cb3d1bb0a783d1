// Chapter 4 — the bottleneck, measured (docs/04-bottleneck.md).
//
// The basic encoder-decoder of chapter 3 hands its decoder one vector, c = h_Tx, however long the source. This program
// measures what that costs. It trains the vanilla model on the copy task with sources of 5 to 40 symbols and scores
// exact match separately at each source length; then it measures with gradients how much the first token still moves
// the encoder's final state as the source grows: the Jacobian ∂h_Tx/∂x_1, one row per backward pass, checked against
// finite differences, for lengths 5 to 50. Both curves are drawn as SVG. The experiment's settings live in
// models/sequences.cpp (bottleneck_experiment), so that chapter 10 repeats it exactly with attention.
// Deterministic; exits with status 1 if a check fails.
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

// J_i = ∂h_Tx/∂x_i for every source b of a batch of sources of equal length and every position i: (B, T_x, H, E).
Tensor<double> jacobians(nn::Encoder<double>& encoder, const Ids& ids) {
  // [docs:jacobian]
  Tape<double> tape;
  // (2.1)  x_i = E[w_i]: (B, T_x, E), copied into a leaf so that backward fills its gradient
  const Variable<double> x = tape.leaf(encoder.embedding(tape, ids).value());
  // (4.2)  h_Tx = f(x_Tx, f(x_{Tx-1}, … f(x_1, h_0))): the encoder's last state, (B, H)
  const Variable<double> h_Tx = encoder.rnn.forward(x).h_final[0];
  const std::size_t B = ids.shape()[0], T_x = ids.shape()[1], H = h_Tx.shape()[1], E = x.shape()[2];
  Tensor<double> J(Shape{B, T_x, H, E});
  for (std::size_t k = 0; k < H; ++k) {
    // (4.3)  row k of every J_i: one backward pass seeded with 1 at component k of h_Tx, all sources at once
    Tensor<double> seed(Shape{B, H});
    for (std::size_t b = 0; b < B; ++b) seed.at({b, k}) = 1;
    tape.backward(h_Tx, seed);
    const Tensor<double> dx = x.grad();  // ∂h_Tx,k/∂x_i for every source and position: (B, T_x, E)
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t i = 0; i < T_x; ++i) {
        for (std::size_t e = 0; e < E; ++e) J.at({b, i, k, e}) = dx.at({b, i, e});
      }
    }
  }
  // [docs:end]
  encoder.zero_grad();  // backward also added into the weights' gradients; nothing trains here
  return J;
}

// (4.4)  ‖J_i‖_F = sqrt(Σ_k Σ_e (J_i)_ke²) of source b, position i (0-based)
double frobenius(const Tensor<double>& J, std::size_t b, std::size_t i) {
  const std::size_t T_x = J.shape()[1], HE = J.shape()[2] * J.shape()[3];
  const double* J_i = J.data() + (b * T_x + i) * HE;
  double sum = 0;
  for (std::size_t k = 0; k < HE; ++k) sum += J_i[k] * J_i[k];
  return std::sqrt(sum);
}

// h_Tx of one source from its embeddings x (1, T_x, E), given as plain values: the route for finite differences.
Tensor<double> final_state(nn::Encoder<double>& encoder, const Tensor<double>& x) {
  Tape<double> tape;
  return encoder.rnn.forward(tape.constant(x)).h_final[0].value();
}

// "#####" for a share in [0, 1], 40 characters for 1.
std::string bar(double share) { return std::string(static_cast<std::size_t>(std::lround(40 * share)), '#'); }

// The trained model's results: the data it saw and was tested on, its losses, its outputs and their scores.
struct Measured {
  std::vector<sequences::Example> train_set, test_set;
  std::vector<double> losses;
  std::vector<std::vector<std::int64_t>> outputs;
  std::vector<sequences::LengthScore> scores;
};

Measured train_and_measure(Seq2seq<float>& model, const sequences::LengthExperiment& experiment) {
  // [docs:train]
  const std::vector<sequences::Example> train_set = sequences::training_set(experiment);
  const std::vector<sequences::Example> test_set = sequences::test_set(experiment);
  const std::vector<double> losses = sequences::train(model, train_set, experiment.training);
  // (4.1)  exact match at length T_x: the share of test sources of that length whose output is exactly the target
  const std::vector<std::vector<std::int64_t>> outputs = sequences::predict(model, test_set);
  const std::vector<sequences::LengthScore> scores = sequences::score_by_length(test_set, outputs);
  // [docs:end]
  return {train_set, test_set, losses, outputs, scores};
}

// The task, the model's sizes, and the loss at the start and the end of training.
void print_training(const sequences::LengthExperiment& experiment, const Seq2seqConfig& config, Seq2seq<float>& model,
                    const Measured& measured) {
  const std::vector<double>& losses = measured.losses;
  std::printf("task: %s, %zu symbols; %zu training sources of %zu..%zu symbols; E = %zu, H = %zu, %zu parameters\n",
              sequences::to_string(experiment.task.task).c_str(), experiment.task.symbols, measured.train_set.size(),
              experiment.task.min_length, experiment.task.max_length, config.embedding_dim, config.hidden_size,
              model.parameter_count());
  double last_loss = 0;  // the mean of the last 100 steps: one batch's loss is noisy
  const std::size_t last_steps = std::min<std::size_t>(100, losses.size());
  for (std::size_t k = losses.size() - last_steps; k < losses.size(); ++k) {
    last_loss += losses[k] / static_cast<double>(last_steps);
  }
  std::printf("training: %zu steps of %zu; loss %.3f at the start, %.3f at the end (mean of the last 100 steps)\n\n",
              experiment.training.steps, experiment.training.batch_size, losses.front(), last_loss);
}

// (4.1) by source length as a table and a figure; which positions come out right at the longest length; an example;
// and the exact match at the longest length counted by hand.
void exact_match_by_length(const tutorial::Options& options, const sequences::LengthExperiment& experiment,
                           const Measured& measured) {
  const std::vector<sequences::Example>& test_set = measured.test_set;
  const std::vector<std::vector<std::int64_t>>& outputs = measured.outputs;
  const std::vector<sequences::LengthScore>& scores = measured.scores;
  std::printf("exact match by source length (%zu test sources each, greedy decoding):\n", experiment.test_per_length);
  std::printf("  T_x   exact match\n");
  plot::Series exact_match{"vanilla (c = h_Tx)", {}, {}};
  for (const sequences::LengthScore& score : scores) {
    const std::string bars = bar(score.exact_match());
    std::printf("  %3zu   %5.1f %%%s%s\n", score.length, 100 * score.exact_match(), bars.empty() ? "" : "  ",
                bars.c_str());
    exact_match.x.push_back(static_cast<double>(score.length));
    exact_match.y.push_back(score.exact_match());
  }
  // which output positions come out right at the longest test length
  const std::size_t T_long = scores.back().length;
  std::vector<double> right_at(T_long, 0.0);
  for (std::size_t k = 0; k < test_set.size(); ++k) {
    if (test_set[k].source.size() != T_long) continue;
    for (std::size_t j = 0; j < std::min(T_long, outputs[k].size()); ++j) {
      right_at[j] += (outputs[k][j] == test_set[k].target[j]) / static_cast<double>(experiment.test_per_length);
    }
  }
  const std::size_t first_positions = std::min<std::size_t>(8, T_long);
  double rest = 0;
  for (std::size_t j = first_positions; j < T_long; ++j) {
    rest += right_at[j] / static_cast<double>(T_long - first_positions);
  }
  std::printf("  at T_x = %zu, output position j is right in:\n  j    ", T_long);
  for (std::size_t j = 0; j < first_positions; ++j) std::printf("%6zu", j + 1);
  std::printf("   %zu..%zu\n       ", first_positions + 1, T_long);
  for (std::size_t j = 0; j < first_positions; ++j) std::printf("%5.0f%%", 100 * right_at[j]);
  std::printf("   %4.0f%% (chance: %.0f%%)\n", 100 * rest, 100.0 / static_cast<double>(experiment.task.symbols));
  // an output of the longest test length, beside its target
  const std::size_t last = test_set.size() - 1;
  std::printf("  e.g. T_x = %zu:  target %s\n", test_set[last].source.size(),
              sequences::spell(test_set[last].target).c_str());
  std::printf("                  output %s\n", sequences::spell(outputs[last]).c_str());
  // (4.1) once more by hand, at the longest length: count the outputs equal to their targets
  std::size_t exact_by_hand = 0, count = 0;
  for (std::size_t k = 0; k < test_set.size(); ++k) {
    if (test_set[k].source.size() != scores.back().length) continue;
    ++count;
    exact_by_hand += outputs[k] == test_set[k].target;
  }
  const double by_hand = static_cast<double>(exact_by_hand) / static_cast<double>(count);
  tutorial::check("(4.1) exact match at the longest length, counted by hand",
                  std::abs(by_hand - scores.back().exact_match()), 0.0);
  tutorial::write_figure(options, "04-exact-match-by-length.svg",
                         plot::line_chart_svg({exact_match}, {"Copying with one fixed context vector",
                                                              "source length T_x", "exact match", 0.0, 1.0}));
}

// Column e of J_1 by central differences, for a source of embeddings x: (1, T_x, E).
Tensor<double> J_1_by_finite_differences(Seq2seq<double>& trained, const Tensor<double>& x) {
  const std::size_t H = trained.config().hidden_size, E = x.shape()[2];
  // [docs:finite-differences]
  // column e of J_1 by central differences: (h_Tx(x_1 + ε u_e) - h_Tx(x_1 - ε u_e)) / 2ε, u_e the e-th unit vector
  const double epsilon = 1e-6;
  Tensor<double> J_1_numeric(Shape{1, 1, H, E});
  for (std::size_t e = 0; e < E; ++e) {
    Tensor<double> plus = x, minus = x;
    plus.at({0, 0, e}) += epsilon;
    minus.at({0, 0, e}) -= epsilon;
    const Tensor<double> h_plus = final_state(trained.encoder, plus);
    const Tensor<double> h_minus = final_state(trained.encoder, minus);
    for (std::size_t k = 0; k < H; ++k) {
      J_1_numeric.at({0, 0, k, e}) = (h_plus.data()[k] - h_minus.data()[k]) / (2 * epsilon);
    }
  }
  // [docs:end]
  return J_1_numeric;
}

// Self-checks on one source of length 10: (4.2) the encoder run from its embeddings equals the encoder's own run;
// (4.3) the Jacobian J_1 against finite differences; (4.4) their norms.
void check_jacobian(Seq2seq<double>& trained, sequences::TaskConfig at_length) {
  const std::size_t H = trained.config().hidden_size, E = trained.config().embedding_dim;
  at_length.min_length = at_length.max_length = 10;
  Rng probe_rng(7);
  const Ids probe = sequences::batch_of(sequences::generate(at_length, 1, probe_rng), {0}).source;  // (1, 10)
  Tape<double> tape;
  const Tensor<double> x = trained.encoder.embedding(tape, probe).value();  // (1, 10, E)
  double worst = 0;
  const Tensor<double> h_Tx = trained.encoder(tape, probe, {10}).h_final[0].value();
  const Tensor<double> h_Tx_from_x = final_state(trained.encoder, x);
  for (std::size_t k = 0; k < h_Tx.size(); ++k) {
    worst = std::max(worst, std::abs(h_Tx.data()[k] - h_Tx_from_x.data()[k]));
  }
  tutorial::check("(4.2) h_Tx from the embeddings = the encoder's own h_Tx", worst, 0.0);
  const Tensor<double> J = jacobians(trained.encoder, probe);  // (1, 10, H, E)
  const Tensor<double> J_1_numeric = J_1_by_finite_differences(trained, x);
  worst = 0;
  for (std::size_t k = 0; k < H * E; ++k) worst = std::max(worst, std::abs(J.data()[k] - J_1_numeric.data()[k]));
  std::printf(
      "\nthe Jacobian J_1 = dh_Tx/dx_1 (%zu x %zu) of one source of 10 symbols: ||J_1||_F = %.6f (tape), "
      "%.6f (finite differences)\n",
      H, E, frobenius(J, 0, 0), frobenius(J_1_numeric, 0, 0));
  tutorial::check("(4.3) dh_Tx/dx_1 from H backward passes = central differences", worst, 1e-8);
  tutorial::check("(4.4) ||J_1||_F from the tape = from the finite differences",
                  std::abs(frobenius(J, 0, 0) - frobenius(J_1_numeric, 0, 0)), 1e-8);
}

// The mean ‖∂h_Tx/∂x_i‖_F at every position i of random sources of each length, before and after training.
struct Influence {
  std::vector<std::vector<double>> before, after;  // [length][i]
};

Influence influence(Seq2seq<double>& untrained, Seq2seq<double>& trained, sequences::TaskConfig at_length,
                    const std::vector<std::size_t>& lengths, std::size_t sources_per_length) {
  std::vector<std::size_t> all(sources_per_length);  // the indices 0 … n-1, to batch n sources
  for (std::size_t b = 0; b < all.size(); ++b) all[b] = b;
  // [docs:influence]
  // (4.4) as the source grows: ||dh_Tx/dx_i||_F at every position i, averaged over random sources of each length,
  // before training (the same seed draws the same initial weights) and after
  Rng influence_rng(8);
  std::vector<std::vector<double>> before(lengths.size()), after(lengths.size());  // [length][i]
  for (std::size_t n = 0; n < lengths.size(); ++n) {
    at_length.min_length = at_length.max_length = lengths[n];
    const std::vector<sequences::Example> examples = sequences::generate(at_length, sources_per_length, influence_rng);
    const Ids sources = sequences::batch_of(examples, all).source;  // (sources_per_length, T_x)
    const Tensor<double> J_before = jacobians(untrained.encoder, sources);
    const Tensor<double> J_after = jacobians(trained.encoder, sources);
    before[n].assign(lengths[n], 0.0);
    after[n].assign(lengths[n], 0.0);
    for (std::size_t b = 0; b < sources_per_length; ++b) {
      for (std::size_t i = 0; i < lengths[n]; ++i) {
        before[n][i] += frobenius(J_before, b, i) / static_cast<double>(sources_per_length);
        after[n][i] += frobenius(J_after, b, i) / static_cast<double>(sources_per_length);
      }
    }
  }
  // [docs:end]
  return {before, after};
}

// The influence of x_1 as the source grows: a table and a figure.
void influence_of_x1(const tutorial::Options& options, const Influence& measured,
                     const std::vector<std::size_t>& lengths, std::size_t sources_per_length) {
  const std::vector<std::vector<double>>& before = measured.before;
  const std::vector<std::vector<double>>& after = measured.after;
  std::printf("\ninfluence of the first token on the final state, mean ||dh_Tx/dx_1||_F over %zu sources:\n",
              sources_per_length);
  std::printf("  T_x   before training   after training\n");
  plot::Series x_1_before{"before training", {}, {}}, x_1_after{"after training", {}, {}};
  for (std::size_t n = 0; n < lengths.size(); ++n) {
    std::printf("  %3zu   %.3e         %.3e\n", lengths[n], before[n][0], after[n][0]);
    x_1_before.x.push_back(static_cast<double>(lengths[n]));
    x_1_before.y.push_back(std::log10(before[n][0]));
    x_1_after.x.push_back(static_cast<double>(lengths[n]));
    x_1_after.y.push_back(std::log10(after[n][0]));
  }
  tutorial::write_figure(options, "04-influence-of-x1.svg",
                         plot::line_chart_svg({x_1_before, x_1_after}, {"How much x₁ still moves h_Tx",
                                                                        "source length T_x", "log₁₀ ‖∂h_Tx / ∂x₁‖_F"}));
}

// At the longest length, the influence of every position: a table of every fifth, and a figure.
void influence_by_position(const tutorial::Options& options, const Influence& measured,
                           const std::vector<std::size_t>& lengths) {
  const std::vector<std::vector<double>>& before = measured.before;
  const std::vector<std::vector<double>>& after = measured.after;
  const std::size_t T_last = lengths.back();
  plot::Series x_i_before{"before training", {}, {}}, x_i_after{"after training", {}, {}};
  for (std::size_t i = 0; i < T_last; ++i) {
    x_i_before.x.push_back(static_cast<double>(i + 1));
    x_i_before.y.push_back(std::log10(before.back()[i]));
    x_i_after.x.push_back(static_cast<double>(i + 1));
    x_i_after.y.push_back(std::log10(after.back()[i]));
  }
  std::vector<std::size_t> positions{1};  // the positions the table shows: 1, 5, 10, …
  for (std::size_t i = 5; i <= T_last; i += 5) positions.push_back(i);
  std::printf("\nat T_x = %zu, the influence of each position i on h_Tx, mean ||dh_Tx/dx_i||_F:\n  i     ", T_last);
  for (const std::size_t i : positions) std::printf("%9zu", i);
  std::printf("\n  before");
  for (const std::size_t i : positions) std::printf("%9.1e", before.back()[i - 1]);
  std::printf("\n  after ");
  for (const std::size_t i : positions) std::printf("%9.1e", after.back()[i - 1]);
  std::printf("\n");
  tutorial::write_figure(options, "04-influence-by-position.svg",
                         plot::line_chart_svg({x_i_before, x_i_after},
                                              {"Which tokens h_Tx still depends on, T_x = " + std::to_string(T_last),
                                               "source position i", "log₁₀ ‖∂h_Tx / ∂x_i‖_F"}));
}

}  // namespace

int main(int argc, char** argv) {
  const tutorial::Options options = tutorial::parse_options(argc, argv, tutorial::Seed::varies);
  std::printf("Chapter 4: the bottleneck, measured: the vanilla encoder-decoder against the source length\n\n");
  tutorial::announce_seed(options);

  // ---- The vanilla model trained on the copy task, exact match by source length -------------------------------------
  sequences::LengthExperiment experiment = sequences::bottleneck_experiment(options.small);
  experiment.training.on_step = tutorial::progress("the vanilla model", experiment.training.steps);
  experiment.training.seed = tutorial::seeded(options, experiment.training.seed);  // --seed S: another batch order
  Seq2seqConfig config = sequences::model_config(experiment, "vanilla");
  config.seed = tutorial::seeded(options, config.seed);  // and other initial weights
  Seq2seq<float> model(config);
  const Measured measured = train_and_measure(model, experiment);
  print_training(experiment, config, model, measured);
  exact_match_by_length(options, experiment, measured);

  // ---- The influence of x_1 on h_Tx ---------------------------------------------------------------------------------
  // In double precision on a copy of the trained weights, and on the same model before training (the same seed draws
  // the same initial weights).
  Seq2seq<double> trained(config);
  sequences::copy_parameters(model, trained);
  Seq2seq<double> untrained(config);
  const std::size_t sources_per_length = options.small ? 4 : 20;
  std::vector<std::size_t> lengths;
  for (std::size_t T_x = 5; T_x <= 50; T_x += options.small ? 15 : 5) lengths.push_back(T_x);
  check_jacobian(trained, experiment.task);
  const Influence measured_influence = influence(untrained, trained, experiment.task, lengths, sources_per_length);
  influence_of_x1(options, measured_influence, lengths, sources_per_length);
  influence_by_position(options, measured_influence, lengths);
  return tutorial::exit_status();
}
