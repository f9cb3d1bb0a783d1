// bench/decode_one: what `attend predict` spends on one input once its model is loaded — the text encoded, decoded
// alone (Model::decode, the call predict makes) and the output joined — timed in the process, each input on its own,
// for bench/compare_serve's bound on a lone client of attend serve (its p50 within 1.2× of this). A process-level
// timing (predict with an input less predict without) is too noisy for a sub-millisecond decode. With --max-length 1
// the decode stops after its first token: the encoder and one decoder step, the bound on a stream's first token. With
// --idle-us N the thread sleeps N µs before each timed decode, as attend serve's decoding thread waits between a lone
// client's requests, for what a core left idle costs the decode that follows.
//
//   decode_one --model M.safetensors --inputs FILE [--count 200] [--beam 1] [--threads 1] [--max-length N]
//              [--idle-us N]
//
// Each of the first --count inputs (one a line, text models) is decoded once as a warm-up and then timed; prints one
// JSON line: inputs, median_ms, p10_ms, p90_ms.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "apps/commands.hpp"
#include "apps/model_file.hpp"
#include "runtime/cpu.hpp"

namespace {

using namespace attend;
using namespace attend::app;

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5)];
}

int run(const std::string& model_path, const std::string& inputs_path, std::size_t count, std::size_t beam,
        std::size_t threads, std::size_t max_length, std::size_t idle_us) {
  set_threads(threads);
  ModelFile file = load_model_file(model_path);
  std::ifstream in(inputs_path);
  std::vector<std::string> texts;
  for (std::string line; texts.size() < count && std::getline(in, line);)
    if (!line.empty()) texts.push_back(line);
  if (texts.empty()) throw std::runtime_error(inputs_path + ": no inputs");
  std::vector<double> ms;
  std::size_t tokens = 0;  // what the outputs hold, so that the work is not optimised away
  for (const std::string& text : texts) {
    for (int pass = 0; pass < 2; ++pass) {  // a warm-up, then the timed one
      if (pass == 1 && idle_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(idle_us));
      const auto start = std::chrono::steady_clock::now();
      ModelInputs inputs;
      inputs.sources.push_back(file.task->encode_source(file.source_vocabulary, text));
      const std::vector<models::Hypothesis> outputs = file.model->decode(inputs, {beam, max_length, 1.0});
      tokens += file.task->join_target(file.target_vocabulary.decode(outputs.front().tokens)).size();
      if (pass == 1)
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
  }
  std::printf("{\"inputs\": %zu, \"median_ms\": %.4f, \"p10_ms\": %.4f, \"p90_ms\": %.4f, \"output_bytes\": %zu}\n",
              ms.size(), percentile(ms, 0.5), percentile(ms, 0.1), percentile(ms, 0.9), tokens);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  attend::use_fitting_blas_kernels(argv);  // as the attend program does: OpenBLAS on the kernels this CPU fits
  CLI::App app{"attend predict's time for one input, model load excluded"};
  std::string model, inputs;
  std::size_t count = 200, beam = 1, threads = 1, max_length = 0, idle_us = 0;
  app.add_option("--model", model, "a model file")->required();
  app.add_option("--inputs", inputs, "inputs, one a line")->required();
  app.add_option("--count", count, "how many inputs to time")->check(CLI::Range(1, 100000));
  app.add_option("--beam", beam, "beam width, as predict --beam")->check(CLI::Range(1, 64));
  app.add_option("--threads", threads, "as predict --threads")->check(CLI::Range(1, 256));
  app.add_option("--max-length", max_length, "output tokens at most (0: the model's)")->check(CLI::Range(0, 100000));
  app.add_option("--idle-us", idle_us, "microseconds of sleep before each timed decode")->check(CLI::Range(0, 1000000));
  CLI11_PARSE(app, argc, argv);
  try {
    return run(model, inputs, count, beam, threads, max_length, idle_us);
  } catch (const std::exception& e) {
    std::cerr << "decode_one: " << e.what() << "\n";
    return 1;
  }
}
