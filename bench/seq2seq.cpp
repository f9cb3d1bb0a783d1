// bench/seq2seq: trains the benchmark model "seq2seq-attn" of ../shared/bench/torch_seq2seq.py with attend, on the same
// random token batch, and prints one JSON line with the same fields as the PyTorch reference (step_median_s,
// tokens_per_s, fwd_grad_median_s, fwd_nograd_median_s, peak_rss_mib, ...), plus the "BLAS-bound" step: the step's
// matrix products timed with sgemm alone, on the model's own shapes, in this run. bench/compare runs it side by side
// with the reference; docs/performance.md reports the figures. How to run: bench/README.md.
// For long runs, --rss-at STEPS records the peak and current RSS and the tensor cache's counters after chosen training
// steps (does memory stay flat over thousands of steps?), and --tensor-cache-mib lowers the cache's limit.
//
// The model (exactly the reference's; batch-first here, which changes no number):
//   x = src_emb(src) (B, S, E);  h_1..h_S, s_0 = encoder(x)              1-layer GRU or LSTM, hidden H
//   y = tgt_emb(tgt_in) (B, T, E)
//   bahdanau: e_ij = vᵀ tanh(W s_{j-1} + U h_i + b_U)   U h_i + b_U computed once per batch
//             α_j = softmax_i(e_ij);  c_j = Σ_i α_ij h_i;  s_j = cell([y_j; c_j], s_{j-1})
//   general:  s_j = cell([y_j; c_{j-1}], s_{j-1}), c_0 = 0;  e_ij = s_jᵀ (W h_i)  (W h_i computed once)
//             α_j = softmax_i(e_ij);  c_j = Σ_i α_ij h_i
//   logits_j = out([s_j; c_j]);  loss = mean cross-entropy over the B·T targets;  Adam(lr = 1e-3)
// A = H. Parameter names map to the reference's state_dict (bench/torch_same_loss.py writes a file in these names).
//
// This file includes OpenBLAS's <cblas.h> (for the sgemm timings), so it must not include xtensor-blas.
#include <cblas.h>
#include <malloc.h>
#include <sys/resource.h>
#include <xmmintrin.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "bench/measure.hpp"
#include "models/attention.hpp"
#include "nn/checkpoint.hpp"
#include "nn/layers.hpp"
#include "nn/optim.hpp"
#include "nn/parallel.hpp"
#include "nn/recurrent.hpp"
#include "runtime/block_cache.hpp"
#include "runtime/cpu.hpp"

extern "C" void openblas_set_num_threads(int);

namespace {

using namespace attend;
using namespace attend::bench;
using json = nlohmann::json;

constexpr std::size_t source_vocab = 64, target_vocab = 40;

struct Config {
  std::size_t B, S, T, E, H;
};

Config config_named(const std::string& name) {
  if (name == "small") return {32, 32, 12, 64, 128};
  return {64, 50, 20, 256, 512};  // large
}

nn::RecurrentConfig recurrent_config(nn::CellKind cell, std::size_t input_size, std::size_t hidden_size) {
  nn::RecurrentConfig config;
  config.cell = cell;
  config.input_size = input_size;
  config.hidden_size = hidden_size;
  return config;
}

// The reference model, with attend's layers. Names: src_emb.W, tgt_emb.W, encoder.layers.0.forward.{W_ih,W_hh,b_ih,
// b_hh}, decoder.{W_ih,...}, W.W, U.W, U.b, v.W (bahdanau) or Wg.W (general), out.W, out.b.
class BenchModel : public nn::Module<float> {
 public:
  nn::Embedding<float> src_emb, tgt_emb;
  nn::RecurrentStack<float> encoder;
  nn::AnyCell<float> decoder;
  std::optional<nn::Linear<float>> W, U, v, Wg;
  nn::Linear<float> out;

  BenchModel(const Config& c, nn::CellKind cell, bool bahdanau, Rng& rng)
      : src_emb(source_vocab, c.E, rng),
        tgt_emb(target_vocab, c.E, rng),
        encoder(recurrent_config(cell, c.E, c.H), rng),
        decoder(nn::make_cell<float>(cell, c.E + c.H, c.H, rng)),
        out(2 * c.H, target_vocab, rng),
        H_(c.H),
        bahdanau_(bahdanau),
        lstm_(cell == nn::CellKind::lstm) {
    if (bahdanau) {
      W.emplace(c.H, c.H, rng, false);
      U.emplace(c.H, c.H, rng, true);
      v.emplace(c.H, 1, rng, false);
    } else {
      Wg.emplace(c.H, c.H, rng, false);
    }
  }

  void visit(nn::ModuleVisitor<float>& visitor) override {
    visitor.module("src_emb", src_emb);
    visitor.module("tgt_emb", tgt_emb);
    visitor.module("encoder", encoder);
    std::visit([&](auto& cell) { visitor.module("decoder", cell); }, decoder);
    if (bahdanau_) {
      visitor.module("W", *W);
      visitor.module("U", *U);
      visitor.module("v", *v);
    } else {
      visitor.module("Wg", *Wg);
    }
    visitor.module("out", out);
  }

  // logits (B, T, V) for src (B, S) and tgt_in (B, T).
  // What does not depend on the decoder's recurrence is computed once for all steps, each as one large product: the
  // keys U h_i + b_U (or W h_i), the embedding part of the decoder's input gates W_ih[:, :E] y_j + b_ih for every j,
  // and the logits of every step from the stacked [s_j; c_j]. Inside the loop: the fused attention and cell ops.
  Variable<float> forward(Tape<float>& tape, const Ids& src, const Ids& tgt_in) {
    const std::size_t B = src.shape()[0], T = tgt_in.shape()[1], E = tgt_emb.W.value.shape()[1];
    const nn::RecurrentOutput<float> encoded = encoder.forward(src_emb(tape, src));
    const Variable<float> keys = encoded.outputs;  // h_i: (B, S, H)
    nn::LstmState<float> state{encoded.h_final[0], lstm_ ? encoded.c_final[0] : Variable<float>()};
    nn::RecurrentCell<float>& cell = std::visit([](auto& c) -> nn::RecurrentCell<float>& { return c; }, decoder);
    const Variable<float> W_ih = tape.param(cell.W_ih);
    // the decoder's input [y_j; c_j] split by columns of W_ih: y-part for all steps at once, c-part per step
    const Variable<float> gy = linear(tgt_emb(tape, tgt_in), slice(W_ih, 1, 0, E), tape.param(cell.b_ih));  // (B,T,G·H)
    const Variable<float> W_ic = slice(W_ih, 1, E, E + H_);                                                 // (G·H, H)
    const Variable<float> W_hh = tape.param(cell.W_hh), b_hh = tape.param(cell.b_hh);
    auto cell_step = [&](const Variable<float>& gx) {
      const Variable<float> gh = linear(state.h, W_hh, b_hh);
      if (!lstm_) {
        state.h = gru_cell(gx, gh, state.h);
      } else {
        const Variable<float> hc = lstm_cell(gx, gh, state.c);
        state.h = select(hc, 0, 0);
        state.c = select(hc, 0, 1);
      }
    };
    std::vector<Variable<float>> features;  // [s_j; c_j] of every step
    features.reserve(T);
    if (bahdanau_) {
      const Variable<float> Uh = (*U)(keys);  // U h_i + b_U: (B, S, A), once
      const Variable<float> v_a = tape.param(v->W), W_a = tape.param(W->W);
      for (std::size_t j = 0; j < T; ++j) {
        // e_ij = vᵀ tanh(W s_{j-1} + U h_i + b_U): (B, S)
        const Variable<float> e = additive_attention(linear(state.h, W_a), Uh, v_a);
        const Variable<float> alpha = softmax(e, 1);
        const Variable<float> c = batched_vecmat(alpha, keys);  // c_j = Σ_i α_ij h_i: (B, H)
        cell_step(select(gy, 1, j) + linear(c, W_ic));
        features.push_back(concat<float>({state.h, c}, 1));
      }
    } else {
      const Variable<float> Wh = (*Wg)(keys);  // W h_i: (B, S, H), once
      Variable<float> c = tape.constant(Tensor<float>(Shape{B, H_}));
      for (std::size_t j = 0; j < T; ++j) {
        cell_step(j == 0 ? select(gy, 1, j) : select(gy, 1, j) + linear(c, W_ic));  // c_0 = 0
        const Variable<float> e = batched_matvec(Wh, state.h);                      // e_ij = s_jᵀ W h_i: (B, S)
        const Variable<float> alpha = softmax(e, 1);
        c = batched_vecmat(alpha, keys);
        features.push_back(concat<float>({state.h, c}, 1));
      }
    }
    return out(stack(features, 1));  // (B, T, V)
  }

 private:
  std::size_t H_;
  bool bahdanau_, lstm_;
};

// ---- measuring ----------------------------------------------------------------------------------------------------

// Memory after one training step (--rss-at): the process's peak and current RSS, the tensor cache's counters
// (runtime/block_cache.hpp) summed over the shards' threads, and glibc malloc's heap (mallinfo2, all arenas).
struct MemoryPoint {
  std::size_t step = 0;  // training steps done, warm-up included
  double seconds = 0;    // since the first training step
  double peak_rss_mib = 0, rss_mib = 0;
  TensorMemoryStats tensors;  // in_use, cached, peak_in_use (a sum of per-thread peaks), allocations, cache_hits
  double malloc_in_use_mib = 0, malloc_free_mib = 0;
};

constexpr double mib = 1024.0 * 1024.0;

double round1(double x) { return std::round(x * 10) / 10; }

json to_json(const MemoryPoint& m) {
  return {
      {"step", m.step},
      {"seconds", round1(m.seconds)},
      {"peak_rss_mib", round1(m.peak_rss_mib)},
      {"rss_mib", round1(m.rss_mib)},
      {"tensor_in_use_mib", round1(double(m.tensors.in_use) / mib)},
      {"tensor_cached_mib", round1(double(m.tensors.cached) / mib)},
      {"tensor_peak_in_use_mib", round1(double(m.tensors.peak_in_use) / mib)},
      {"tensor_allocations", m.tensors.allocations},
      {"tensor_cache_hits", m.tensors.cache_hits},
      {"malloc_in_use_mib", round1(m.malloc_in_use_mib)},
      {"malloc_free_mib", round1(m.malloc_free_mib)},
  };
}

// "step 100: peak RSS 37.7 MiB, RSS 37.6 MiB; tensors 1.2 MiB in use, 12.3 MiB cached, …"; `before` is the previous
// point (for the share of allocations the cache served in between), or null.
std::string describe(const MemoryPoint& m, const MemoryPoint* before) {
  const std::size_t allocations = m.tensors.allocations - (before ? before->tensors.allocations : 0);
  const std::size_t hits = m.tensors.cache_hits - (before ? before->tensors.cache_hits : 0);
  char line[512];
  std::snprintf(line, sizeof line,
                "step %zu: peak RSS %.1f MiB, RSS %.1f MiB; tensors %.1f MiB in use, %.1f MiB cached, per-thread "
                "peaks %.1f MiB; %.3f%% of %zu allocations since %s from the cache; malloc %.1f MiB in use, %.1f MiB "
                "free; %.1f s",
                m.step, m.peak_rss_mib, m.rss_mib, double(m.tensors.in_use) / mib, double(m.tensors.cached) / mib,
                double(m.tensors.peak_in_use) / mib, allocations ? 100.0 * double(hits) / double(allocations) : 0.0,
                allocations, before ? ("step " + std::to_string(before->step)).c_str() : "the start",
                m.malloc_in_use_mib, m.malloc_free_mib, m.seconds);
  return line;
}

// The forward pass's matrix products, in the shapes attend runs them (the same FLOPs as the reference's, some of them
// grouped into larger products).
std::vector<Product> products_of(const Config& c, std::size_t gates, bool bahdanau) {
  const std::size_t G = gates * c.H, A = c.H;
  std::vector<Product> p{
      {c.B * c.S, G, c.E, 1},                 // encoder input gates, all steps at once
      {c.B, G, c.H, c.S},                     // encoder recurrent gates, one per step
      {c.B * c.S, A, c.H, 1},                 // keys U h_i (or W h_i), once
      {c.B * c.T, G, c.E, 1},                 // decoder input gates, embedding part, all steps at once
      {c.B, G, c.H, c.T},                     // decoder input gates, context part, per step
      {c.B, G, c.H, c.T},                     // decoder recurrent gates
      {c.B * c.T, target_vocab, 2 * c.H, 1},  // output layer, all steps at once
      {1, c.H, c.S, c.B * c.T},               // context c_j = α_j h, per sequence
  };
  if (bahdanau) {
    p.push_back({c.B, A, c.H, c.T});      // W s_{j-1}
    p.push_back({c.B * c.S, 1, A, c.T});  // vᵀ tanh(...)
  } else {
    p.push_back({c.S, 1, c.H, c.B * c.T});  // s_jᵀ (W h_i), per sequence
  }
  return p;
}

// The command line.
struct Options {
  std::string config_name = "small", cell_name = "gru", attn = "bahdanau", init_file, parallelism = "batch",
              precision = "float32";
  int threads = 2, warmup = 5, steps = 30, fwd_steps = 30, blas_reps = 5;
  std::uint64_t seed = 0;
  bool print_losses = false, no_blas = false, flush_to_zero = false;
  std::vector<std::size_t> rss_at;
  double cache_mib = -1;
};

void add_flags(CLI::App& app, Options& o) {
  app.add_option("--config", o.config_name, "small (B=32 S=32 T=12 E=64 H=128) or large (B=64 S=50 T=20 E=256 H=512)")
      ->check(CLI::IsMember({"small", "large"}));
  app.add_option("--cell", o.cell_name, "gru or lstm")->check(CLI::IsMember({"gru", "lstm"}));
  app.add_option("--attn", o.attn, "bahdanau or general")->check(CLI::IsMember({"bahdanau", "general"}));
  app.add_option("--threads", o.threads, "the thread budget")->check(CLI::Range(1, 64));
  app.add_option("--parallelism", o.parallelism,
                 "batch: one shard of the batch per thread, OpenBLAS on one thread each (nn::BatchParallel); blas: one "
                 "tape, OpenBLAS on all threads")
      ->check(CLI::IsMember({"batch", "blas"}));
  app.add_option("--warmup", o.warmup, "untimed training steps first")->check(CLI::Range(1, 100000));
  app.add_option("--steps", o.steps, "timed training steps")->check(CLI::Range(1, 1000000));
  app.add_option("--fwd-steps", o.fwd_steps, "timed forward passes (with and without recording)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--seed", o.seed, "initial weights and the random batch");
  app.add_option("--precision", o.precision,
                 "the products' precision, any that attend train takes (docs/reference/adding-a-precision.md)")
      ->check(CLI::IsMember(precision_names(true)));
  app.add_option("--init", o.init_file,
                 "safetensors file with the initial weights and the batch (batch.src, batch.tgt), as written by "
                 "bench/torch_same_loss.py")
      ->check(CLI::ExistingFile);
  app.add_flag("--losses", o.print_losses, "add the loss of every training step to the JSON line");
  app.add_flag("--no-blas-bound", o.no_blas, "skip timing the sgemm-only step");
  app.add_flag("--flush-to-zero", o.flush_to_zero,
               "set FTZ and DAZ (subnormal floats read and written as 0) before any thread starts; the batch shards' "
               "threads inherit it");
  app.add_option("--blas-reps", o.blas_reps, "samples per shape for the sgemm-only step")->check(CLI::Range(1, 1000));
  app.add_option("--rss-at", o.rss_at,
                 "after these training steps (comma-separated, counted from the first warm-up step, at most "
                 "warmup + steps) record peak and current RSS and the tensor cache's counters: a line each, and "
                 "\"rss_at\" in the JSON line")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option(
         "--tensor-cache-mib", o.cache_mib,
         "the most MiB of freed tensor blocks each thread keeps for reuse (runtime/block_cache.hpp; default 1024)")
      ->check(CLI::NonNegativeNumber);
}

// The random token batch (or the one of --init): tgt[:, 0] plays BOS; tgt_in = tgt[:, :T], tgt_out = tgt[:, 1:].
struct Batch {
  Ids src, tgt_in, tgt_out;
};

Batch make_batch(const Config& c, const Options& o, BenchModel& model) {
  Rng batch_rng(o.seed + 1);
  Ids src = random_ids(batch_rng, c.B, c.S, source_vocab);
  Ids tgt = random_ids(batch_rng, c.B, c.T + 1, target_vocab);
  if (!o.init_file.empty()) {
    Tensor<float> src_f(Shape{c.B, c.S}), tgt_f(Shape{c.B, c.T + 1});
    nn::load_checkpoint<float>(o.init_file, model.parameters(), {{"batch.src", &src_f}, {"batch.tgt", &tgt_f}});
    src = ids_from(src_f);
    tgt = ids_from(tgt_f);
  }
  Ids tgt_in(Shape{c.B, c.T}), tgt_out(Shape{c.B, c.T});
  for (std::size_t b = 0; b < c.B; ++b) {
    for (std::size_t j = 0; j < c.T; ++j) {
      tgt_in.data()[b * c.T + j] = tgt.data()[b * (c.T + 1) + j];
      tgt_out.data()[b * c.T + j] = tgt.data()[b * (c.T + 1) + j + 1];
    }
  }
  return {std::move(src), std::move(tgt_in), std::move(tgt_out)};
}

// --rss-at: the memory after a step, read outside the timed part. The tensor counters are per thread, so each shard's
// thread reads its own, in a forward pass that records nothing (it clears the shards' tapes, as the next step would,
// so the last step's blocks are counted as cached).
MemoryPoint memory_after_step(nn::BatchParallel<float>& parallel, std::size_t step, double seconds) {
  MemoryPoint m;
  m.step = step;
  m.seconds = seconds;
  m.peak_rss_mib = peak_rss_mib();
  m.rss_mib = current_rss_mib();
  const std::size_t shards = parallel.threads();
  std::vector<TensorMemoryStats> per_thread(shards);
  parallel.forward(shards, [&](Tape<float>& shard_tape, std::size_t begin, std::size_t) {
    per_thread[begin] = tensor_memory_stats();  // one row per shard: shard k starts at row k
    return nn::ShardLoss<float>{shard_tape.constant(Tensor<float>::scalar(0.f)), 1.0};
  });
  for (const TensorMemoryStats& t : per_thread) {
    m.tensors.in_use += t.in_use;
    m.tensors.cached += t.cached;
    m.tensors.peak_in_use += t.peak_in_use;
    m.tensors.allocations += t.allocations;
    m.tensors.cache_hits += t.cache_hits;
  }
  const struct mallinfo2 heap = mallinfo2();
  m.malloc_in_use_mib = double(heap.uordblks + heap.hblkhd) / mib;
  m.malloc_free_mib = double(heap.fordblks) / mib;
  return m;
}

// What one run measured.
struct Run {
  std::vector<double> losses, wall, cpu, fwall, nwall;  // per step: loss, wall and CPU seconds; forward passes
  double rss_start = 0, rss_after_warmup = 0, rss_after_steps = 0, peak_training = 0, peak = 0;
  std::vector<MemoryPoint> memory_points;
};

std::vector<double> timed(const std::function<void()>& fn, int n) {
  std::vector<double> wall;
  for (int i = 0; i < n; ++i) {
    const auto start = Clock::now();
    fn();
    wall.push_back(seconds_since(start));
  }
  return wall;
}

// Warm-up steps, timed steps, then timed forward passes with the graph recorded (then dropped) and without.
void train_and_time(const Config& c, const Options& o, BenchModel& model, const Batch& batch, Run& run) {
  const nn::NamedParameters<float> params = model.parameters();
  nn::Adam<float> adam(params, nn::AdamOptions{1e-3});
  const std::unique_ptr<Products> precision = bench_products(o.precision, params);
  nn::BatchParallel<float> parallel(o.parallelism == "batch" ? static_cast<std::size_t>(o.threads) : 1,
                                    precision.get());
  // the loss on rows [begin, end): the mean over the shard's (end - begin)·T targets, weighted by their count
  const nn::BatchParallel<float>::ShardFn shard_loss = [&](Tape<float>& tape, std::size_t begin, std::size_t end) {
    const Variable<float> logits =
        model.forward(tape, rows_of(batch.src, begin, end), rows_of(batch.tgt_in, begin, end));
    return nn::ShardLoss<float>{cross_entropy(logits, rows_of(batch.tgt_out, begin, end)), double(end - begin)};
  };
  const auto train_step = [&] {
    adam.zero_grad();
    const float loss = parallel.step(c.B, shard_loss);
    adam.step();
    weights_updated(*precision, params);
    run.losses.push_back(loss);
  };
  std::size_t steps_done = 0;
  const Clock::time_point training_start = Clock::now();
  const auto after_step = [&] {
    if (!std::binary_search(o.rss_at.begin(), o.rss_at.end(), ++steps_done)) return;
    const MemoryPoint m = memory_after_step(parallel, steps_done, seconds_since(training_start));
    std::printf("rss-at %s\n", describe(m, run.memory_points.empty() ? nullptr : &run.memory_points.back()).c_str());
    std::fflush(stdout);
    run.memory_points.push_back(m);
  };
  run.losses.reserve(std::size_t(o.warmup) + std::size_t(o.steps));
  for (int w = 0; w < o.warmup; ++w) {
    train_step();
    after_step();
  }
  run.rss_after_warmup = current_rss_mib();
  for (int i = 0; i < o.steps; ++i) {
    const std::clock_t c0 = std::clock();
    const auto start = Clock::now();
    train_step();
    run.wall.push_back(seconds_since(start));
    run.cpu.push_back(double(std::clock() - c0) / CLOCKS_PER_SEC);
    after_step();
  }
  run.rss_after_steps = current_rss_mib();
  run.peak_training = peak_rss_mib();
  const auto forward_only = [&](bool grad) { parallel.forward(c.B, shard_loss, grad); };
  for (int w = 0; w < 3; ++w) forward_only(true);
  run.fwall = timed([&] { forward_only(true); }, o.fwd_steps);
  for (int w = 0; w < 3; ++w) forward_only(false);
  run.nwall = timed([&] { forward_only(false); }, o.fwd_steps);
  run.peak = peak_rss_mib();
}

json result_json(const Config& c, const Options& o, std::size_t params, const Run& run) {
  const double med = median_of(run.wall);
  return {
      {"impl", "attend"},
      {"config", o.config_name},
      {"B", c.B},
      {"S", c.S},
      {"T", c.T},
      {"E", c.E},
      {"H", c.H},
      {"cell", o.cell_name},
      {"attn", o.attn},
      {"threads", o.threads},
      {"parallelism", o.parallelism},
      {"precision", o.precision},
      {"flush_to_zero", o.flush_to_zero},
      {"params", params},
      {"steps", o.steps},
      {"step_median_s", med},
      {"step_min_s", *std::min_element(run.wall.begin(), run.wall.end())},
      {"step_p10_s", quantile_of(run.wall, 0.1)},
      {"step_p90_s", quantile_of(run.wall, 0.9)},
      {"cpu_per_step_median_s", median_of(run.cpu)},
      {"tokens_per_s", double(c.B * c.T) / med},
      {"fwd_grad_median_s", median_of(run.fwall)},
      {"fwd_median_s", median_of(run.fwall)},
      {"fwd_nograd_median_s", median_of(run.nwall)},
      {"first_loss", run.losses.front()},
      {"last_loss", run.losses.back()},
      {"rss_at_start_mib", std::round(run.rss_start * 10) / 10},
      {"rss_after_warmup_mib", std::round(run.rss_after_warmup * 10) / 10},
      {"rss_after_steps_mib", std::round(run.rss_after_steps * 10) / 10},
      {"peak_rss_mib", std::round(run.peak * 10) / 10},
      {"peak_rss_training_mib", std::round(run.peak_training * 10) / 10},
  };
}

// The BLAS-bound step, the losses and the memory points, as the flags ask.
void add_extras(json& res, const Options& o, const Run& run, const std::vector<Product>& products) {
  res["matmul_gflop_per_step"] = training_flops(products) / 1e9;
  if (!o.no_blas) {
    // sgemm with the whole thread budget, on the whole batch's shapes
    openblas_set_num_threads(o.threads);
    const double bound =
        blas_bound_seconds(products, o.blas_reps, bench_products(o.precision, nn::NamedParameters<float>{}).get());
    res["blas_bound_step_s"] = bound;
    res["blas_bound_fraction"] = bound / median_of(run.wall);
  }
  if (o.print_losses) res["losses"] = run.losses;
  if (o.cache_mib >= 0 || !run.memory_points.empty()) {
    res["tensor_cache_limit_mib"] = round1(double(tensor_cache_limit()) / mib);
  }
  if (!run.memory_points.empty()) {
    json points = json::array();
    for (const MemoryPoint& m : run.memory_points) points.push_back(to_json(m));
    res["rss_at"] = points;
    const MemoryPoint &first = run.memory_points.front(), &last = run.memory_points.back();
    std::printf("rss-at peak RSS after step %zu: %.1f MiB, after step %zu: %.1f MiB (%+.1f MiB); RSS %.1f → %.1f MiB\n",
                first.step, first.peak_rss_mib, last.step, last.peak_rss_mib, last.peak_rss_mib - first.peak_rss_mib,
                first.rss_mib, last.rss_mib);
  }
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) res["loadavg1"] = load[0];
}

}  // namespace

int main(int argc, char** argv) {
  use_fitting_blas_kernels(argv);  // as the attend program does: OpenBLAS on the kernels this CPU fits
  use_block_cache();               // as the attend program does
  CLI::App app{"Trains the reference seq2seq-attn model with attend and prints one JSON line of timings."};
  Options o;
  add_flags(app, o);
  CLI11_PARSE(app, argc, argv);
  std::sort(o.rss_at.begin(), o.rss_at.end());
  o.rss_at.erase(std::unique(o.rss_at.begin(), o.rss_at.end()), o.rss_at.end());
  if (!o.rss_at.empty() && o.rss_at.back() > std::size_t(o.warmup) + std::size_t(o.steps)) {
    std::fprintf(stderr, "seq2seq: --rss-at %zu is beyond the run's %d warm-up + %d timed steps\n", o.rss_at.back(),
                 o.warmup, o.steps);
    return 2;
  }
  try {
    if (o.flush_to_zero) _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ (bit 15) and DAZ (bit 6)
    if (o.cache_mib >= 0) set_tensor_cache_limit(static_cast<std::size_t>(o.cache_mib * mib));
    openblas_set_num_threads(o.parallelism == "batch" ? 1 : o.threads);
    const Config c = config_named(o.config_name);
    const nn::CellKind cell = o.cell_name == "gru" ? nn::CellKind::gru : nn::CellKind::lstm;
    const bool bahdanau = o.attn == "bahdanau";
    Run run;
    run.rss_start = current_rss_mib();
    Rng rng(o.seed);
    BenchModel model(c, cell, bahdanau, rng);
    const Batch batch = make_batch(c, o, model);
    train_and_time(c, o, model, batch, run);
    json res = result_json(c, o, model.parameter_count(), run);
    add_extras(res, o, run, products_of(c, cell == nn::CellKind::gru ? 3 : 4, bahdanau));
    std::printf("%s\n", res.dump().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seq2seq: %s\n", e.what());
    return 1;
  }
  return 0;
}
