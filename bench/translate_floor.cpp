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
// timed); int8 likewise from the weights' quantized copies (it takes only the products of a weight's transpose: the
// others are timed in sgemm).
//
// --kernel-shapes runtime|fixed times bf16's or int8's products with their oneDNN primitives of those shapes
// (precision/shapes.hpp) instead of those the machine prefers (`attend info` says which); `both` times the two,
// alternately, and prints floor_s_per_step_runtime, floor_s_per_step_fixed (… and floor_tokens_per_s_…) and
// fixed_over_runtime, the ratio of the two floors: what decides whether fixed shapes pay on a machine. --per-shape adds
// "shapes", each distinct shape with its count and seconds (one for each setting).
//
//   translate_floor [--steps N] [--reps R] [--precision float32|bf16|…] [--kernel-shapes machine|runtime|fixed|both]
//                   [--per-shape] train --task pairs --data … --threads 2 …
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
#include <utility>
#include <vector>

#include "apps/cli.hpp"
#include "apps/model_file.hpp"
#include "autograd/blas.hpp"
#include "bench/measure.hpp"
#include "precision/precision.hpp"
#include "precision/products.hpp"
#include "precision/shapes.hpp"
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

// The products a shape is timed with: the precision's as `attend train` makes them, or (kernel_shapes "runtime" or
// "fixed") bf16's or int8's with their oneDNN primitives of those shapes (precision/shapes.hpp).
std::unique_ptr<Products> products_for(const std::string& precision, const std::string& kernel_shapes,
                                       const Matrices& weights) {
  if (kernel_shapes == "machine") return make_products(precision, weights);
  const Shapes shapes = kernel_shapes == "fixed" ? Shapes::fixed : Shapes::runtime;
  if (precision == "bf16") return make_bf16_products(weights, shapes);
  if (precision == "int8") return make_int8_products(weights, shapes);
  throw std::invalid_argument("--kernel-shapes " + kernel_shapes + ": precision " + precision +
                              " has no oneDNN primitives (bf16 and int8 have)");
}

// Seconds of one product of this shape on one thread, for each of `kernel_shapes` (products_for): the median of `reps`
// samples, each long enough to time (≥ ~2 ms), the settings' samples taken alternately. A weight operand is one of the
// products' weights (precision/precision.hpp), so that in bf16 the product reads its copy, rounded once before timing,
// and int8 its quantized copy; the others are rounded at every product, as in a step.
std::vector<double> product_seconds(const GemmShape& shape, int reps, const std::string& precision,
                                    const std::vector<std::string>& kernel_shapes) {
  const auto [ta, tb, m, n, k, a_weight, b_weight] = shape;
  const Parameter<float> a(Tensor<float>(Shape{m * k}, 0.5f));
  const Parameter<float> b(Tensor<float>(tb ? Shape{n, k} : Shape{k, n}, 0.25f));  // a weight W as int8 takes it
  std::vector<float> c(m * n, 0.f);
  Matrices weights_of_product;
  if (a_weight) weights_of_product.emplace_back("A", &a);
  if (b_weight) weights_of_product.emplace_back("B", &b);
  std::vector<std::unique_ptr<Products>> products;
  for (const std::string& setting : kernel_shapes)
    products.push_back(products_for(precision, setting, weights_of_product));
  // the shape by value: C++17 lets no lambda capture a structured binding (clang refuses it, GCC accepts it)
  const WeightOperands named{a_weight ? &a : nullptr, b_weight ? &b : nullptr};
  const auto run = [&, ta = ta, tb = tb, m = m, n = n, k = k](const Products* p) {
    gemm(p, ta, tb, m, n, k, 1.f, a.value.data(), ta ? m : k, b.value.data(), tb ? k : n, 1.f, c.data(), n, named);
  };
  const double flop = 2.0 * double(m) * double(n) * double(k);
  const int inner = std::max(1, int(2e-3 * 50e9 / std::max(flop, 1.0)));
  std::vector<std::vector<double>> samples(products.size());
  for (const auto& p : products) run(p.get());  // a fixed shape's primitive made, a copy rounded: not timed
  for (int r = 0; r < reps; ++r) {
    for (std::size_t i = 0; i < products.size(); ++i) {
      const std::size_t which = (i + static_cast<std::size_t>(r)) % products.size();  // who goes first turns
      const auto start = bench::Clock::now();
      for (int j = 0; j < inner; ++j) run(products[which].get());
      samples[which].push_back(bench::seconds_since(start) / inner);
    }
  }
  std::vector<double> medians;
  for (const auto& s : samples) medians.push_back(bench::median_of(s));
  return medians;
}

struct Options {
  std::size_t steps = 20;
  int reps = 5;
  std::string precision = "float32";
  std::string kernel_shapes = "machine";  // or runtime, fixed, both
  bool per_shape = false;
  std::vector<std::string> train;  // the `attend train` line
};

Options parse(int argc, char** argv) {
  Options o;
  int k = 1;
  for (; k < argc && std::string(argv[k]) != "train"; k += 2) {
    const std::string flag = argv[k];
    if (flag == "--per-shape") {
      o.per_shape = true, --k;
      continue;
    }
    if (k + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[k + 1];
    if (flag == "--steps") {
      o.steps = std::stoul(value);
    } else if (flag == "--reps") {
      o.reps = std::stoi(value);
    } else if (flag == "--precision") {
      o.precision = value;
      if (find_precision(value) == nullptr) throw std::invalid_argument("--precision " + value);
    } else if (flag == "--kernel-shapes") {
      if (value != "machine" && value != "runtime" && value != "fixed" && value != "both")
        throw std::invalid_argument("--kernel-shapes " + value + ": machine, runtime, fixed or both");
      o.kernel_shapes = value;
    } else {
      throw std::invalid_argument("unknown option " + flag);
    }
  }
  if (k >= argc || o.steps == 0 || o.reps < 1) {
    throw std::invalid_argument(
        "usage: translate_floor [--steps N] [--reps R] [--precision P] [--kernel-shapes machine|runtime|fixed|both] "
        "[--per-shape] train ... (an `attend train` line)");
  }
  o.train.assign(argv + k, argv + argc);
  return o;
}

// Records the shapes of the first `steps` training steps of the command (into `shapes`); returns the steps run and
// their target tokens.
std::pair<std::size_t, std::size_t> record_steps(const app::TrainOptions& options, std::size_t steps) {
  const std::unique_ptr<app::TaskData> data = options.task->make_data();
  app::ModelFile file = app::new_model_file(*options.task, *options.model, *data);
  const std::unique_ptr<app::Batches> batches =
      options.task->batches(*data, file.source_vocabulary, file.target_vocabulary, options.settings.batch_size);
  Rng order_rng(options.task->settings.seed + 7);  // run_train's batch order for a fresh training
  const std::vector<std::vector<std::size_t>> order = batches->epoch_order(order_rng);
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
  return {done, tokens};
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const app::CommandLine line = app::parse_command_line(o.train);
  if (line.command != app::Command::train || !line.train.resume.empty()) {
    throw std::invalid_argument(line.error.empty() ? "not a fresh `train` command line" : line.error);
  }
  openblas_set_num_threads(1);
  const auto [done, tokens] = record_steps(line.train, o.steps);
  const double threads = static_cast<double>(line.train.settings.threads);
  const std::vector<std::string> settings =
      o.kernel_shapes == "both" ? std::vector<std::string>{"runtime", "fixed"} : std::vector{o.kernel_shapes};
  // the shapes are recorded in float32, timed in the precision asked for
  std::vector<double> seconds(settings.size(), 0.0);
  double flop = 0;
  std::size_t products = 0, weight_products = 0;
  nlohmann::json per_shape = nlohmann::json::array();
  for (const auto& [shape, count] : shapes) {
    const std::vector<double> each = product_seconds(shape, o.reps, o.precision, settings);
    for (std::size_t i = 0; i < each.size(); ++i) seconds[i] += each[i] * double(count);
    const auto [ta, tb, m, n, k, a_weight, b_weight] = shape;
    flop += 2.0 * double(m) * double(n) * double(k) * double(count);
    products += count;
    if (a_weight || b_weight) weight_products += count;
    if (o.per_shape)
      per_shape.push_back({{"ta", ta}, {"tb", tb}, {"m", m}, {"n", n}, {"k", k}, {"count", count}, {"seconds", each}});
  }
  nlohmann::json result = {{"steps", done},
                           {"threads", line.train.settings.threads},
                           {"precision", o.precision},
                           {"kernel_shapes", o.kernel_shapes},
                           {"target_tokens", tokens},
                           {"gemm_gflop_per_step", flop / double(done) / 1e9},
                           {"products_per_step", double(products) / double(done)},
                           {"weight_products_per_step", double(weight_products) / double(done)},
                           {"distinct_shapes", shapes.size()}};
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const std::string suffix = settings.size() > 1 ? "_" + settings[i] : "";
    const double per_step = seconds[i] / double(done) / threads;
    result["floor_s_per_step" + suffix] = per_step;
    result["floor_tokens_per_s" + suffix] = double(tokens) / double(done) / per_step;
  }
  if (settings.size() > 1) result["fixed_over_runtime"] = seconds[1] / seconds[0];
  if (o.per_shape) result["shapes"] = per_shape;
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
