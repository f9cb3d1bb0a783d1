// Chapter 10 — attention fixes the bottleneck (docs/10-attention-fixes-the-bottleneck.md).
//
// Chapter 4's experiment again, with the decoder as the only change: the same copy task, training set, test sets,
// sizes and training budget (models/sequences.cpp, bottleneck_experiment), once with the vanilla decoder, which reads
// one fixed c = h_Tx at every step, and once with Bahdanau et al.'s decoder, which reads a context c_j = Σ_i α_ij h_i
// of its own at every step j. It prints exact match per source length for both in one table and draws both curves in
// one plot — the toy version of Bahdanau et al.'s BLEU-against-sentence-length figure — then looks inside the
// attention model: one step's scores, weights and context recomputed by hand, where the weights fall on the copy task,
// and a heatmap of one long source. Deterministic; exits with status 1 if a check fails.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
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

// The letters of a token sequence, one string each, for the heatmap's labels.
std::vector<std::string> letters(const std::vector<std::int64_t>& ids) {
  std::vector<std::string> tokens;
  for (const std::int64_t id : ids) tokens.push_back(sequences::spell({id}));
  return tokens;
}

// Chapter 4's experiment with both decoders: the data, the trained models, their losses and their scores.
struct Compared {
  sequences::LengthExperiment experiment;
  std::vector<sequences::Example> train_set, test_set;
  std::vector<std::string> decoders;
  std::vector<std::unique_ptr<Seq2seq<float>>> models;
  std::vector<std::vector<double>> losses;                  // losses[d][step]
  std::vector<std::vector<sequences::LengthScore>> scores;  // scores[d][length]
};

Compared train_both(const tutorial::Options& options) {
  // [docs:both]
  const sequences::LengthExperiment experiment = sequences::bottleneck_experiment(options.small);
  const std::vector<sequences::Example> train_set = sequences::training_set(experiment);
  const std::vector<sequences::Example> test_set = sequences::test_set(experiment);
  const std::vector<std::string> decoders{"vanilla", "bahdanau"};
  std::vector<std::unique_ptr<Seq2seq<float>>> models;
  std::vector<std::vector<double>> losses;                  // losses[d][step]
  std::vector<std::vector<sequences::LengthScore>> scores;  // scores[d][length]
  for (const std::string& decoder : decoders) {
    Seq2seqConfig config = sequences::model_config(experiment, decoder);
    config.seed = tutorial::seeded(options, config.seed);  // --seed S: other initial weights (the same data)
    models.push_back(std::make_unique<Seq2seq<float>>(config));
    models::TrainOptions training = experiment.training;
    training.seed = tutorial::seeded(options, training.seed);        // and another batch order
    training.on_step = tutorial::progress(decoder, training.steps);  // on standard error
    losses.push_back(sequences::train(*models.back(), train_set, training));
    // (10.1)  exact match at length T_x, as (4.1)
    scores.push_back(sequences::score_by_length(test_set, sequences::predict(*models.back(), test_set)));
  }
  // [docs:end]
  return {experiment, train_set, test_set, decoders, std::move(models), losses, scores};
}

// The size of each model, and its loss at the start and the end of training.
void print_training(const Compared& c) {
  const auto& [experiment, train_set, test_set, decoders, models, losses, scores] = c;
  for (std::size_t d = 0; d < decoders.size(); ++d) {
    double last = 0;  // the mean loss of the last 100 steps (one batch's loss is noisy)
    const std::size_t n = std::min<std::size_t>(100, losses[d].size());
    for (std::size_t k = losses[d].size() - n; k < losses[d].size(); ++k) {
      last += losses[d][k] / static_cast<double>(n);
    }
    std::printf("%-8s  %6zu parameters, %zu steps of %zu, loss %.3f at the start, %.4f at the end\n",
                decoders[d].c_str(), models[d]->parameter_count(), experiment.training.steps,
                experiment.training.batch_size, losses[d].front(), last);
  }
}

// (10.1) by source length for both decoders: a table and a figure.
void exact_match_by_length(const tutorial::Options& options, const Compared& c) {
  const auto& [experiment, train_set, test_set, decoders, models, losses, scores] = c;
  std::printf("\nexact match by source length (copy task, %zu test sources per length, greedy decoding):\n",
              experiment.test_per_length);
  std::printf("  T_x   vanilla, c = h_Tx   Bahdanau, c_j = sum_i alpha_ij h_i\n");
  std::vector<plot::Series> curves{{"vanilla: one c = h_Tx", {}, {}}, {"Bahdanau: c_j for every step", {}, {}}};
  std::vector<double> total(decoders.size(), 0.0);
  for (std::size_t k = 0; k < scores[0].size(); ++k) {
    std::printf("  %3zu        %5.1f %%              %5.1f %%\n", scores[0][k].length, 100 * scores[0][k].exact_match(),
                100 * scores[1][k].exact_match());
    for (std::size_t d = 0; d < decoders.size(); ++d) {
      curves[d].x.push_back(static_cast<double>(scores[d][k].length));
      curves[d].y.push_back(scores[d][k].exact_match());
      total[d] += scores[d][k].exact_match() / static_cast<double>(scores[0].size());
    }
  }
  std::printf("  all        %5.1f %%              %5.1f %%\n", 100 * total[0], 100 * total[1]);
  if (!options.small) {
    // the chapter's claims, with the margin every training of seeds 0-4 kept (--small trains too little to make
    // them): attention copies at least 90% of the strings of every length; the vanilla model at most 5% from 20 on
    double attention_shortfall = 0, vanilla_excess = 0;
    for (std::size_t k = 0; k < scores[0].size(); ++k) {
      attention_shortfall = std::max(attention_shortfall, 0.9 - scores[1][k].exact_match());
      if (scores[0][k].length >= 20) vanilla_excess = std::max(vanilla_excess, scores[0][k].exact_match() - 0.05);
    }
    tutorial::check("Bahdanau: exact match ≥ 0.90 at every length (the shortfall)", attention_shortfall, 0.0);
    tutorial::check("vanilla: exact match ≤ 0.05 from 20 symbols on (the excess)", vanilla_excess, 0.0);
  }
  tutorial::write_figure(options, "10-bottleneck-fixed.svg",
                         plot::line_chart_svg(curves, {"Copying: exact match against source length",
                                                       "source length T_x", "exact match", 0.0, 1.0}));
}

// (10.2)-(10.4) at step 1 by hand, from W_a, U_a, v_a and the encoded source.
struct Step1 {
  std::vector<double> e_i1, alpha_i1, c_1;
};

Step1 step_1_by_hand(const AdditiveScore<double>& score, const Encoded<double>& encoded) {
  const std::size_t T_x = encoded.memory.annotations.shape()[1], H = encoded.memory.annotations.shape()[2];
  // [docs:by-hand]
  const Tensor<double>& h = encoded.memory.annotations.value();   // h_i: (1, T_x, H)
  const Tensor<double>& s_prev = encoded.state.h.back().value();  // s_0 = h_Tx: (1, H)
  const std::size_t A = score.v_a.value.shape()[1];
  std::vector<double> e_i1(T_x), alpha_i1(T_x), c_1(H, 0.0);
  for (std::size_t i = 0; i < T_x; ++i) {
    // (10.2)  e_i1 = v_aᵀ tanh(W_a s_0 + U_a h_i)
    e_i1[i] = 0;
    for (std::size_t a = 0; a < A; ++a) {
      double pre = 0;
      for (std::size_t k = 0; k < H; ++k) {
        pre += score.W_a.value.at({a, k}) * s_prev.at({0, k}) + score.U_a.value.at({a, k}) * h.at({0, i, k});
      }
      e_i1[i] += score.v_a.value.at({0, a}) * std::tanh(pre);
    }
  }
  const double e_max = *std::max_element(e_i1.begin(), e_i1.end());
  double sum = 0;
  for (std::size_t i = 0; i < T_x; ++i) sum += std::exp(e_i1[i] - e_max);
  for (std::size_t i = 0; i < T_x; ++i) {
    // (10.3)  α_i1 = exp(e_i1) / Σ_k exp(e_k1)
    alpha_i1[i] = std::exp(e_i1[i] - e_max) / sum;
    // (10.4)  c_1 = Σ_i α_i1 h_i
    for (std::size_t k = 0; k < H; ++k) c_1[k] += alpha_i1[i] * h.at({0, i, k});
  }
  // [docs:end]
  return {e_i1, alpha_i1, c_1};
}

// Step 1 of the longest test source, recomputed by hand and checked against the decoder's step.
void check_step_1(Seq2seq<double>& attention, const std::vector<sequences::Example>& test_set) {
  const Seq2seqConfig& config = attention.config();
  const std::size_t longest = test_set.size() - 1;
  const Batch one = sequences::batch_of(test_set, {longest});
  const std::size_t T_x = test_set[longest].source.size(), H = config.hidden_size;
  Tape<double> tape;
  const Encoded<double> encoded = attention.encode(tape, one.source, one.source_lengths);
  const DecoderStep<double> step_1 =
      attention.decoder->step(Ids(Shape{1}, {Vocabulary::sos_id}), encoded.state, encoded.memory);
  auto& score = dynamic_cast<AdditiveScore<double>&>(*dynamic_cast<BahdanauDecoder<double>&>(*attention.decoder).score);
  const Step1 hand = step_1_by_hand(score, encoded);
  const std::vector<double>& alpha_i1 = hand.alpha_i1;
  const std::vector<double>& c_1 = hand.c_1;
  double worst_alpha = 0, worst_c = 0;
  for (std::size_t i = 0; i < T_x; ++i) {
    worst_alpha = std::max(worst_alpha, std::abs(alpha_i1[i] - step_1.alpha.value().at({0, i})));
  }
  // the step's output is [s_1; c_1; E y_0]: c_1 is columns H .. 2H - 1
  for (std::size_t k = 0; k < H; ++k) {
    worst_c = std::max(worst_c, std::abs(c_1[k] - step_1.output.value().at({0, H + k})));
  }
  const auto i_max = static_cast<std::size_t>(std::max_element(alpha_i1.begin(), alpha_i1.end()) - alpha_i1.begin());
  std::printf("\nstep 1 of a source of %zu symbols (%s): the largest weight is alpha_%zu,1 = %.4f, on x_%zu = %s\n",
              T_x, sequences::spell(test_set[longest].source).c_str(), i_max + 1, alpha_i1[i_max], i_max + 1,
              sequences::spell({test_set[longest].source[i_max]}).c_str());
  tutorial::check("(10.2)-(10.3) alpha_i1 from W_a, U_a, v_a by hand = the decoder's", worst_alpha, 1e-12);
  tutorial::check("(10.4) c_1 = sum_i alpha_i1 h_i by hand = the decoder's", worst_c, 1e-12);
}

// The greedy outputs of the longest test sources, and the mean weight on the diagonal.
struct Diagonal {
  std::vector<std::size_t> longest_sources;
  std::vector<Hypothesis> outputs;
  double on_diagonal = 0, steps = 0;
};

Diagonal weight_on_diagonal(Seq2seq<double>& attention, const std::vector<sequences::Example>& test_set,
                            std::size_t T_x) {
  // [docs:diagonal]
  // Where the weights fall on the copy task: writing y_j = x_j, the weight on source position j itself, α_jj,
  // over the outputs of the longest test sources (decode with its default beam width 1 is greedy decoding)
  std::vector<std::size_t> longest_sources;
  for (std::size_t k = 0; k < test_set.size(); ++k) {
    if (test_set[k].source.size() == T_x) longest_sources.push_back(k);
  }
  const Batch longest_batch = sequences::batch_of(test_set, longest_sources);
  const std::vector<Hypothesis> outputs = decode(attention, longest_batch.source, longest_batch.source_lengths);
  double on_diagonal = 0, steps = 0;
  for (const Hypothesis& output : outputs) {
    for (std::size_t j = 0; j < std::min(output.attention.size(), T_x); ++j) {
      // (10.5)  ᾱ = the mean of α_jj over every output step j ≤ T_x of every output
      on_diagonal += output.attention[j][j];
      steps += 1;
    }
  }
  // [docs:end]
  return {longest_sources, outputs, on_diagonal, steps};
}

// The weights on the neighbours too; every row of weights sums to 1; decode()'s weights against a teacher-forced
// pass over its outputs; and the heatmap of one output.
void check_diagonal(const tutorial::Options& options, Seq2seq<double>& attention,
                    const std::vector<sequences::Example>& test_set, std::size_t T_x, const Diagonal& d) {
  const auto& [longest_sources, outputs, on_diagonal, steps] = d;
  Tape<double> tape;
  double before = 0, after = 0;  // the weight on the neighbours, x_{j-1} and x_{j+1}, where they exist
  for (const Hypothesis& output : outputs) {
    for (std::size_t j = 0; j < std::min(output.attention.size(), T_x); ++j) {
      before += j > 0 ? output.attention[j][j - 1] : 0.0;
      after += j + 1 < T_x ? output.attention[j][j + 1] : 0.0;
    }
  }
  std::printf(
      "writing y_j, mean weights over %zu sources of %zu symbols: on x_j itself %.3f, on x_{j-1} %.3f, on "
      "x_{j+1} %.3f\n",
      longest_sources.size(), T_x, on_diagonal / steps, before / steps, after / steps);
  double worst_sum = 0;  // every row of weights is a distribution over the real source positions
  for (const Hypothesis& output : outputs) {
    for (const std::vector<float>& row : output.attention) {
      double row_sum = 0;
      for (const float a : row) row_sum += a;
      worst_sum = std::max(worst_sum, std::abs(row_sum - 1));
    }
  }
  tutorial::check("(10.3) every step's weights sum to 1 over the source", worst_sum, 1e-6);
  // The weights decode() recorded, against a second route: decoding fed back its own outputs ŷ, so a teacher-forced
  // pass with ŷ as the target must give the same weights at every step.
  double worst_forced = 0;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const std::vector<sequences::Example> as_target{{test_set[longest_sources[k]].source, outputs[k].tokens}};
    const std::vector<Variable<double>> alpha = attention.forward(tape, sequences::batch_of(as_target, {0})).alpha;
    for (std::size_t j = 0; j < std::min(alpha.size(), outputs[k].attention.size()); ++j) {
      for (std::size_t i = 0; i < T_x; ++i) {
        worst_forced = std::max(worst_forced, std::abs(outputs[k].attention[j][i] - alpha[j].value().at({0, i})));
      }
    }
  }
  tutorial::check("(10.5) the alpha_jj averaged: decode()'s weights = a teacher-forced pass over its outputs",
                  worst_forced, 1e-6);

  // The heatmap of one of them: source along the columns, output along the rows.
  const Hypothesis& shown = outputs.front();
  std::vector<std::vector<double>> weights;
  for (const std::vector<float>& row : shown.attention) weights.emplace_back(row.begin(), row.end());
  std::vector<std::string> output_tokens = letters(shown.tokens);
  if (shown.finished) output_tokens.push_back("<eos>");
  HeatmapOptions heatmap;
  heatmap.title = "Copying " + std::to_string(T_x) + " symbols: where each output step looks";
  tutorial::write_figure(
      options, "10-copy-attention.svg",
      attention_svg(letters(test_set[longest_sources.front()].source), output_tokens, weights, heatmap));
}

}  // namespace

int main(int argc, char** argv) {
  const tutorial::Options options = tutorial::parse_options(argc, argv, tutorial::Seed::varies);
  std::printf("Chapter 10: attention fixes the bottleneck: chapter 4's experiment with both decoders\n\n");
  tutorial::announce_seed(options);

  // ---- Chapter 4's experiment with both decoders --------------------------------------------------------------------
  const Compared compared = train_both(options);
  print_training(compared);
  exact_match_by_length(options, compared);

  // ---- Inside the attention model -----------------------------------------------------------------------------------
  // In double precision on a copy of its trained weights: step 1 of the longest test source, its scores, weights and
  // context recomputed by hand from W_a, U_a, v_a.
  Seq2seq<double> attention(sequences::model_config(compared.experiment, "bahdanau"));
  sequences::copy_parameters(*compared.models[1], attention);
  attention.eval();
  check_step_1(attention, compared.test_set);

  // ---- Where the weights fall on the copy task ----------------------------------------------------------------------
  const std::size_t T_x = compared.test_set.back().source.size();  // the longest test sources
  const Diagonal diagonal = weight_on_diagonal(attention, compared.test_set, T_x);
  check_diagonal(options, attention, compared.test_set, T_x, diagonal);
  return tutorial::exit_status();
}
