// bench/transformer: trains the benchmark model "transformer" of ../shared/bench/torch_transformer.py with attend's
// nn::Transformer, on the same kind of random token batch, and prints one JSON line with the reference's fields
// (step_median_s, tokens_per_s, first_loss, last_loss, peak_rss_mib, ...), plus the "BLAS-bound" step (the step's
// matrix products timed in sgemm alone, on the model's own shapes, in this run) and, with --decode, greedy decoding of
// the batch with the decoder's key/value cache against recomputing the whole prefix at every step.
// bench/compare --model transformer runs it side by side with the reference; bench/torch_same_loss.py --model
// transformer checks that both compute the same thing; docs/performance.md reports the figures.
//
// The model (exactly the reference's, read its docstring):
//   x = √D · src_emb(src) + PE[:S];  y = √D · tgt_emb(tgt_in) + PE[:T]   (sinusoidal positions, embeddings N(0, 1))
//   h = nn::Transformer(x, y, causal decoder self-attention, source padding on encoder and cross-attention)
//   logits = out(h);  loss = mean cross-entropy over the B·T targets;  Adam(lr = 1e-3);  dropout 0
// Parameter names are attend's (src_emb.W, transformer.encoder.layers.0.self_attn.W_in, ...); --init reads a file in
// PyTorch's state_dict names (nn::pytorch_transformer_name maps them) with the batch beside them.
#include "models/transformer.hpp"

#include <xmmintrin.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "bench/measure.hpp"
#include "nn/checkpoint.hpp"
#include "nn/layers.hpp"
#include "nn/optim.hpp"
#include "nn/parallel.hpp"
#include "nn/transformer.hpp"
#include "runtime/block_cache.hpp"
#include "runtime/cpu.hpp"

extern "C" void openblas_set_num_threads(int);

namespace {

using namespace attend;
using namespace attend::bench;
using json = nlohmann::json;

constexpr std::size_t source_vocab = 64, target_vocab = 40;

struct Config {
  std::size_t B, S, T, D, heads, F, L;
};

Config config_named(const std::string& name) {
  if (name == "small") return {32, 32, 12, 128, 4, 512, 2};
  return {64, 50, 20, 256, 8, 1024, 3};  // large
}

nn::TransformerLayerConfig layer_config(const Config& c, bool norm_first) {
  nn::TransformerLayerConfig config;
  config.d_model = c.D;
  config.heads = c.heads;
  config.ff = c.F;
  config.dropout = 0.0;
  config.norm_first = norm_first;
  return config;
}

// The reference model with attend's layers; module names as the reference's state_dict: src_emb, tgt_emb,
// transformer, out.
template <class T>
class BenchModel : public nn::Module<T> {
 public:
  nn::Embedding<T> src_emb, tgt_emb;
  nn::Transformer<T> transformer;
  nn::Linear<T> out;

  BenchModel(const Config& c, bool norm_first, Rng& rng)
      : src_emb(source_vocab, c.D, rng),
        tgt_emb(target_vocab, c.D, rng),
        transformer(layer_config(c, norm_first), c.L, c.L, rng),
        out(c.D, target_vocab, rng),
        positions_(nn::sinusoidal_positions<T>(512, c.D)) {}

  void visit(nn::ModuleVisitor<T>& visitor) override {
    visitor.module("src_emb", src_emb);
    visitor.module("tgt_emb", tgt_emb);
    visitor.module("transformer", transformer);
    visitor.module("out", out);
  }

  // √D · E[ids] + PE[offset …]: (B, n) → (B, n, D)
  Variable<T> embed(Tape<T>& tape, nn::Embedding<T>& embedding, const Ids& ids, std::size_t offset = 0) {
    const std::size_t n = ids.shape()[1], D = positions_.shape()[1];
    Tensor<T> rows(Shape{n, D}, uninitialized);
    std::copy(positions_.data() + offset * D, positions_.data() + (offset + n) * D, rows.data());
    const T scale = std::sqrt(static_cast<T>(D));
    return mul(embedding(tape, ids), scale) +
           reshape(tape.constant(std::move(rows)), {1, static_cast<std::int64_t>(n), static_cast<std::int64_t>(D)});
  }

  // logits (B, T, V) for src (B, S), tgt_in (B, T) and the source's real positions (B, S) or nullptr
  Variable<T> forward(Tape<T>& tape, const Ids& src, const Ids& tgt_in, const Mask* keep) {
    return out(transformer.forward(embed(tape, src_emb, src), embed(tape, tgt_emb, tgt_in), keep));
  }

 private:
  Tensor<T> positions_;
};

// The forward pass's matrix products in the shapes attend runs them (PyTorch's FLOPs: the attention products are
// one batched product per (sequence, head)).
std::vector<Product> products_of(const Config& c) {
  const std::size_t BS = c.B * c.S, BT = c.B * c.T, dk = c.D / c.heads, BH = c.B * c.heads;
  std::vector<Product> p;
  for (std::size_t l = 0; l < c.L; ++l) {
    p.insert(p.end(), {
                          {BS, 3 * c.D, c.D, 1},  // encoder self-attention: q, k, v projections
                          {c.S, c.S, dk, BH},     // scores Q Kᵀ
                          {c.S, dk, c.S, BH},     // context α V
                          {BS, c.D, c.D, 1},      // out_proj
                          {BS, c.F, c.D, 1},      // linear1
                          {BS, c.D, c.F, 1},      // linear2
                          {BT, 3 * c.D, c.D, 1},  // decoder self-attention
                          {c.T, c.T, dk, BH},
                          {c.T, dk, c.T, BH},
                          {BT, c.D, c.D, 1},
                          {BT, c.D, c.D, 1},      // cross-attention: q
                          {BS, 2 * c.D, c.D, 1},  // k, v of the memory
                          {c.T, c.S, dk, BH},
                          {c.T, dk, c.S, BH},
                          {BT, c.D, c.D, 1},
                          {BT, c.F, c.D, 1},
                          {BT, c.D, c.F, 1},
                      });
  }
  p.push_back({BT, target_vocab, c.D, 1});  // output layer
  return p;
}

// Rows [begin, end) of a mask, or an empty mask for an empty one.
Mask mask_rows(const Mask& mask, std::size_t begin, std::size_t end) {
  if (mask.size() == 0) return mask;
  const std::size_t cols = mask.shape()[1];
  Mask part(Shape{end - begin, cols});
  std::copy(mask.data() + begin * cols, mask.data() + end * cols, part.data());
  return part;
}

// The index of each row's largest logit: (B, V) → (B, 1) ids
template <class T>
Ids argmax_rows(const Tensor<T>& logits) {
  const std::size_t B = logits.shape()[0], V = logits.shape()[1];
  Ids ids(Shape{B, 1});
  for (std::size_t b = 0; b < B; ++b) {
    const T* row = logits.data() + b * V;
    ids.data()[b] = static_cast<std::int64_t>(std::max_element(row, row + V) - row);
  }
  return ids;
}

// Greedy decoding of `steps` tokens for every source of the batch, without gradients, the first input token 1
// (decoding runs to `steps` whatever it emits, so that both ways do the same work). With the cache each step runs one
// position through the decoder; without it the whole prefix again (the causal mask makes its last position the
// same). Returns the emitted ids (B, steps), so that the two ways can be compared.
template <class T>
Ids greedy(BenchModel<T>& model, const Ids& src, const Mask* keep, std::size_t steps, bool cached,
           const Products* precision) {
  TapeWithContext<T> on(Context{nullptr, precision});  // the products of --precision
  Tape<T>& tape = on.tape;
  NoGradGuard<T> no_grad(tape);
  const std::size_t B = src.shape()[0];
  const Variable<T> memory = model.transformer.encoder.forward(model.embed(tape, model.src_emb, src), keep);
  std::vector<nn::DecoderLayerCache<T>> caches;
  if (cached) caches = model.transformer.decoder.start_cache(memory);
  Ids prefix(Shape{B, 1});
  std::fill(prefix.data(), prefix.data() + B, 1);
  Ids emitted(Shape{B, steps});
  for (std::size_t t = 0; t < steps; ++t) {
    Variable<T> h;  // the decoder's output at position t: (B, D)
    const auto D = static_cast<std::int64_t>(model.out.W.value.shape()[1]);
    if (cached) {
      Ids y(Shape{B, 1});
      for (std::size_t b = 0; b < B; ++b) y.data()[b] = prefix.data()[b * (t + 1) + t];
      h = reshape(model.transformer.decoder.step(model.embed(tape, model.tgt_emb, y, t), caches, keep), {-1, D});
    } else {
      const Variable<T> all = model.transformer.decoder.forward(model.embed(tape, model.tgt_emb, prefix), memory,
                                                                keep);  // (B, t + 1, D)
      h = reshape(slice(all, 1, t, t + 1), {-1, D});
    }
    const Ids next = argmax_rows(model.out(h).value());
    Ids longer(Shape{B, t + 2});
    for (std::size_t b = 0; b < B; ++b) {
      std::copy(prefix.data() + b * (t + 1), prefix.data() + (b + 1) * (t + 1), longer.data() + b * (t + 2));
      longer.data()[b * (t + 2) + t + 1] = next.data()[b];
      emitted.data()[b * steps + t] = next.data()[b];
    }
    prefix = std::move(longer);
  }
  return emitted;
}

// Greedy and beam-5 decoding of the batch's sources with models::decode — the search `attend eval` runs — on a
// models::TransformerModel holding the trained weights (its parameter names are the benchmark model's), with the
// key/value cache and by recomputing the prefix, alternately, `rounds` times each: sentences per second, and the check
// that both ways give the same outputs.
template <class T>
void time_searches(BenchModel<T>& trained, const Config& c, bool norm_first, const Ids& src, int rounds,
                   const Products* precision, json& res) {
  models::TransformerConfig config;
  config.source_vocab_size = source_vocab;
  config.target_vocab_size = target_vocab;
  config.d_model = c.D;
  config.heads = c.heads;
  config.ff = c.F;
  config.encoder_layers = config.decoder_layers = c.L;
  config.dropout = 0.0;
  config.norm_first = norm_first;
  config.max_target_length = c.T + 1;
  models::TransformerModel<T> model(config);
  model.load(trained.named_tensors());
  model.eval();
  const std::vector<std::int64_t> lengths(c.B, static_cast<std::int64_t>(c.S));
  for (const std::size_t beam : {std::size_t{1}, std::size_t{5}}) {
    std::array<std::vector<models::Hypothesis>, 2> found;  // [0] with the cache, [1] recomputing
    const auto seconds = time_alternately(rounds, [&](int recompute) {
      models::SearchOptions search{beam};
      search.products = precision;
      found[static_cast<std::size_t>(recompute)] = models::decode(model, src, lengths, search, {}, recompute == 1);
    });
    for (std::size_t k = 0; k < found[0].size(); ++k) {
      if (found[0][k].tokens != found[1][k].tokens) {
        throw std::logic_error("beam " + std::to_string(beam) + ": the search with the cache found another output");
      }
    }
    const std::string name = beam == 1 ? "greedy" : "beam5";
    res["search_" + name + "_cached_sentences_per_s"] = double(c.B) / median_of(seconds[0]);
    res["search_" + name + "_recompute_sentences_per_s"] = double(c.B) / median_of(seconds[1]);
  }
}

struct Options {
  std::string config = "small", norm = "post", init_file, precision = "float32";
  int threads = 2, warmup = 5, steps = 30, blas_reps = 5, decode_rounds = 0;
  std::size_t pad = 0;
  std::uint64_t seed = 0;
  bool losses = false, no_blas = false, double_precision = false;
};

// The batch: random ids from Rng(seed + 1), the last `pad` source positions of every second row padding; or the
// batch in --init's file, whose other tensors (PyTorch's names) are loaded into the model.
struct BenchBatch {
  Ids src, tgt_in, tgt_out;
  Mask keep;  // (B, S), 1 = a real position; empty: no padding
};

template <class T>
BenchBatch make_batch(const Options& o, const Config& c, BenchModel<T>& model) {
  Rng batch_rng(o.seed + 1);
  Ids src = random_ids(batch_rng, c.B, c.S, source_vocab);
  Ids tgt = random_ids(batch_rng, c.B, c.T + 1, target_vocab);  // tgt[:, 0] plays BOS
  BenchBatch batch;
  if (o.pad > 0) {
    batch.keep = Mask(Shape{c.B, c.S});
    for (std::size_t b = 0; b < c.B; ++b) {
      for (std::size_t i = 0; i < c.S; ++i) batch.keep.at({b, i}) = b % 2 == 1 && i >= c.S - o.pad ? 0 : 1;
    }
  }
  if (!o.init_file.empty()) {
    std::map<std::string, Tensor<T>> state;
    for (auto& [name, tensor] : nn::read_tensors<T>(o.init_file)) {
      if (name == "batch.src") {
        src = ids_from(tensor);
      } else if (name == "batch.tgt") {
        tgt = ids_from(tensor);
      } else if (name == "batch.src_keep") {
        batch.keep = Mask(tensor.shape());
        for (std::size_t i = 0; i < tensor.size(); ++i) batch.keep.data()[i] = tensor.data()[i] != T(0);
      } else {
        state[nn::pytorch_transformer_name(name)] = std::move(tensor);
      }
    }
    model.load(state);  // strict: every parameter, every shape
    if (src.shape() != Shape{c.B, c.S} || tgt.shape() != Shape{c.B, c.T + 1}) {
      throw std::invalid_argument(o.init_file + ": the batch's shapes are not --config " + o.config + "'s");
    }
  }
  batch.src = src;
  batch.tgt_in = Ids(Shape{c.B, c.T});
  batch.tgt_out = Ids(Shape{c.B, c.T});
  for (std::size_t b = 0; b < c.B; ++b) {
    for (std::size_t j = 0; j < c.T; ++j) {
      batch.tgt_in.data()[b * c.T + j] = tgt.data()[b * (c.T + 1) + j];
      batch.tgt_out.data()[b * c.T + j] = tgt.data()[b * (c.T + 1) + j + 1];
    }
  }
  return batch;
}

// Trains (--warmup untimed, --steps timed), then --decode and the BLAS-bound step: the JSON line's fields.
template <class T>
json run(const Options& o) {
  const Config c = config_named(o.config);
  if (o.pad >= c.S) throw std::invalid_argument("--pad " + std::to_string(o.pad) + " leaves no source position");
  const double rss_start = current_rss_mib();
  Rng rng(o.seed);
  BenchModel<T> model(c, o.norm == "pre", rng);
  const BenchBatch batch = make_batch(o, c, model);
  const Mask* keep = batch.keep.size() ? &batch.keep : nullptr;

  nn::Adam<T> adam(model.parameters(), nn::AdamOptions{1e-3});
  const std::unique_ptr<Products> precision = bench_products(o.precision, model.parameters());
  nn::BatchParallel<T> parallel(static_cast<std::size_t>(o.threads), precision.get());
  std::vector<double> losses;
  auto train_step = [&] {
    adam.zero_grad();
    const T loss = parallel.step(c.B, [&](Tape<T>& tape, std::size_t begin, std::size_t end) {
      const Mask part = keep ? mask_rows(batch.keep, begin, end) : Mask();
      const Variable<T> logits = model.forward(tape, rows_of(batch.src, begin, end), rows_of(batch.tgt_in, begin, end),
                                               keep ? &part : nullptr);
      return nn::ShardLoss<T>{cross_entropy(logits, rows_of(batch.tgt_out, begin, end)), double(end - begin)};
    });
    adam.step();
    weights_updated(*precision, model.parameters());
    losses.push_back(static_cast<double>(loss));
  };
  for (int w = 0; w < o.warmup; ++w) train_step();
  std::vector<double> wall;
  for (int i = 0; i < o.steps; ++i) {
    const auto start = Clock::now();
    train_step();
    wall.push_back(seconds_since(start));
  }
  const double peak_training = peak_rss_mib();
  const double med = median_of(wall);
  const std::vector<Product> products = products_of(c);
  json res = {
      {"impl", "attend"},
      {"config", o.config},
      {"B", c.B},
      {"S", c.S},
      {"T", c.T},
      {"D", c.D},
      {"NH", c.heads},
      {"F", c.F},
      {"L", c.L},
      {"norm", o.norm},
      {"pad", o.pad},
      {"dtype", sizeof(T) == 8 ? "float64" : "float32"},
      {"precision", o.precision},
      {"threads", o.threads},
      {"params", model.parameter_count()},
      {"steps", o.steps},
      {"step_median_s", med},
      {"step_min_s", *std::min_element(wall.begin(), wall.end())},
      {"step_p10_s", quantile_of(wall, 0.1)},
      {"step_p90_s", quantile_of(wall, 0.9)},
      {"tokens_per_s", double(c.B * c.T) / med},
      {"first_loss", losses.front()},
      {"last_loss", losses.back()},
      {"rss_at_start_mib", std::round(rss_start * 10) / 10},
      {"peak_rss_mib", std::round(peak_training * 10) / 10},
      {"matmul_gflop_per_step", training_flops(products) / 1e9},
  };
  if (o.decode_rounds > 0) {
    std::array<Ids, 2> emitted;  // [0] with the cache, [1] recomputing
    const auto seconds = time_alternately(o.decode_rounds, [&](int recompute) {
      emitted[static_cast<std::size_t>(recompute)] =
          greedy(model, batch.src, keep, c.T, recompute == 0, precision.get());
    });
    if (!std::equal(emitted[0].data(), emitted[0].data() + emitted[0].size(), emitted[1].data())) {
      throw std::logic_error("greedy decoding with the key/value cache emitted other tokens than recomputing");
    }
    res["decode_tokens"] = c.B * c.T;
    res["decode_cached_median_s"] = median_of(seconds[0]);
    res["decode_recompute_median_s"] = median_of(seconds[1]);
    res["decode_speedup"] = median_of(seconds[1]) / median_of(seconds[0]);
    time_searches(model, c, o.norm == "pre", batch.src, o.decode_rounds, precision.get(), res);
  }
  if (!o.no_blas) {
    openblas_set_num_threads(o.threads);  // sgemm with the whole thread budget, on the whole batch's shapes
    const double bound = blas_bound_seconds(products, o.blas_reps, precision.get());
    res["blas_bound_step_s"] = bound;
    res["blas_bound_fraction"] = bound / med;
  }
  if (o.losses) res["losses"] = losses;
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) res["loadavg1"] = load[0];
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  use_fitting_blas_kernels(argv);  // as the attend program does: OpenBLAS on the kernels this CPU fits
  use_block_cache();               // as the attend program does
  CLI::App app{"Trains the reference Transformer with attend and prints one JSON line of timings."};
  Options o;
  app.add_option("--config", o.config,
                 "small (B=32 S=32 T=12 D=128 heads=4 F=512 L=2) or large (B=64 S=50 T=20 D=256 heads=8 F=1024 L=3)")
      ->check(CLI::IsMember({"small", "large"}));
  app.add_option("--norm", o.norm, "post (the paper) or pre")->check(CLI::IsMember({"post", "pre"}));
  app.add_option("--pad", o.pad, "padded source positions at the end of every second sequence");
  app.add_option("--threads", o.threads, "batch shards, one thread each, OpenBLAS on one thread (nn::BatchParallel)")
      ->check(CLI::Range(1, 64));
  app.add_option("--warmup", o.warmup, "untimed training steps first")->check(CLI::Range(0, 100000));
  app.add_option("--steps", o.steps, "timed training steps")->check(CLI::Range(1, 1000000));
  app.add_option("--seed", o.seed, "initial weights and the random batch");
  app.add_option("--init", o.init_file,
                 "safetensors file with the initial weights in PyTorch's names and the batch (batch.src, batch.tgt, "
                 "batch.src_keep), as written by bench/torch_same_loss.py --model transformer")
      ->check(CLI::ExistingFile);
  app.add_flag("--losses", o.losses, "add the loss of every training step to the JSON line");
  app.add_flag("--double", o.double_precision,
               "compute in float64 (for the same-computation check: float32 rounding differences grow chaotically "
               "in post-norm training)");
  app.add_option("--precision", o.precision,
                 "the float32 products' precision, any that attend train takes (docs/reference/adding-a-precision.md)")
      ->check(CLI::IsMember(precision_names(true)));
  app.add_flag("--no-blas-bound", o.no_blas, "skip timing the sgemm-only step");
  app.add_option("--blas-reps", o.blas_reps, "samples per shape for the sgemm-only step")->check(CLI::Range(1, 1000));
  app.add_option("--decode", o.decode_rounds,
                 "after training, time greedy decoding of T tokens for the batch with the key/value cache and by "
                 "recomputing the prefix, alternately, this many rounds each; then models::decode's greedy and beam-5 "
                 "search of the batch, likewise (0: skip)")
      ->check(CLI::Range(0, 1000));
  CLI11_PARSE(app, argc, argv);
  try {
    _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ and DAZ, as attend train
    openblas_set_num_threads(1);
    if (o.double_precision && o.precision != "float32") {
      throw std::invalid_argument("--double computes in float64; --precision " + o.precision + " is for float32");
    }
    const json res = o.double_precision ? run<double>(o) : run<float>(o);
    std::printf("%s\n", res.dump().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "transformer: %s\n", e.what());
    return 1;
  }
  return 0;
}
