// bench/attribution_cost: what gradient attribution (POST /v1/explain with "attribution": true) costs beside the
// explanation alone, in the process, the model loaded once: for each input, Model::explain (the call attend serve's
// explain job makes) and then Model::attribute over its output (gradient × input and integrated gradients in --steps
// points, plus the Transformer's rollout), against Model::explain alone — the two timed alternately, input by input,
// the one that goes first changing every input (so that a drift of the machine's speed falls on both).
//
//   attribution_cost --model M.safetensors --inputs FILE [--count 20] [--steps 32] [--beam 1] [--rounds 2]
//
// Each of the first --count inputs (one a line, text models) is explained with attribution once as a warm-up, then
// --rounds times each way. Prints one JSON line: inputs, rounds, steps, the median milliseconds of an explanation
// alone and with attribution, the median of the per-input ratios (with attribution ÷ alone) with its distribution-free
// interval (the order statistics whose binomial coverage is at least 95 %, as bench/median_interval.py's), the mean
// number of output tokens (Hypothesis::tokens), the attribution's milliseconds per output token (the median of
// the inputs' (with − alone) ÷ tokens), and how many methods the attributions held. One OpenBLAS thread (attend
// serve's worker decodes on one).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "apps/model_file.hpp"
#include "runtime/cpu.hpp"

namespace {

using namespace attend;
using namespace attend::app;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The distribution-free interval of the median: (x(k), x(n+1−k)) for the largest k with 1 − 2·P(Bin(n, ½) < k) ≥
// 0.95 (at least 1), and the coverage reached.
struct Interval {
  double low, high, coverage;
};
Interval median_interval(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  std::vector<double> below(n + 1);  // P(Bin(n, ½) = i)
  for (std::size_t i = 0; i <= n; ++i)
    below[i] = std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
  const auto coverage = [&](std::size_t k) {  // 1 − 2·P(Bin < k)
    double p = 0;
    for (std::size_t i = 0; i < k; ++i) p += below[i];
    return 1 - 2 * p;
  };
  std::size_t k = 1;
  while (k + 1 <= n / 2 && coverage(k + 1) >= 0.95) ++k;
  return {values[k - 1], values[n - k], coverage(k)};
}

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Settings {
  std::size_t count = 20, steps = 32, beam = 1, rounds = 2;
};

int run(const std::string& model_path, const std::string& inputs_path, const Settings& s) {
  set_threads(1);
  ModelFile file = load_model_file(model_path);
  std::ifstream in(inputs_path);
  std::vector<std::string> texts;
  for (std::string line; texts.size() < s.count && std::getline(in, line);)
    if (!line.empty()) texts.push_back(line);
  if (texts.empty()) throw std::runtime_error(inputs_path + ": no inputs");
  const auto wanted = [] { return true; };
  std::vector<double> alone, with, ratios, per_token;
  std::size_t tokens = 0, methods = 0;  // methods: what the attributions hold, so that none is optimised away
  for (std::size_t k = 0; k < texts.size(); ++k) {
    ModelInputs one;
    one.sources.push_back(file.task->encode_source(file.source_vocabulary, texts[k]));
    const models::SearchOptions search{s.beam, 0, 1.0};
    const Explanation warm = file.model->explain(one, search);
    methods += file.model->attribute(one, warm.output, s.steps, wanted).size();  // the warm-up
    tokens += warm.output.tokens.size();
    for (std::size_t r = 0; r < s.rounds; ++r) {
      double ms[2] = {0, 0};
      for (const std::size_t which : {(k + r) % 2, 1 - (k + r) % 2}) {
        const auto start = Clock::now();
        const Explanation x = file.model->explain(one, search);
        if (which == 1) methods += file.model->attribute(one, x.output, s.steps, wanted).size();
        ms[which] = milliseconds_since(start);
      }
      alone.push_back(ms[0]);
      with.push_back(ms[1]);
      ratios.push_back(ms[1] / ms[0]);
      per_token.push_back((ms[1] - ms[0]) / static_cast<double>(std::max<std::size_t>(warm.output.tokens.size(), 1)));
    }
  }
  const Interval ratio = median_interval(ratios);
  std::printf(
      "{\"inputs\": %zu, \"rounds\": %zu, \"steps\": %zu, \"explain_ms\": %.3f, \"with_attribution_ms\": %.3f, "
      "\"ratio\": %.3f, \"ratio_low\": %.3f, \"ratio_high\": %.3f, \"coverage\": %.3f, \"mean_output_tokens\": %.2f, "
      "\"attribution_ms_per_token\": %.3f, \"methods\": %zu}\n",
      texts.size(), s.rounds, s.steps, median(alone), median(with), median(ratios), ratio.low, ratio.high,
      ratio.coverage, static_cast<double>(tokens) / static_cast<double>(texts.size()), median(per_token), methods);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  attend::use_fitting_blas_kernels(argv);  // as the attend program does: OpenBLAS on the kernels this CPU fits
  CLI::App app{"the cost of /v1/explain's attribution beside the explanation alone"};
  std::string model, inputs;
  Settings s;
  app.add_option("--model", model, "a model file (a text model)")->required();
  app.add_option("--inputs", inputs, "inputs, one a line")->required();
  app.add_option("--count", s.count, "how many inputs to time")->check(CLI::Range(1, 100000));
  app.add_option("--steps", s.steps, "integrated gradients' points")->check(CLI::Range(1, 4096));
  app.add_option("--beam", s.beam, "beam width of the explanation")->check(CLI::Range(1, 64));
  app.add_option("--rounds", s.rounds, "timed pairs an input")->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  try {
    return run(model, inputs, s);
  } catch (const std::exception& e) {
    std::cerr << "attribution_cost: " << e.what() << "\n";
    return 1;
  }
}
