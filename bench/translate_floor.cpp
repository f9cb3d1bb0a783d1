// bench/translate_floor: the matrix-product floor of an `attend train` run — the time its steps' matrix products alone
// take in sgemm, on the shapes the steps run — for bench/compare_translate. It builds what `attend train` builds (the
// data, the model, the batches in training order; parsed by attend's own command-line parser), runs forward and
// backward of the first --steps batches, each cut into the command's --threads shards as `attend train` cuts them,
// records the shape of every float product (the tapes carry products that note each shape and leave the product to
// OpenBLAS), then times each distinct shape in the precision asked for (float32: the engine's blas_gemm, sgemm; sgemv
// for ≤ 4 rows or 1 column) on one thread (the median of repetitions) and prints
// one JSON line:
//   steps, target_tokens, gemm_gflop_per_step, products_per_step, weight_products_per_step (those reading a weight),
//   floor_s_per_step   Σ over the step's products of their sgemm times, ÷ the threads (the shards run side by side)
//   floor_tokens_per_s target tokens per second at that floor
//
// With --precision bf16 the products are timed in bfloat16 (precision/precision.hpp), their operands' conversion
// included except the weights' (products read the copies `attend train` rounds once a step; that rounding is not
// timed).
//
//   translate_floor [--steps N] [--reps R] [--precision float32|bf16|…] train --task pairs --data … --threads 2 …
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "apps/cli.hpp"
#include "apps/model_file.hpp"
#include "autograd/blas.hpp"
#include "bench/measure.hpp"
#include "precision/precision.hpp"
#include "precision/products.hpp"
#include "runtime/block_cache.hpp"
#include "runtime/cpu.hpp"

namespace {

using namespace attend;

// trans_a, trans_b, m, n, k, and whether A and B are weights (bf16: read from their copies, as `attend train` does)
using GemmShape = std::tuple<bool, bool, std::size_t, std::size_t, std::size_t, bool, bool>;

std::mutex shapes_mutex;
std::map<GemmShape, std::size_t> shapes;  // how often each shape ran

// Float32's products, noting the shape of each: every product declined (left to OpenBLAS) after its shape is noted —
// a product with a bias once, when it is asked again without (products.hpp).
class ShapeRecorder final : public Products {
 public:
  std::string name() const override { return "float32"; }
  bool gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float, const float*, std::size_t,
            const float*, std::size_t, float, float*, std::size_t, const float* bias,
            const WeightOperands& weights) const override {
    if (bias != nullptr) return false;
    const GemmShape shape{trans_a, trans_b, m, n, k, weights.a != nullptr, weights.b != nullptr};
    const std::lock_guard<std::mutex> lock(shapes_mutex);
    ++shapes[shape];
    return false;
  }
};

// Seconds of one sgemm of this shape on one thread: the median of `reps` samples, each long enough to time (≥ ~2 ms).
// A weight operand is one of the products' weights (precision/precision.hpp), so that in bf16 the product reads its
// copy, rounded once before timing; the others are rounded at every product, as in a step.
double sgemm_seconds(const GemmShape& shape, int reps, const std::string& precision) {
  const auto [ta, tb, m, n, k, a_weight, b_weight] = shape;
  const Parameter<float> a(Tensor<float>(Shape{m * k}, 0.5f)), b(Tensor<float>(Shape{k * n}, 0.25f));
  std::vector<float> c(m * n, 0.f);
  Matrices weights_of_product;
  if (a_weight) weights_of_product.emplace_back("A", &a);
  if (b_weight) weights_of_product.emplace_back("B", &b);
  const std::unique_ptr<Products> products = make_products(precision, weights_of_product);
  // the shape by value: C++17 lets no lambda capture a structured binding (clang refuses it, GCC accepts it)
  const WeightOperands named{a_weight ? &a : nullptr, b_weight ? &b : nullptr};
  const auto run = [&, ta = ta, tb = tb, m = m, n = n, k = k] {
    gemm(products.get(), ta, tb, m, n, k, 1.f, a.value.data(), ta ? m : k, b.value.data(), tb ? k : n, 1.f, c.data(), n,
         named);
  };
  const double flop = 2.0 * double(m) * double(n) * double(k);
  const int inner = std::max(1, int(2e-3 * 50e9 / std::max(flop, 1.0)));
  run();
  std::vector<double> samples;
  for (int r = 0; r < reps; ++r) {
    const auto start = bench::Clock::now();
    for (int i = 0; i < inner; ++i) run();
    samples.push_back(bench::seconds_since(start) / inner);
  }
  return bench::median_of(samples);
}

int run(int argc, char** argv) {
  std::size_t steps = 20;
  int reps = 5;
  std::string timed_precision = "float32";
  int k = 1;
  for (; k < argc && std::string(argv[k]) != "train"; k += 2) {
    const std::string flag = argv[k];
    if (k + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    if (flag == "--steps") {
      steps = std::stoul(argv[k + 1]);
    } else if (flag == "--reps") {
      reps = std::stoi(argv[k + 1]);
    } else if (flag == "--precision") {
      timed_precision = argv[k + 1];
      if (find_precision(timed_precision) == nullptr) throw std::invalid_argument("--precision " + timed_precision);
    } else {
      throw std::invalid_argument("unknown option " + flag);
    }
  }
  if (k >= argc || steps == 0 || reps < 1) {
    throw std::invalid_argument("usage: translate_floor [--steps N] [--reps R] train ... (an `attend train` line)");
  }
  const app::CommandLine line = app::parse_command_line(std::vector<std::string>(argv + k, argv + argc));
  if (line.command != app::Command::train || !line.train.resume.empty()) {
    throw std::invalid_argument(line.error.empty() ? "not a fresh `train` command line" : line.error);
  }
  const app::TrainOptions& options = line.train;
  const std::unique_ptr<app::TaskData> data = options.task->make_data();
  app::ModelFile file = app::new_model_file(*options.task, *options.model, *data);
  const std::unique_ptr<app::Batches> batches =
      options.task->batches(*data, file.source_vocabulary, file.target_vocabulary, options.settings.batch_size);
  Rng order_rng(options.task->settings.seed + 7);  // run_train's batch order for a fresh training
  const std::vector<std::vector<std::size_t>> order = batches->epoch_order(order_rng);
  openblas_set_num_threads(1);
  const std::size_t threads = options.settings.threads;
  std::size_t tokens = 0, done = 0;
  const ShapeRecorder recorder;
  file.model->module().train();
  for (; done < steps && done < order.size(); ++done) {
    const app::TrainingBatch batch = batches->batch(1, order[done]);
    tokens += batch.tokens;
    const std::size_t shards = std::min(threads, batch.rows());
    for (std::size_t s = 0; s < shards; ++s) {
      const std::size_t begin = batch.rows() * s / shards, end = batch.rows() * (s + 1) / shards;
      const app::TrainingBatch shard = shards == 1 ? batch : app::shard_of(batch, begin, end);
      TapeWithContext<float> on(Context{nullptr, &recorder});
      Tape<float>& tape = on.tape;
      tape.set_retain_gradients(false);
      tape.backward(file.model->loss(tape, shard));
    }
  }
  // the shapes are recorded in float32, timed in the precision asked for
  double seconds = 0, flop = 0;
  std::size_t products = 0, weight_products = 0;
  for (const auto& [shape, count] : shapes) {
    seconds += sgemm_seconds(shape, reps, timed_precision) * double(count);
    flop += 2.0 * double(std::get<2>(shape)) * double(std::get<3>(shape)) * double(std::get<4>(shape)) * double(count);
    products += count;
    if (std::get<5>(shape) || std::get<6>(shape)) weight_products += count;
  }
  const double per_step = seconds / double(done) / double(threads);
  const nlohmann::json result = {{"steps", done},
                                 {"threads", threads},
                                 {"precision", timed_precision},
                                 {"target_tokens", tokens},
                                 {"gemm_gflop_per_step", flop / double(done) / 1e9},
                                 {"products_per_step", double(products) / double(done)},
                                 {"weight_products_per_step", double(weight_products) / double(done)},
                                 {"distinct_shapes", shapes.size()},
                                 {"floor_s_per_step", per_step},
                                 {"floor_tokens_per_s", double(tokens) / double(done) / per_step}};
  std::printf("%s\n", result.dump().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  attend::use_fitting_blas_kernels(argv);  // as the attend program does: OpenBLAS on the kernels this CPU fits
  attend::use_block_cache();               // as the attend program does
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "translate_floor: error: %s\n", e.what());
    return 2;
  }
}
