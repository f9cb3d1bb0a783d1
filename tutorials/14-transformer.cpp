// Chapter 14 — the Transformer (docs/14-transformer.md).
//
// Chapter 11 ended with self-attention's three equations computed by hand. This program takes them to Vaswani et al.'s
// Transformer and checks each step against the library (nn/transformer.hpp, models/transformer.hpp), in double:
//   1. why the scores are divided by √d_k: the variance of q·k measured against d_k, and what it does to the softmax;
//   2. multi-head attention by hand, loop by loop, against nn::MultiHeadAttention (PyTorch's weight layout);
//   3. positions: the sinusoids by their formula, and the permutation test — without positions an encoder layer
//      cannot tell the order of its inputs, with them it can;
//   4. masks: a future target token changes no earlier output; a padded source position changes no output;
//   5. residuals and layer normalisation, post-norm and pre-norm, by hand against the encoder layer; the gradient
//      norms per layer at initialisation, and training with and without warm-up;
//   6. the cost: the longest chain of operations (sequential steps) against the length, and the time per training
//      step against the source length, for the Bahdanau RNN and the Transformer;
//   7. the dates task: a small Transformer trained on it, its exact match, and its cross-attention per layer and head.
// --small: fewer samples, lengths and steps; every check still runs. Deterministic except the lines "time: ...".
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/dates.hpp"
#include "data/vocabulary.hpp"
#include "models/seq2seq.hpp"
#include "models/transformer.hpp"
#include "nn/optim.hpp"
#include "nn/recurrent.hpp"
#include "nn/trainer.hpp"
#include "nn/transformer.hpp"
#include "plot/svg.hpp"
#include "tutorials/common.hpp"

using namespace attend;            // Tensor, Tape, Variable, Rng, and nn::, models::, data::, plot::
using namespace attend::tutorial;  // this folder's helpers (common.hpp)
namespace dates = attend::data::dates;

namespace {

using Matrix = std::vector<std::vector<double>>;

// The largest |a − b| over two tensors of one shape.
double worst(const Tensor<double>& a, const Tensor<double>& b) {
  double w = 0;
  for (std::size_t k = 0; k < a.size(); ++k) w = std::max(w, std::abs(a.data()[k] - b.data()[k]));
  return w;
}

// softmax over a row: exp(e_r − max) / Σ_u exp(e_u − max)
std::vector<double> softmax_row(const std::vector<double>& e) {
  const double top = *std::max_element(e.begin(), e.end());
  std::vector<double> a(e.size());
  double sum = 0;
  for (std::size_t r = 0; r < e.size(); ++r) sum += a[r] = std::exp(e[r] - top);
  for (double& x : a) x /= sum;
  return a;
}

nn::TransformerLayerConfig layer_config(std::size_t D, std::size_t heads, std::size_t ff, bool norm_first) {
  nn::TransformerLayerConfig config;
  config.d_model = D;
  config.heads = heads;
  config.ff = ff;
  config.dropout = 0.0;
  config.norm_first = norm_first;
  return config;
}

// ---- 1. the scale -------------------------------------------------------------------------------------------------

void why_scale(bool small) {
  std::printf("1. Why divide by sqrt(d_k)\n\n");
  const std::size_t samples = small ? 2000 : 20000;
  const std::vector<std::size_t> sizes{4, 16, 64, 256, 1024};
  std::printf(
      "q, k with independent N(0, 1) entries, %zu pairs each; softmax over 10 keys, mean of the largest weight\n",
      samples);
  std::printf("%6s %12s %14s %18s %18s\n", "d_k", "var(q.k)", "var(q.k)/d_k", "max alpha, q.k", "max alpha, /sqrt");
  double worst_ratio = 0;
  std::vector<double> unscaled_top, scaled_top;
  for (const std::size_t d_k : sizes) {
    Rng rng(d_k);
    // [docs:variance]
    // (14.1)  e = q·k / √d_k: q·k is a sum of d_k products of unit variance, so var(q·k) = d_k
    double sum = 0, sum_sq = 0;
    for (std::size_t n = 0; n < samples; ++n) {
      const Tensor<double> q = rng.normal_tensor<double>({d_k}, 0, 1), k = rng.normal_tensor<double>({d_k}, 0, 1);
      double dot = 0;
      for (std::size_t c = 0; c < d_k; ++c) dot += q.data()[c] * k.data()[c];
      sum += dot;
      sum_sq += dot * dot;
    }
    const double mean = sum / double(samples), variance = sum_sq / double(samples) - mean * mean;
    // [docs:end]
    // one query against 10 keys: how peaked is the softmax of the raw and of the scaled scores?
    double top_raw = 0, top_scaled = 0;
    const std::size_t trials = small ? 100 : 1000;
    for (std::size_t n = 0; n < trials; ++n) {
      const Tensor<double> q = rng.normal_tensor<double>({d_k}, 0, 1),
                           keys = rng.normal_tensor<double>({10, d_k}, 0, 1);
      std::vector<double> e(10), e_scaled(10);
      for (std::size_t j = 0; j < 10; ++j) {
        double dot = 0;
        for (std::size_t c = 0; c < d_k; ++c) dot += q.data()[c] * keys.data()[j * d_k + c];
        e[j] = dot;
        e_scaled[j] = dot / std::sqrt(double(d_k));
      }
      const std::vector<double> a = softmax_row(e), a_scaled = softmax_row(e_scaled);
      top_raw += *std::max_element(a.begin(), a.end()) / double(trials);
      top_scaled += *std::max_element(a_scaled.begin(), a_scaled.end()) / double(trials);
    }
    std::printf("%6zu %12.2f %14.3f %18.3f %18.3f\n", d_k, variance, variance / double(d_k), top_raw, top_scaled);
    worst_ratio = std::max(worst_ratio, std::abs(variance / double(d_k) - 1));
    unscaled_top.push_back(top_raw);
    scaled_top.push_back(top_scaled);
  }
  std::printf("\n");
  tutorial::check("(14.1) var(q.k) / d_k - 1 over d_k = 4 ... 1024", worst_ratio, small ? 0.25 : 0.1);
  double spread = 0;  // the scaled softmax's peak does not drift with d_k
  for (const double t : scaled_top) spread = std::max(spread, std::abs(t - scaled_top.front()));
  tutorial::check("(14.1) mean largest weight of the scaled softmax: spread over d_k", spread, 0.1);
  tutorial::check("(14.1) the raw scores' softmax at d_k = 1024 is near one-hot: 1 - mean largest weight",
                  1 - unscaled_top.back(), 0.15);
}

// ---- 2. multi-head attention by hand ------------------------------------------------------------------------------

void multi_head_by_hand() {
  std::printf("\n2. Multi-head attention by hand\n\n");
  const std::size_t T = 5, D = 8, H = 2, d_k = D / H;
  Rng rng(2);
  nn::MultiHeadAttention<double> attention(D, H, rng);
  for (double& b : attention.b_in.value.flat()) b = 0.1 * rng.normal();  // PyTorch starts them at 0: make them count
  const Tensor<double> X = rng.normal_tensor<double>({1, T, D}, 0, 1);
  Tape<double> tape;
  Tensor<double> weights;
  const Variable<double> y = attention.forward(tape.constant(X), {}, &weights);  // (1, T, D); weights (1, H, T, T)

  // [docs:by-hand]
  const Tensor<double>&W_in = attention.W_in.value, &b_in = attention.b_in.value;  // (3D, D), (3D,)
  const Tensor<double>&W_o = attention.out_proj.W.value, &b_o = attention.out_proj.b.value;
  // (14.2)  Q = X W_Qᵀ + b_Q,  K = X W_Kᵀ + b_K,  V = X W_Vᵀ + b_V: rows 0…D−1, D…2D−1, 2D…3D−1 of W_in
  auto project = [&](std::size_t part) {
    Matrix P(T, std::vector<double>(D));
    for (std::size_t t = 0; t < T; ++t) {
      for (std::size_t c = 0; c < D; ++c) {
        double sum = b_in.data()[part * D + c];
        for (std::size_t e = 0; e < D; ++e) sum += X.data()[t * D + e] * W_in.data()[(part * D + c) * D + e];
        P[t][c] = sum;
      }
    }
    return P;
  };
  const Matrix Q = project(0), K = project(1), V = project(2);
  Matrix heads(T, std::vector<double>(D));  // [head_1 … head_H], side by side
  std::vector<Matrix> A(H);
  for (std::size_t h = 0; h < H; ++h) {  // head h reads columns h·d_k … (h+1)·d_k − 1
    for (std::size_t p = 0; p < T; ++p) {
      // (14.3)  A_pr = softmax_r(q_p · k_r / √d_k)
      std::vector<double> e(T);
      for (std::size_t r = 0; r < T; ++r) {
        for (std::size_t c = h * d_k; c < (h + 1) * d_k; ++c) e[r] += Q[p][c] * K[r][c];
        e[r] /= std::sqrt(double(d_k));
      }
      A[h].push_back(softmax_row(e));
      // head_h: z_p = Σ_r A_pr v_r
      for (std::size_t c = h * d_k; c < (h + 1) * d_k; ++c) {
        for (std::size_t r = 0; r < T; ++r) heads[p][c] += A[h][p][r] * V[r][c];
      }
    }
  }
  // (14.4)  MultiHead(X) = [head_1 … head_H] W_Oᵀ + b_O
  Matrix Y(T, std::vector<double>(D));
  for (std::size_t p = 0; p < T; ++p) {
    for (std::size_t o = 0; o < D; ++o) {
      Y[p][o] = b_o.data()[o];
      for (std::size_t c = 0; c < D; ++c) Y[p][o] += heads[p][c] * W_o.data()[o * D + c];
    }
  }
  // [docs:end]
  double worst_y = 0, worst_a = 0;
  for (std::size_t p = 0; p < T; ++p) {
    for (std::size_t o = 0; o < D; ++o) worst_y = std::max(worst_y, std::abs(Y[p][o] - y.value().data()[p * D + o]));
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t r = 0; r < T; ++r) {
        worst_a = std::max(worst_a, std::abs(A[h][p][r] - weights.data()[(h * T + p) * T + r]));
      }
    }
  }
  for (std::size_t h = 0; h < H; ++h) {
    std::printf("head %zu: A (query p down, key q across)\n", h + 1);
    for (std::size_t p = 0; p < T; ++p) std::printf("  %s\n", tutorial::vector_string(A[h][p]).c_str());
  }
  std::printf("\n");
  tutorial::check("(14.3) A of every head by hand = nn::MultiHeadAttention's weights", worst_a, 1e-12);
  tutorial::check("(14.2)-(14.4) MultiHead(X) by hand = nn::MultiHeadAttention", worst_y, 1e-12);
}

// ---- 3. positions -------------------------------------------------------------------------------------------------

void positions(bool small) {
  std::printf("\n3. Positions\n\n");
  const std::size_t T = 6, D = 8;
  // [docs:sinusoids]
  // (14.5)  P[p, 2i] = sin(p / 10000^(2i/D)),  P[p, 2i+1] = cos(p / 10000^(2i/D))
  const Tensor<double> P = nn::sinusoidal_positions<double>(50, D);
  double worst_p = 0;
  for (std::size_t p = 0; p < 50; ++p) {
    for (std::size_t i = 0; 2 * i < D; ++i) {
      const double angle = double(p) / std::pow(10000.0, double(2 * i) / double(D));
      worst_p = std::max(worst_p, std::abs(P.data()[p * D + 2 * i] - std::sin(angle)));
      worst_p = std::max(worst_p, std::abs(P.data()[p * D + 2 * i + 1] - std::cos(angle)));
    }
  }
  // [docs:end]
  tutorial::check("(14.5) nn::sinusoidal_positions = the formula, 50 positions", worst_p, 1e-12);

  // [docs:permutation]
  // The same encoder layer on X and on X with its rows in another order (π = 5 3 1 0 2 4), with and without P added.
  Rng rng(3);
  nn::TransformerEncoderLayer<double> layer(layer_config(D, 2, 16, false), rng);
  const Tensor<double> X = rng.normal_tensor<double>({1, T, D}, 0, 1);
  const std::vector<std::size_t> pi{5, 3, 1, 0, 2, 4};
  Tensor<double> X_pi(Shape{1, T, D}), X_P(Shape{1, T, D}), X_pi_P(Shape{1, T, D});
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t c = 0; c < D; ++c) {
      X_pi.data()[t * D + c] = X.data()[pi[t] * D + c];
      X_P.data()[t * D + c] = X.data()[t * D + c] + P.data()[t * D + c];
      X_pi_P.data()[t * D + c] = X_pi.data()[t * D + c] + P.data()[t * D + c];  // position t holds x_π(t)
    }
  }
  Tape<double> tape;
  const Tensor<double> Y = layer.forward(tape.constant(X)).value(), Y_pi = layer.forward(tape.constant(X_pi)).value();
  const Tensor<double> Y_P = layer.forward(tape.constant(X_P)).value(),
                       Y_pi_P = layer.forward(tape.constant(X_pi_P)).value();
  // without positions: output t of the reordered input is output π(t) of the original (permutation equivariance)
  double worst_without = 0, least_with = 1e300;
  for (std::size_t t = 0; t < T; ++t) {
    double without = 0, with = 0;
    for (std::size_t c = 0; c < D; ++c) {
      without = std::max(without, std::abs(Y_pi.data()[t * D + c] - Y.data()[pi[t] * D + c]));
      with = std::max(with, std::abs(Y_pi_P.data()[t * D + c] - Y_P.data()[pi[t] * D + c]));
    }
    worst_without = std::max(worst_without, without);
    least_with = std::min(least_with, with);
  }
  // [docs:end]
  std::printf("output t of the reordered input against output pi(t) of the original, largest difference per row:\n");
  std::printf("  without positions: %.3g (all rows)\n  with positions:    at least %.3g in every row\n", worst_without,
              least_with);
  tutorial::check("without positions the layer is permutation equivariant: Y(X_pi)[t] = Y(X)[pi(t)]", worst_without,
                  1e-12);
  tutorial::check("with positions no row stays the same: rows within 0.01 (count)", least_with < 0.01 ? 1 : 0, 0);
  (void)small;
}

// ---- 4. masks -----------------------------------------------------------------------------------------------------

void masks() {
  std::printf("\n4. Masks\n\n");
  const std::size_t S = 6, T = 5, D = 8;
  Rng rng(4);
  // [docs:causal]
  // (14.6)  causal: e_pr = −∞ for r > p, so A_pr = 0 — a decoder layer's output at p reads y_1 … y_p only
  nn::TransformerDecoderLayer<double> decoder(layer_config(D, 2, 16, false), rng);
  const Tensor<double> memory = rng.normal_tensor<double>({1, S, D}, 0, 1);
  Tensor<double> y = rng.normal_tensor<double>({1, T, D}, 0, 1);
  Tape<double> tape;
  const Tensor<double> before = decoder.forward(tape.constant(y), tape.constant(memory)).value();
  for (std::size_t c = 0; c < D; ++c) y.data()[(T - 1) * D + c] += 1.0;  // change the last target position only
  const Tensor<double> after = decoder.forward(tape.constant(y), tape.constant(memory)).value();
  // [docs:end]
  double earlier = 0, last = 0;
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t c = 0; c < D; ++c) {
      const double d = std::abs(after.data()[t * D + c] - before.data()[t * D + c]);
      (t + 1 < T ? earlier : last) = std::max(t + 1 < T ? earlier : last, d);
    }
  }
  std::printf("changing target position %zu: outputs 1..%zu move by %.3g, output %zu by %.3g\n", T, T - 1, earlier, T,
              last);
  tutorial::check("(14.6) a later target position changes no earlier output", earlier, 0);

  // padding: the last 2 of 6 source positions are padding; changing them changes no real position's output
  nn::TransformerEncoderLayer<double> encoder(layer_config(D, 2, 16, false), rng);
  Mask keep(Shape{1, S});
  for (std::size_t i = 0; i < S; ++i) keep.data()[i] = i < S - 2 ? 1 : 0;
  Tensor<double> x = rng.normal_tensor<double>({1, S, D}, 0, 1);
  const Tensor<double> x_before = encoder.forward(tape.constant(x), &keep).value();
  for (std::size_t k = (S - 2) * D; k < S * D; ++k) x.data()[k] = 100.0;  // anything at all in the padding
  const Tensor<double> x_after = encoder.forward(tape.constant(x), &keep).value();
  double real = 0;
  for (std::size_t k = 0; k < (S - 2) * D; ++k) real = std::max(real, std::abs(x_after.data()[k] - x_before.data()[k]));
  std::printf("changing the 2 padded source positions: the 4 real outputs move by %.3g\n\n", real);
  tutorial::check("padding: the padded positions change no real position's output", real, 0);
}

// ---- 5. residuals and layer normalisation -------------------------------------------------------------------------

// LN(x) = γ ⊙ (x − μ) / √(σ² + ε) + β over each row
Tensor<double> layer_norm_by_hand(const Tensor<double>& x, const nn::LayerNorm<double>& norm) {
  const std::size_t D = x.shape()[x.rank() - 1];
  Tensor<double> y(x.shape());
  for (std::size_t r = 0; r < x.size() / D; ++r) {
    const double* v = x.data() + r * D;
    double mu = 0, var = 0;
    for (std::size_t c = 0; c < D; ++c) mu += v[c] / double(D);
    for (std::size_t c = 0; c < D; ++c) var += (v[c] - mu) * (v[c] - mu) / double(D);
    for (std::size_t c = 0; c < D; ++c) {
      y.data()[r * D + c] =
          norm.gamma.value.data()[c] * (v[c] - mu) / std::sqrt(var + norm.eps()) + norm.beta.value.data()[c];
    }
  }
  return y;
}

void residuals() {
  std::printf("\n5. Residuals and layer normalisation\n\n");
  const std::size_t T = 5, D = 8;
  for (const bool norm_first : {false, true}) {
    Rng rng(5);
    nn::TransformerEncoderLayer<double> layer(layer_config(D, 2, 16, norm_first), rng);
    for (nn::LayerNorm<double>* norm : {&layer.norm1, &layer.norm2}) {  // γ, β away from 1, 0: make them count
      for (double& g : norm->gamma.value.flat()) g = 1 + 0.2 * rng.normal();
      for (double& b : norm->beta.value.flat()) b = 0.2 * rng.normal();
    }
    const Tensor<double> X = rng.normal_tensor<double>({1, T, D}, 0, 1);
    Tape<double> tape;
    const Variable<double> x = tape.constant(X);
    auto LN1 = [&](const Variable<double>& v) { return tape.constant(layer_norm_by_hand(v.value(), layer.norm1)); };
    auto LN2 = [&](const Variable<double>& v) { return tape.constant(layer_norm_by_hand(v.value(), layer.norm2)); };
    auto FF = [&](const Variable<double>& v) { return layer.linear2(relu(layer.linear1(v))); };
    // [docs:sublayers]
    Variable<double> out;
    if (!norm_first) {
      // (14.7)  post-norm (the paper):  h = LN(x + MultiHead(x)),  y = LN(h + FF(h))
      const Variable<double> h = LN1(x + layer.self_attn.forward(x));
      out = LN2(h + FF(h));
    } else {
      // (14.8)  pre-norm:  h = x + MultiHead(LN(x)),  y = h + FF(LN(h))
      const Variable<double> n1 = LN1(x);
      const Variable<double> h = x + layer.self_attn.forward(n1);
      out = h + FF(LN2(h));
    }
    // [docs:end]
    const Tensor<double> library = layer.forward(x).value();
    tutorial::check(std::string(norm_first ? "(14.8) pre-norm" : "(14.7) post-norm") +
                        " encoder layer by hand (LN by its formula) = nn::TransformerEncoderLayer",
                    worst(out.value(), library), 1e-12);
  }
}

// A batch of the reversal task: sources of 4 … 9 random tokens (ids 4 … V−1), targets the same tokens reversed.
models::Batch reversal_batch(std::size_t B, std::size_t V, Rng& rng) {
  std::vector<std::vector<std::int64_t>> sources(B), targets(B);
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t n = 4 + rng.next() % 6;
    for (std::size_t i = 0; i < n; ++i) sources[b].push_back(static_cast<std::int64_t>(4 + rng.next() % (V - 4)));
    targets[b].assign(sources[b].rbegin(), sources[b].rend());
  }
  return models::make_batch(sources, targets);
}

models::TransformerConfig reversal_config(std::size_t layers, bool norm_first, std::uint64_t seed) {
  models::TransformerConfig config;
  config.source_vocab_size = config.target_vocab_size = 16;
  config.d_model = 64;
  config.heads = 4;
  config.ff = 128;
  config.encoder_layers = config.decoder_layers = layers;
  config.dropout = 0.0;
  config.norm_first = norm_first;
  config.seed = seed;
  return config;
}

// The gradient's norm of each decoder layer's parameters at initialisation, on one batch of the reversal task.
std::vector<double> layer_gradient_norms(std::size_t layers, bool norm_first) {
  models::TransformerModel<float> model(reversal_config(layers, norm_first, 1));
  Rng rng(6);
  const models::Batch batch = reversal_batch(64, 16, rng);
  Tape<float> tape;
  tape.backward(model.loss(tape, batch));
  std::vector<double> norms;
  for (std::size_t l = 0; l < layers; ++l) {
    double sum = 0;
    for (const auto& [name, p] : model.transformer.decoder.layers[l].parameters()) {
      for (const float g : p->grad.flat()) sum += double(g) * double(g);
    }
    norms.push_back(std::sqrt(sum));
  }
  return norms;
}

// Trains a 6+6-layer model on the reversal task with a constant learning rate `peak` or the warm-up schedule to that
// peak; returns the mean loss of the last 20 steps.
double train_reversal(bool norm_first, bool warmup, double peak, std::uint64_t seed, std::size_t steps) {
  models::TransformerModel<float> model(reversal_config(6, norm_first, seed));
  nn::Adam<float> adam(model.parameters(), {peak});
  nn::OneTape<float> one_tape;
  nn::Trainer<float> trainer(adam, one_tape);  // chapter 3's step, without clipping
  // η(s) = peak · min(s/w, √(w/s)) with w = steps/5: the schedule of (14.9). It is made only with warm-up: a schedule
  // sets the optimizer's η to η(1) as soon as it exists.
  const auto w = static_cast<std::int64_t>(steps / 5);
  std::optional<nn::NoamLR> schedule;
  if (warmup) trainer.add_schedule(schedule.emplace(adam, 1, w, peak * std::sqrt(double(w))));
  Rng rng(seed + 100);
  double tail = 0;
  for (std::size_t s = 0; s < steps; ++s) {
    const models::Batch batch = reversal_batch(32, 16, rng);
    const auto loss = [&](Tape<float>& tape, std::size_t, std::size_t) {
      return nn::ShardLoss<float>{model.loss(tape, batch)};
    };
    const float value = trainer.step(batch.size(), loss).loss;
    if (s + 20 >= steps) tail += value / 20.0;
  }
  return tail;
}

// The losses of one kind of run over the seeds, and the count of those that ended below / above a bound.
struct Runs {
  std::vector<double> losses;
  double below(double bound) const {
    return double(std::count_if(losses.begin(), losses.end(), [&](double l) { return l < bound; }));
  }
  double above(double bound) const {
    return double(std::count_if(losses.begin(), losses.end(), [&](double l) { return l > bound; }));
  }
};

// Prints a row of the table for every peak η, norm placement and warm-up, and returns the runs by
// [peak][norm][warm-up].
std::vector<std::vector<std::vector<Runs>>> reversal_table(const std::vector<double>& peaks,
                                                           const std::vector<std::uint64_t>& seeds, std::size_t steps) {
  std::printf("%9s %10s %10s", "peak η", "norm", "warm-up");  // η is two bytes
  for (const std::uint64_t seed : seeds) std::printf("   seed %llu", static_cast<unsigned long long>(seed));
  std::printf("\n");
  std::vector<std::vector<std::vector<Runs>>> runs(peaks.size(),
                                                   std::vector<std::vector<Runs>>(2, std::vector<Runs>(2)));
  for (std::size_t k = 0; k < peaks.size(); ++k) {
    for (const bool norm_first : {false, true}) {
      for (const bool warmup : {false, true}) {
        std::printf("%8.0e %10s %10s", peaks[k], norm_first ? "pre" : "post", warmup ? "yes" : "no");
        for (const std::uint64_t seed : seeds) {
          const double loss = train_reversal(norm_first, warmup, peaks[k], seed, steps);
          runs[k][norm_first][warmup].losses.push_back(loss);
          std::printf(" %9.4f", loss);
        }
        std::printf("\n");
      }
    }
  }
  std::printf("\n");
  return runs;
}

void stability(const tutorial::Options& options) {
  const bool small = options.small;
  std::printf("\nthe gradient's norm per decoder layer at initialisation (6 + 6 layers, D = 64, one batch):\n");
  const std::vector<double> post = layer_gradient_norms(6, false), pre = layer_gradient_norms(6, true);
  std::printf("%8s %12s %12s\n", "layer", "post-norm", "pre-norm");
  for (std::size_t l = 0; l < post.size(); ++l) std::printf("%8zu %12.4f %12.4f\n", l + 1, post[l], pre[l]);
  const std::size_t steps = small ? 40 : 600;
  std::vector<std::uint64_t> seeds = small ? std::vector<std::uint64_t>{1} : std::vector<std::uint64_t>{1, 2, 3};
  for (std::uint64_t& seed : seeds) seed = tutorial::seeded(options, seed);  // --seed S: S + 1, …
  std::printf(
      "\nthe reversal task, 6 + 6 layers, Adam at a constant η or warmed up to it (w = %zu), %zu steps: mean "
      "loss of the last 20\n",
      steps / 5, steps);
  const auto runs = reversal_table({1e-3, 3e-3}, seeds, steps);
  double non_finite = 0;
  for (const auto& by_norm : runs)
    for (const auto& by_warmup : by_norm)
      for (const Runs& r : by_warmup)
        for (const double loss : r.losses) non_finite += std::isfinite(loss) ? 0 : 1;
  tutorial::check("training losses that are not finite (count)", non_finite, 0);
  // what the chapter reads in the tables: post-norm's gradient grows towards the top layer, pre-norm's does not; and
  // (full run) at η = 1e-3 every run learns, at 3e-3 post-norm learns only with warm-up and pre-norm without it too
  tutorial::check("post-norm: top layer's gradient norm / bottom layer's is above 2 (count of failures)",
                  post.back() / post.front() > 2 ? 0 : 1, 0);
  tutorial::check("pre-norm: top layer's gradient norm / bottom layer's is below 1.5 (count of failures)",
                  pre.back() / pre.front() < 1.5 ? 0 : 1, 0);
  if (small) return;
  const double n = double(seeds.size());
  double unlearned = 0;  // runs that should end below a loss of 0.5 and did not
  for (const bool norm_first : {false, true}) {
    for (const bool warmup : {false, true}) unlearned += n - runs[0][norm_first][warmup].below(0.5);
    unlearned += n - runs[1][norm_first][true].below(0.5);
  }
  tutorial::check("η = 1e-3, and 3e-3 with warm-up: every run ends below a loss of 0.5 (count of failures)", unlearned,
                  0);
  tutorial::check("η = 3e-3 without warm-up: every post-norm run stays above a loss of 1 (count of failures)",
                  n - runs[1][false][false].above(1), 0);
  tutorial::check("η = 3e-3 without warm-up: every pre-norm run ends below a loss of 0.5 (count of failures)",
                  n - runs[1][true][false].below(0.5), 0);
}

// ---- 6. the cost --------------------------------------------------------------------------------------------------

// The longest chain of operations that ends at node `v` of the tape: each op waits for its inputs, so this is the
// number of operations that must run one after another to compute v, however many processors there are.
std::size_t chain_length(const Tape<double>& tape, const Variable<double>& v) {
  std::vector<std::size_t> depth(v.index() + 1, 0);
  for (std::uint32_t n = 0; n <= v.index(); ++n) {
    for (std::size_t k = 0; k < tape.node(n).input_count; ++k) {
      depth[n] = std::max(depth[n], depth[tape.input_of(n, k)] + 1);
    }
  }
  return depth[v.index()];
}

void sequential_steps(bool small) {
  std::printf("\n6. The cost\n\nthe longest chain of operations to the last output, one layer, D = 16:\n");
  const std::size_t D = 16;
  const std::vector<std::size_t> lengths =
      small ? std::vector<std::size_t>{8, 16, 32} : std::vector<std::size_t>{8, 16, 32, 64, 128};
  std::printf("%6s %14s %14s\n", "n", "GRU encoder", "self-attention");
  std::vector<double> rnn, transformer;
  for (const std::size_t n : lengths) {
    Rng rng(7);
    nn::GruCell<double> cell(D, D, rng);
    nn::TransformerEncoderLayer<double> layer(layer_config(D, 2, 32, false), rng);
    const Tensor<double> X = rng.normal_tensor<double>({1, n, D}, 0, 1);
    // [docs:chain]
    Tape<double> tape;
    const Variable<double> x = tape.constant(X);
    // the recurrence: h_t = GRU(x_t, h_{t−1}), t = 1 … n — each step waits for the one before
    Variable<double> h = tape.constant(Tensor<double>(Shape{1, D}));
    for (std::size_t t = 0; t < n; ++t) h = cell(select(x, 1, t), h);
    const std::size_t rnn_chain = chain_length(tape, h);
    // self-attention: every position at once
    const std::size_t attention_chain = chain_length(tape, layer.forward(x));
    // [docs:end]
    std::printf("%6zu %14zu %14zu\n", n, rnn_chain, attention_chain);
    rnn.push_back(double(rnn_chain));
    transformer.push_back(double(attention_chain));
  }
  double not_linear = 0, not_constant = 0;
  const double per_step = (rnn[1] - rnn[0]) / double(lengths[1] - lengths[0]);
  for (std::size_t k = 0; k < lengths.size(); ++k) {
    not_linear = std::max(not_linear, std::abs(rnn[k] - rnn[0] - per_step * double(lengths[k] - lengths[0])));
    not_constant = std::max(not_constant, std::abs(transformer[k] - transformer[0]));
  }
  std::printf("\n");
  tutorial::check("the GRU's chain grows by the same number of operations per position (O(n))", not_linear, 0);
  tutorial::check("the self-attention layer's chain does not grow with n (O(1))", not_constant, 0);
}

// B random sources of T_x tokens and targets of T_y − 1 (make_batch appends <eos>), ids 4 … V−1.
models::Batch random_batch(std::size_t B, std::size_t T_x, std::size_t T_y, std::size_t V, Rng& rng) {
  std::vector<std::vector<std::int64_t>> sources(B), targets(B);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t i = 0; i < T_x; ++i) sources[b].push_back(static_cast<std::int64_t>(4 + rng.next() % (V - 4)));
    for (std::size_t j = 0; j + 1 < T_y; ++j) targets[b].push_back(static_cast<std::int64_t>(4 + rng.next() % (V - 4)));
  }
  return models::make_batch(sources, targets);
}

// The fastest of `steps` training steps (forward, backward, Adam) in processor time, in milliseconds.
template <class Model>
double fastest_step_ms(Model& model, const models::Batch& batch, std::size_t steps) {
  nn::Adam<float> adam(model.parameters(), {1e-3});
  nn::OneTape<float> one_tape;
  nn::Trainer<float> trainer(adam, one_tape);  // chapter 3's step, without clipping
  const auto loss = [&](Tape<float>& tape, std::size_t, std::size_t) {
    return nn::ShardLoss<float>{model.loss(tape, batch)};
  };
  double fastest = 1e300;
  for (std::size_t s = 0; s < steps; ++s) {
    const std::clock_t start = std::clock();
    trainer.step(batch.size(), loss);
    fastest = std::min(fastest, 1e3 * double(std::clock() - start) / CLOCKS_PER_SEC);
  }
  return fastest;
}

void step_time(const tutorial::Options& options) {
  const std::size_t B = 32, T_y = 12, V = 64, steps = options.small ? 2 : 6;
  const std::vector<std::size_t> lengths =
      options.small ? std::vector<std::size_t>{8, 16} : std::vector<std::size_t>{8, 16, 32, 64, 128, 256};
  std::printf("time: milliseconds per training step, processor time, fastest of %zu (differ from run to run)\n", steps);
  std::printf("time: B = %zu, T_y = %zu; Bahdanau GRU H = 128; Transformer D = 128, 4 heads, ff 512, 2 + 2 layers\n", B,
              T_y);
  std::printf("time: %6s %12s %12s\n", "T_x", "bahdanau", "transformer");
  plot::Series rnn{"bahdanau GRU", {}, {}}, transformer{"transformer", {}, {}};
  double bad = 0;
  for (const std::size_t T_x : lengths) {
    Rng rng(T_x);
    const models::Batch batch = random_batch(B, T_x, T_y, V, rng);
    models::Seq2seqConfig rnn_config;
    rnn_config.source_vocab_size = rnn_config.target_vocab_size = V;
    rnn_config.hidden_size = 128;
    rnn_config.embedding_dim = 64;
    rnn_config.set_decoder("bahdanau");
    models::Seq2seq<float> seq2seq(rnn_config);
    models::TransformerConfig config;
    config.source_vocab_size = config.target_vocab_size = V;
    config.dropout = 0.0;
    models::TransformerModel<float> model(config);
    const double t_rnn = fastest_step_ms(seq2seq, batch, steps), t_transformer = fastest_step_ms(model, batch, steps);
    std::printf("time: %6zu %12.2f %12.2f\n", T_x, t_rnn, t_transformer);
    if (!(t_rnn > 0 && t_transformer > 0)) bad += 1;
    rnn.x.push_back(double(T_x));
    rnn.y.push_back(t_rnn);
    transformer.x.push_back(double(T_x));
    transformer.y.push_back(t_transformer);
  }
  tutorial::check("step times that are not finite and > 0 (count)", bad, 0);
  plot::LineChartOptions chart;
  chart.title = "time per training step against the source length";
  chart.x_label = "source length T_x";
  chart.y_label = "ms per step (processor time)";
  chart.y_min = 0;
  tutorial::write_figure(options, "14-step-time.svg", plot::line_chart_svg({rnn, transformer}, chart));
}

// ---- 7. dates -----------------------------------------------------------------------------------------------------

std::string text_of(const data::Vocabulary& vocabulary, const std::vector<std::int64_t>& ids) {
  std::string text;
  for (const std::string& character : vocabulary.decode(ids)) text += character;
  return text;
}

// "layer 1, head 2:  2←2  0←0 …": each output token and the source character it gives the largest weight.
std::string where_it_looks(const std::vector<std::string>& rows, const std::vector<std::vector<double>>& alpha,
                           const std::vector<std::string>& source, int layer, int head) {
  std::string line = "  layer " + std::to_string(layer + 1) + ", " +
                     (head < 0 ? std::string("mean  ") : "head " + std::to_string(head + 1)) + ":";
  for (std::size_t j = 0; j < rows.size() && j < alpha.size(); ++j) {
    const std::size_t i = std::size_t(std::max_element(alpha[j].begin(), alpha[j].end()) - alpha[j].begin());
    const std::string from = source[i] == " " ? "_" : source[i];
    line += "  " + (rows[j] == "<eos>" ? std::string("$") : rows[j]) + "<" + from;
  }
  return line;
}

// The cross-attention of one date in every decoder layer and head: a heatmap each, and where each output looks.
void draw_heads(models::TransformerModel<float>& model, const data::Vocabulary& source_vocabulary,
                const data::Vocabulary& target_vocabulary, const tutorial::Options& options) {
  // [docs:heads]
  // One date, its cross-attention in every decoder layer and head, and the mean over the heads of the last layer.
  const std::string example = "Saturday 09 May 2018";
  const std::vector<std::int64_t> ids = tutorial::ids_of(source_vocabulary, example);
  const models::Batch batch = models::make_batch({ids});
  std::vector<std::string> looked_at;
  for (int layer = 0; layer < 2; ++layer) {
    for (int head = -1; head < 4; ++head) {
      const models::AttentionView view{layer, head};
      const models::Hypothesis h = models::decode(model, batch.source, batch.source_lengths, {}, view).front();
      std::vector<std::vector<double>> alpha;
      for (const std::vector<float>& r : h.attention) alpha.emplace_back(r.begin(), r.end());
      std::vector<std::string> rows = target_vocabulary.decode(h.tokens);
      if (h.finished) rows.push_back("<eos>");
      plot::HeatmapOptions heatmap;
      const std::string which = head < 0 ? "mean of the heads" : "head " + std::to_string(head + 1);
      heatmap.title = example + " → " + text_of(target_vocabulary, h.tokens) + ": layer " + std::to_string(layer + 1) +
                      ", " + which;
      const std::string name = "14-dates-layer" + std::to_string(layer + 1) +
                               (head < 0 ? "-mean" : "-head" + std::to_string(head + 1)) + ".svg";
      tutorial::write_figure(options, name, plot::attention_svg(data::utf8_characters(example), rows, alpha, heatmap));
      looked_at.push_back(where_it_looks(rows, alpha, data::utf8_characters(example), layer, head));
    }
  }
  // [docs:end]
  std::printf("\nfor each output character, the source character with the largest weight (\"_\" is a space):\n");
  for (const std::string& line : looked_at) std::printf("%s\n", line.c_str());
}

void dates_task(const tutorial::Options& options) {
  std::printf("\n7. The dates task\n\n");
  const std::size_t train_size = options.small ? 512 : 20000, held_out = options.small ? 64 : 1000;
  const std::size_t epochs = options.small ? 1 : 4, B = 64;
  const dates::Splits splits = dates::make_splits(/*seed=*/1, train_size, held_out, held_out);
  data::Vocabulary source_vocabulary, target_vocabulary;
  for (const std::string& c : dates::source_alphabet()) source_vocabulary.add(c);
  for (const std::string& c : dates::target_alphabet()) target_vocabulary.add(c);
  std::vector<std::vector<std::int64_t>> sources, targets;
  for (const dates::Example& example : splits.train) {
    sources.push_back(tutorial::ids_of(source_vocabulary, example.source));
    targets.push_back(tutorial::ids_of(target_vocabulary, example.target));
  }
  // [docs:dates]
  models::TransformerConfig config;
  config.source_vocab_size = source_vocabulary.size();
  config.target_vocab_size = target_vocabulary.size();
  config.d_model = 64;
  config.heads = 4;
  config.ff = 256;
  config.encoder_layers = config.decoder_layers = 2;
  config.dropout = 0.1;
  config.seed = tutorial::seeded(options, 1);  // --seed S: other initial weights and dropout masks
  models::TransformerModel<float> model(config);
  nn::Adam<float> adam(model.parameters(), {1e-3});
  // (14.9)  η(s) = η_peak · min(s / w, √(w / s)): up linearly for w steps, then down as 1/√s
  const std::int64_t w = options.small ? 4 : 400;
  nn::NoamLR schedule(adam, 1, w, 2e-3 * std::sqrt(double(w)));
  double worst_eta = 0;  // the library's schedule against (14.9) by hand, over the first 3w steps
  for (std::int64_t step = 1; step <= 3 * w; ++step) {
    const double by_hand = 2e-3 * std::min(double(step) / double(w), std::sqrt(double(w) / double(step)));
    worst_eta = std::max(worst_eta, std::abs(schedule.lr_at(step) - by_hand));
  }
  nn::OneTape<float> one_tape;
  nn::Trainer<float> trainer(adam, one_tape);  // chapter 3's step, without clipping
  trainer.add_schedule(schedule);
  Rng order_rng(tutorial::seeded(options, 2));  // and batch order
  for (std::size_t epoch = 1; epoch <= epochs; ++epoch) {
    double loss_sum = 0;
    std::size_t count = 0;
    for (const std::vector<std::size_t>& indices : models::batch_order(sources.size(), B, &order_rng)) {
      std::vector<std::vector<std::int64_t>> batch_sources, batch_targets;
      for (const std::size_t k : indices) {
        batch_sources.push_back(sources[k]);
        batch_targets.push_back(targets[k]);
      }
      const models::Batch batch = models::make_batch(batch_sources, batch_targets);
      // the loss with label smoothing 0.1
      const auto loss = [&](Tape<float>& tape, std::size_t, std::size_t) {
        return nn::ShardLoss<float>{model.loss(tape, batch, 0.1)};
      };
      loss_sum += trainer.step(batch.size(), loss).loss;
      ++count;
    }
    std::printf("epoch %zu: mean training loss %.4f\n", epoch, loss_sum / double(count));
  }
  model.eval();
  // [docs:end]
  std::vector<std::vector<std::int64_t>> test_sources;
  std::vector<std::string> predictions, references;
  for (const dates::Example& example : splits.test) {
    test_sources.push_back(tutorial::ids_of(source_vocabulary, example.source));
    references.push_back(example.target);
  }
  for (std::size_t first = 0; first < test_sources.size(); first += 250) {
    const std::vector<std::vector<std::int64_t>> chunk(
        test_sources.begin() + static_cast<std::ptrdiff_t>(first),
        test_sources.begin() + static_cast<std::ptrdiff_t>(std::min(first + 250, test_sources.size())));
    const models::Batch batch = models::make_batch(chunk);
    for (const models::Hypothesis& h : models::decode(model, batch.source, batch.source_lengths)) {
      predictions.push_back(text_of(target_vocabulary, h.tokens));
    }
  }
  const dates::Scores scores = dates::score(predictions, references);
  std::printf("test exact match (%zu dates, greedy): %.3f\n", scores.count, scores.exact_match);
  tutorial::check("(14.9) nn::NoamLR's learning rate = 2e-3 · min(s/w, sqrt(w/s)), s = 1 ... 3w", worst_eta, 1e-15);

  draw_heads(model, source_vocabulary, target_vocabulary, options);
  tutorial::check("exact match is a fraction (out of [0, 1]: count)",
                  scores.exact_match >= 0 && scores.exact_match <= 1 ? 0 : 1, 0);
}

}  // namespace

int main(int argc, char** argv) {
  const tutorial::Options options = tutorial::parse_options(argc, argv, tutorial::Seed::varies);
  std::printf("Chapter 14: the Transformer%s\n\n", options.small ? " (--small)" : "");
  tutorial::announce_seed(options);
  why_scale(options.small);
  multi_head_by_hand();
  positions(options.small);
  masks();
  residuals();
  stability(options);
  sequential_steps(options.small);
  step_time(options);
  dates_task(options);
  return tutorial::exit_status();
}
