// Chapter 11 — what attention costs (docs/11-attention-costs.md).
//
// Attention gives every output step j its own context c_j, and pays for it: at every step it scores all T_x source
// positions, so a sentence costs T_x × T_y alignment scores where the basic encoder-decoder computes none; and the
// whole model still runs T_x + T_y recurrent steps one after the other, each waiting for the previous state. This
// program measures both. It trains a Seq2seq<float> (GRU, H = 64, E = 32, batch 32, T_y = 12 decoder steps) with the
// vanilla, Bahdanau and Luong-general decoders for a few Adam steps at source lengths T_x = 8 … 128, counts the score
// evaluations of each step through a counting wrapper around the decoder's score function (checked against T_x·T_y·B
// and against the shapes of the recorded attention weights), and times each step twice: by the wall clock
// (std::chrono::steady_clock) and by the processor time the program used (std::clock), which, unlike the wall clock,
// leaves out the time spent waiting while other programs had the processor. The processor times are drawn against T_x.
// --small: T_x = 8 and 16, 2 steps each; every check still runs. Deterministic except the lines "time: ...".
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/seq2seq.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"
#include "plot/svg.hpp"
#include "precision/bfloat16.hpp"
#include "tutorials/common.hpp"

using namespace attend;            // Tensor, Tape, Variable, Rng, and nn::, models::, data::, plot::
using namespace attend::tutorial;  // this folder's helpers (common.hpp)

namespace {

// [docs:counting-score]
// A score function that counts its evaluations: it hands every call to the decoder's own score function and adds up
// the entries of the e it returns, one e_ij per sentence and source position i at each decoder step j.
template <class T>
class CountingScore : public models::Score<T> {
 public:
  std::size_t evaluations = 0;

  explicit CountingScore(std::unique_ptr<models::Score<T>> inner) : inner_(std::move(inner)) {}
  using models::Score<T>::score;
  models::Keys<T> keys(const Variable<T>& annotations) override { return inner_->keys(annotations); }
  Variable<T> score(const Variable<T>& query, const models::Keys<T>& keys) override {
    Variable<T> e_ij = inner_->score(query, keys);  // (B, T_x): this step's scores of every sentence
    evaluations += e_ij.shape()[0] * e_ij.shape()[1];
    return e_ij;
  }
  models::ScoreKind kind() const override { return inner_->kind(); }
  // the wrapped score's parameters, under their own names: the optimizer sees the same model
  void visit(nn::ModuleVisitor<T>& v) override { inner_->visit(v); }

 private:
  std::unique_ptr<models::Score<T>> inner_;
};

// Puts a CountingScore around the decoder's score function; nullptr for the vanilla decoder, which has none.
CountingScore<float>* count_scores(models::Seq2seq<float>& model) {
  std::unique_ptr<models::Score<float>>* slot = nullptr;
  if (auto* bahdanau = dynamic_cast<models::BahdanauDecoder<float>*>(model.decoder.get())) slot = &bahdanau->score;
  if (auto* luong = dynamic_cast<models::LuongDecoder<float>*>(model.decoder.get())) slot = &luong->score;
  if (slot == nullptr) return nullptr;
  auto counting = std::make_unique<CountingScore<float>>(std::move(*slot));
  CountingScore<float>* counter = counting.get();
  *slot = std::move(counting);
  return counter;
}
// [docs:end]

// [docs:trainer]
// One model under training: the Seq2seq, the counter around its score function (nullptr for vanilla), its optimizer
// and chapter 3's training step on one tape.
struct Timed {
  models::Seq2seq<float> model;
  CountingScore<float>* counter;
  nn::Adam<float> adam;
  nn::OneTape<float> one_tape;  // nn::ThreadShards<float>(threads, seed) would cut the batch over threads (below)
  nn::Trainer<float> trainer;   // no clipping: the step is forward, backward, Adam

  explicit Timed(const models::Seq2seqConfig& config)
      : model(config), counter(count_scores(model)), adam(model.parameters(), {1e-3}), trainer(adam, one_tape) {}

  // One training step — forward with teacher forcing and the loss, backward through all T_x + T_y recurrent steps,
  // Adam — and the seconds it took: {by the wall clock, of processor time}.
  std::pair<double, double> step(const models::Batch& batch, double& loss_value) {
    if (counter != nullptr) counter->evaluations = 0;
    const auto loss = [&](Tape<float>& tape, std::size_t, std::size_t) {
      return nn::ShardLoss<float>{model.loss(tape, batch)};
    };
    const auto wall_start = std::chrono::steady_clock::now();
    const std::clock_t processor_start = std::clock();
    loss_value = trainer.step(batch.size(), loss).loss;
    const std::clock_t processor_stop = std::clock();
    const auto wall_stop = std::chrono::steady_clock::now();
    return {std::chrono::duration<double>(wall_stop - wall_start).count(),
            static_cast<double>(processor_stop - processor_start) / CLOCKS_PER_SEC};
  }
};
// [docs:end]

// B random sentences of T_x source words, each with a target of T_y - 1 random words: make_batch appends <eos>, so the
// decoder takes T_y steps. Ids 0..3 are <pad> <sos> <eos> <unk>; the words are 4..V-1.
models::Batch random_batch(std::size_t B, std::size_t T_x, std::size_t T_y, std::size_t V, Rng& rng) {
  const auto word = [&] { return static_cast<std::int64_t>(4 + rng.next() % (V - 4)); };
  std::vector<std::vector<std::int64_t>> sources(B), targets(B);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t i = 0; i < T_x; ++i) sources[b].push_back(word());
    for (std::size_t j = 0; j + 1 < T_y; ++j) targets[b].push_back(word());
  }
  return models::make_batch(sources, targets);
}

// What one model did at one source length.
struct Measured {
  double wall_ms = 0;                 // the fastest of the timed steps (wall clock): the least disturbed by other work
  double processor_ms = 0;            // the fastest of the timed steps in processor time
  std::size_t scores_per_step = 0;    // counted by the CountingScore during the last training step
  std::size_t scores_from_alpha = 0;  // Σ_j (size of α_j) over the α_j that forward() records
  std::size_t sequential_steps = 0;   // encoder states + decoder steps, read from the tensors' shapes
  double loss = 0;                    // after the last step (deterministic: the same on every run)
};

// The chapter's settings; --small measures two source lengths with one timed step.
struct Settings {
  std::size_t B, T_y, H, E, V;              // sentences per batch, decoder steps, GRU size, embedding size, words
  std::vector<std::size_t> source_lengths;  // the T_x measured
  std::size_t steps;                        // the first step warms up, the others are timed
  std::vector<std::string> decoders;
};

// The three models trained side by side on one batch of sources of length T_x: their fastest step, the scores their
// score functions computed, and a second route to the same counts from the shapes of what forward() records.
std::vector<Measured> measure_at(const Settings& settings, std::size_t T_x) {
  const auto& [B, T_y, H, E, V, source_lengths, steps, decoders] = settings;
  std::vector<Measured> results(decoders.size());
  Rng data_rng(T_x);  // the three models train on the same batch
  const models::Batch batch = random_batch(B, T_x, T_y, V, data_rng);
  // [docs:step]
  std::vector<std::unique_ptr<Timed>> trainers;
  for (const std::string& name : decoders) {
    models::Seq2seqConfig config;
    config.source_vocab_size = V;
    config.target_vocab_size = V;
    config.cell = nn::CellKind::gru;
    config.hidden_size = H;
    config.embedding_dim = E;
    config.set_decoder(name);
    config.seed = 11;
    trainers.push_back(std::make_unique<Timed>(config));
  }
  // the models take turns, one step each, so that a change in the machine's load falls on all three alike
  std::vector<std::vector<double>> wall(decoders.size()), processor(decoders.size());
  for (std::size_t step = 0; step < steps; ++step) {
    for (std::size_t d = 0; d < decoders.size(); ++d) {
      const auto [wall_seconds, processor_seconds] = trainers[d]->step(batch, results[d].loss);
      if (step == 0) continue;  // the first step warms up (allocations, caches)
      wall[d].push_back(wall_seconds);
      processor[d].push_back(processor_seconds);
    }
  }
  // [docs:end]
  for (std::size_t d = 0; d < decoders.size(); ++d) {
    Measured& m = results[d];
    models::Seq2seq<float>& model = trainers[d]->model;
    Tape<float>& tape = trainers[d]->one_tape.tape();
    m.wall_ms = 1000 * *std::min_element(wall[d].begin(), wall[d].end());
    m.processor_ms = 1000 * *std::min_element(processor[d].begin(), processor[d].end());
    m.scores_per_step = trainers[d]->counter != nullptr ? trainers[d]->counter->evaluations : 0;

    // the second route: the shapes of what forward() records, on the same batch
    tape.clear();
    const models::TeacherForced<float> forced = model.forward(tape, batch);
    for (const Variable<float>& alpha_j : forced.alpha) {
      m.scores_from_alpha += alpha_j.shape()[0] * alpha_j.shape()[1];  // α_j: (B, T_x)
    }
    const models::Encoded<float> encoded = model.encode(tape, batch.source, batch.source_lengths);
    // h_1..h_Tx: one encoder step each; then one decoder step per logits row
    m.sequential_steps = encoded.memory.annotations.shape()[1] + forced.logits.shape()[1];
  }
  return results;
}

// (11.1)-(11.2): what the counts must be, against what was counted.
void check_counts(const Settings& settings, const std::vector<std::vector<Measured>>& results) {
  const auto& [B, T_y, H, E, V, source_lengths, steps, decoders] = settings;
  // [docs:counts]
  std::printf("%5s %5s %18s %28s\n", "T_x", "T_y", "sequential steps", "score evaluations per step");
  std::printf("%5s %5s %18s %28s\n", "", "", "n = T_x + T_y", "(attention) T_x·T_y·B");
  double worst_count = 0, worst_alpha = 0, worst_sequential = 0;
  for (std::size_t k = 0; k < source_lengths.size(); ++k) {
    const std::size_t T_x = source_lengths[k];
    // (11.1)  the alignment scores of one training step: e_ij for i = 1..T_x, j = 1..T_y, for each of B sentences
    const std::size_t N_scores = T_x * T_y * B;
    // (11.2)  the recurrent steps that must run one after the other: T_x encoder steps, then T_y decoder steps
    const std::size_t n = T_x + T_y;
    std::printf("%5zu %5zu %18zu %28zu\n", T_x, T_y, n, N_scores);
    for (std::size_t d = 0; d < decoders.size(); ++d) {
      const Measured& m = results[k][d];
      const double expected = decoders[d] == "vanilla" ? 0.0 : static_cast<double>(N_scores);
      worst_count = std::max(worst_count, std::abs(static_cast<double>(m.scores_per_step) - expected));
      worst_alpha = std::max(worst_alpha, std::abs(static_cast<double>(m.scores_from_alpha) - expected));
      worst_sequential = std::max(worst_sequential, std::abs(static_cast<double>(m.sequential_steps) - n));
    }
  }
  // [docs:end]
  std::printf("\n");
  tutorial::check("(11.1) scores counted by the score function vs T_x·T_y·B (vanilla: 0)", worst_count, 0);
  tutorial::check("(11.1) scores from the shapes of the recorded alpha_j vs T_x·T_y·B", worst_alpha, 0);
  tutorial::check("(11.2) sequential steps from the shapes of h_i and the logits vs T_x + T_y", worst_sequential, 0);
}

// The loss after the last step of each model: deterministic, unlike the times.
void print_losses(const Settings& settings, const std::vector<std::vector<Measured>>& results) {
  const auto& [B, T_y, H, E, V, source_lengths, steps, decoders] = settings;
  std::printf("\nloss after %zu steps (the same numbers on every run):\n%5s", steps, "T_x");
  for (const auto& name : decoders) std::printf(" %14s", name.c_str());
  std::printf("\n");
  for (std::size_t k = 0; k < source_lengths.size(); ++k) {
    std::printf("%5zu", source_lengths[k]);
    for (const Measured& m : results[k]) std::printf(" %14.4f", m.loss);
    std::printf("\n");
  }
}

// The milliseconds per step of each model and source length, and how the processor time grows with the source.
void print_times(const Settings& settings, const std::vector<std::vector<Measured>>& results) {
  const auto& [B, T_y, H, E, V, source_lengths, steps, decoders] = settings;
  for (const bool by_processor : {false, true}) {
    std::printf("\ntime: milliseconds per training step, %s, fastest of %zu timed steps (differ from run to run)\n",
                by_processor ? "processor time" : "wall clock", steps - 1);
    std::printf("time: %5s", "T_x");
    for (const auto& name : decoders) std::printf(" %14s", name.c_str());
    std::printf("\n");
    for (std::size_t k = 0; k < source_lengths.size(); ++k) {
      std::printf("time: %5zu", source_lengths[k]);
      for (const Measured& m : results[k]) std::printf(" %14.2f", by_processor ? m.processor_ms : m.wall_ms);
      std::printf("\n");
    }
  }
  // how the processor time grows with the source: the least-squares line t ≈ t_0 + b·T_x of each model; b_vanilla is
  // about one encoder step (forward and backward), b_attention - b_vanilla the T_y scores and weights per source word
  std::printf("time: slope b of t ≈ t_0 + b·T_x, processor time, ms per source word:");
  double mean_x = 0;
  for (const std::size_t T_x : source_lengths) {
    mean_x += static_cast<double>(T_x) / static_cast<double>(source_lengths.size());
  }
  for (std::size_t d = 0; d < decoders.size(); ++d) {
    double mean_t = 0, covariance = 0, variance = 0;
    for (std::size_t k = 0; k < source_lengths.size(); ++k) {
      mean_t += results[k][d].processor_ms / static_cast<double>(source_lengths.size());
    }
    for (std::size_t k = 0; k < source_lengths.size(); ++k) {
      const double dx = static_cast<double>(source_lengths[k]) - mean_x;
      covariance += dx * (results[k][d].processor_ms - mean_t);
      variance += dx * dx;
    }
    std::printf(" %s %.3f", decoders[d].c_str(), covariance / variance);
  }
  std::printf("\n");
}

// (11.3) at the longest source, and a check of the ratios' sanity.
void ratios(const Settings& settings, const std::vector<std::vector<Measured>>& results) {
  const auto& [B, T_y, H, E, V, source_lengths, steps, decoders] = settings;
  // [docs:ratio]
  // (11.3)  r = t_attention / t_vanilla at the longest source
  const std::vector<Measured>& longest = results.back();
  double bad_ratios = 0;
  std::printf("time: attention / vanilla at T_x = %zu:", source_lengths.back());
  for (std::size_t d = 1; d < decoders.size(); ++d) {
    const double r_wall = longest[d].wall_ms / longest[0].wall_ms;
    const double r_processor = longest[d].processor_ms / longest[0].processor_ms;
    std::printf(" %s %.2f (processor %.2f)", decoders[d].c_str(), r_wall, r_processor);
    for (const double r : {r_wall, r_processor}) {
      if (!(std::isfinite(r) && r > 0)) bad_ratios += 1;
    }
  }
  std::printf("\n");
  // [docs:end]
  // times vary from run to run and machine to machine: only their sanity is checked, never their size
  tutorial::check("(11.3) ratios attention/vanilla that are not finite and > 0 (count)", bad_ratios, 0);
}

// The processor time per step against the source length, one curve per model.
void draw_step_time(const tutorial::Options& options, const Settings& settings,
                    const std::vector<std::vector<Measured>>& results) {
  const auto& [B, T_y, H, E, V, source_lengths, steps, decoders] = settings;
  // [docs:figure]
  std::vector<plot::Series> curves;
  for (std::size_t d = 0; d < decoders.size(); ++d) {
    plot::Series series{decoders[d], {}, {}};
    for (std::size_t k = 0; k < source_lengths.size(); ++k) {
      series.x.push_back(static_cast<double>(source_lengths[k]));
      series.y.push_back(results[k][d].processor_ms);
    }
    curves.push_back(series);
  }
  plot::LineChartOptions chart;
  chart.title = "Processor time per training step (B = 32, T_y = 12, GRU, H = 64)";
  chart.x_label = "source length T_x";
  chart.y_label = "milliseconds of processor time per training step";
  chart.y_min = 0;
  tutorial::write_figure(options, "11-step-time.svg", plot::line_chart_svg(curves, chart));
  // [docs:end]
}

}  // namespace

// Where this leads: self-attention over one sequence of n = 4 positions, with the tape's ops, and by hand.
static void self_attention() {
  std::printf("\nself-attention over n = 4 positions (d_model = 3, d_k = d_v = 2)\n");
  // [docs:self-attention]
  const std::size_t n = 4, d_model = 3, d_k = 2, d_v = 2;
  Rng sa_rng(11);
  Tape<double> sa;
  Variable<double> X = sa.constant(sa_rng.normal_tensor<double>({n, d_model}, 0, 1));
  Variable<double> W_Q = sa.constant(sa_rng.normal_tensor<double>({d_model, d_k}, 0, 1));
  Variable<double> W_K = sa.constant(sa_rng.normal_tensor<double>({d_model, d_k}, 0, 1));
  Variable<double> W_V = sa.constant(sa_rng.normal_tensor<double>({d_model, d_v}, 0, 1));
  // (11.4)  Q = X W_Q,  K = X W_K,  V = X W_V
  Variable<double> Q = matmul(X, W_Q), K = matmul(X, W_K), V = matmul(X, W_V);
  // (11.5)  A = softmax(Q Kᵀ / √d_k), row by row
  Variable<double> A = softmax(matmul(Q, transpose(K)) * (1.0 / std::sqrt(static_cast<double>(d_k))), -1);
  // (11.6)  Z = A V
  Variable<double> Z = matmul(A, V);
  // [docs:end]
  // the same by hand: A_pr = exp(q_p · k_r / √d_k) / Σ_u exp(q_p · k_u / √d_k), z_p = Σ_r A_pr v_r
  auto at = [](const Variable<double>& m, std::size_t row, std::size_t column) {
    return m.value().data()[row * m.shape()[1] + column];
  };
  double worst_A = 0, worst_Z = 0;
  for (std::size_t p = 0; p < n; ++p) {
    std::vector<double> e(n);
    double total = 0;
    for (std::size_t r = 0; r < n; ++r) {
      double dot = 0;
      for (std::size_t k = 0; k < d_k; ++k) {
        double q_pk = 0, k_rk = 0;
        for (std::size_t m = 0; m < d_model; ++m) {
          q_pk += at(X, p, m) * at(W_Q, m, k);
          k_rk += at(X, r, m) * at(W_K, m, k);
        }
        dot += q_pk * k_rk;
      }
      e[r] = std::exp(dot / std::sqrt(static_cast<double>(d_k)));
      total += e[r];
    }
    std::printf("  A_%zu. =", p + 1);
    for (std::size_t r = 0; r < n; ++r) {
      worst_A = std::max(worst_A, std::abs(e[r] / total - at(A, p, r)));
      std::printf(" %6.3f", at(A, p, r));
    }
    std::printf("\n");
    for (std::size_t c = 0; c < d_v; ++c) {
      double z = 0;
      for (std::size_t r = 0; r < n; ++r) {
        double v_rc = 0;
        for (std::size_t m = 0; m < d_model; ++m) v_rc += at(X, r, m) * at(W_V, m, c);
        z += e[r] / total * v_rc;
      }
      worst_Z = std::max(worst_Z, std::abs(z - at(Z, p, c)));
    }
  }
  std::printf("  scores computed: n² = %zu, in one step (no recurrence)\n", n * n);
  tutorial::check("(11.4)-(11.5) A = softmax(Q K^T / sqrt(d_k)) by hand = by the tape's ops", worst_A, 1e-12);
  tutorial::check("(11.6) Z = A V by hand = by the tape's ops", worst_Z, 1e-12);
}

// What precision attention needs: bfloat16 numbers, made here by rounding float32 ones (r below), so that every
// machine prints the same lines; `attend train --precision bf16` runs the same arithmetic on the CPU's own
// instructions.
namespace precision {

// (11.7)  r(x): x rounded to the nearest bfloat16, ties to even
float r(float x) { return bf16::to_float(bf16::from_float(x)); }

// (11.8)  a product whose operands are rounded to bfloat16 and whose sums are float32, against the exact product of the
// float operands: the worst error as a fraction of Σ_l |a_il||b_lj|, and the worst error / bound of (11.8)
void product_errors(std::size_t k, Rng& rng, double& worst_fraction, double& worst_over_bound) {
  const std::size_t m = 8, n = 8;
  const Tensor<float> A = rng.normal_tensor<float>({m, k}, 0, 1), B = rng.normal_tensor<float>({k, n}, 0, 1);
  Tensor<float> A_r = A, B_r = B;
  for (std::size_t i = 0; i < A_r.size(); ++i) A_r.data()[i] = r(A_r.data()[i]);
  for (std::size_t i = 0; i < B_r.size(); ++i) B_r.data()[i] = r(B_r.data()[i]);
  Tape<float> tape;
  const Tensor<float> C_hat = matmul(tape.constant(A_r), tape.constant(B_r)).value();  // float32 sums
  worst_fraction = worst_over_bound = 0;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (std::size_t l = 0; l < k; ++l) {
        exact += double(A.at({i, l})) * double(B.at({l, j}));
        magnitude += std::fabs(double(A.at({i, l})) * double(B.at({l, j})));
      }
      const double error = std::fabs(double(C_hat.at({i, j})) - exact);
      worst_fraction = std::max(worst_fraction, error / magnitude);
      worst_over_bound =
          std::max(worst_over_bound, error / ((std::ldexp(1.0, -7) + k * std::ldexp(1.0, -23)) * magnitude));
    }
  }
}

// (11.9)  a sum kept in bfloat16, s ← r(s + x), of `terms` values x from `draw`; and the float32 sum
std::pair<double, double> sums(std::size_t terms, const std::function<float()>& draw) {
  float kept = 0, full = 0;
  for (std::size_t i = 0; i < terms; ++i) {
    const float x = draw();
    kept = r(kept + x);
    full += x;
  }
  return {kept, full};
}

}  // namespace precision

static void what_precision_needs() {
  using namespace precision;
  std::printf("\nbfloat16: float32's 8 exponent bits, 8 significant bits of its 24\n");
  // [docs:precision]
  Rng rng(17);
  // (11.7)  |r(x) − x| ≤ 2⁻⁸ |x|: over numbers of every size
  double worst_rounding = 0;
  for (int i = 0; i < 100000; ++i) {
    const float x = static_cast<float>(rng.normal() * std::exp(rng.uniform(-30.0, 30.0)));
    worst_rounding = std::max(worst_rounding, std::fabs(double(r(x)) - x) / std::fabs(double(x)));
  }
  std::printf("  rounding: worst |r(x) - x| / |x| = %.6f = 2^%.3f\n", worst_rounding, std::log2(worst_rounding));
  // (11.8)  products with float32 sums: the error stays a fixed fraction of Σ|a||b| however long the sum
  double worst_over_bound = 0;
  for (const std::size_t k : {16, 256, 4096}) {
    double fraction = 0, over_bound = 0;
    product_errors(k, rng, fraction, over_bound);
    worst_over_bound = std::max(worst_over_bound, over_bound);
    std::printf("  products, k = %4zu: worst error / sum|a||b| = %.5f\n", k, fraction);
  }
  // (11.9)  sums kept in bfloat16 stop growing: 1 + 1 + … stalls at 256, where the spacing of bfloat16 numbers is 2
  const auto [ones, ones_exact] = sums(1000, [] { return 1.0f; });
  std::printf("  sum of 1000 ones kept in bfloat16: %.0f (float32: %.0f)\n", ones, ones_exact);
  // a softmax's denominator over T_x = 128 source words, and a loss's sum over 64 · 12 target tokens
  for (const std::size_t terms : {std::size_t{128}, std::size_t{768}}) {
    const auto [kept, full] = sums(terms, [&rng] { return static_cast<float>(std::exp(rng.normal())); });
    std::printf("  sum of %3zu terms e^z kept in bfloat16: relative error %.4f\n", terms,
                std::fabs(kept - full) / full);
  }
  // (11.10)  an update kept in bfloat16 is lost when |Δ| < 2⁻⁹ |w|: weights as initialised (|w| < 1/√64), one
  // Adam step of size η
  std::size_t violations = 0;
  for (const double eta : {1e-3, 1e-4, 1e-5}) {
    std::size_t lost = 0;
    const std::size_t count = 100000;
    for (std::size_t i = 0; i < count; ++i) {
      const float w = r(static_cast<float>(rng.uniform(-0.125, 0.125)));
      const float delta = static_cast<float>(eta);
      if (r(w - delta) == w) ++lost;
      if (std::fabs(delta) < std::ldexp(std::fabs(w), -9) && r(w - delta) != w) ++violations;
    }
    std::printf("  an Adam step of %.0e on weights kept in bfloat16: %5.1f%% of the updates lost\n", eta,
                100.0 * double(lost) / double(count));
  }
  // [docs:end]
  tutorial::check("(11.7) |r(x) - x| / |x| beyond 2^-8", std::max(0.0, worst_rounding - std::ldexp(1.0, -8)), 0);
  tutorial::check("(11.8) bfloat16 products' error / (2^-7 + k 2^-23) sum|a||b| beyond 1",
                  std::max(0.0, worst_over_bound - 1), 0);
  tutorial::check("(11.9) a bfloat16 sum of 1000 ones vs 256", std::fabs(ones - 256.0), 0);
  tutorial::check("(11.10) updates with |delta| < 2^-9 |w| that were not lost (count)", double(violations), 0);
}

int main(int argc, char** argv) {
  const tutorial::Options options = tutorial::parse_options(argc, argv);
  Settings settings{32, 12, 64, 32, 24, {}, 0, {"vanilla", "bahdanau", "luong-general"}};
  settings.source_lengths =
      options.small ? std::vector<std::size_t>{8, 16} : std::vector<std::size_t>{8, 16, 32, 64, 128};
  settings.steps = options.small ? 2 : 21;
  std::printf(
      "Chapter 11: what attention costs. GRU, H = %zu, E = %zu, B = %zu, T_y = %zu decoder steps,\n"
      "%zu Adam steps per model and source length\n\n",
      settings.H, settings.E, settings.B, settings.T_y, settings.steps);

  // ---- Each model, trained side by side at each source length -------------------------------------------------------
  std::vector<std::vector<Measured>> results;  // results[k][d]: source_lengths[k], decoders[d]
  for (const std::size_t T_x : settings.source_lengths) results.push_back(measure_at(settings, T_x));

  // ---- What grows with T_x: scores (11.1), sequential steps (11.2), time (11.3) -------------------------------------
  check_counts(settings, results);
  print_losses(settings, results);
  print_times(settings, results);
  ratios(settings, results);
  draw_step_time(options, settings, results);

  // ---- Where this leads: self-attention -----------------------------------------------------------------------------
  self_attention();

  // ---- What precision attention needs
  // ----------------------------------------------------------------------------------
  what_precision_needs();
  return tutorial::exit_status();
}
