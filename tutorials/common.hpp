// The plumbing every tutorial program shares: its command line, its self-checks, its pictures, and the small helpers
// several programs use to read, print and compare numbers. These helpers are not part of any article and no chapter
// explains them beyond this paragraph: `--small` selects the fast settings `meson test` uses, `--figures DIR` makes
// the program write its SVG pictures into DIR (created, with any missing parents, when it does not exist yet), and
// parse_options, the first line of every main, also installs runtime/'s block cache as the tensors' storage and runs
// OpenBLAS on the kernels that fit the CPU, as the `attend` program does (runtime/block_cache.hpp, runtime/cpu.hpp).
// check() prints one line per self-check and remembers a failure, and
// exit_status() is what main returns. row_of() copies values of a tensor into a std::vector<double>, vector_string()
// prints such a vector as "[ 0.123 -0.456 ]", worst_difference() is the largest |a_k - b_k| of two of them, and
// sigmoid() is σ(v) = 1 / (1 + e^-v) on a plain double; encoder_config() is the untrained encoder chapters 5–7 share
// (chapter 5 quotes it). A helper that computes one of a chapter's equations stays in that chapter's program, next to
// the equation.
// Header-only: each program is a single translation unit.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "autograd/tensor.hpp"
#include "data/locate.hpp"
#include "data/vocabulary.hpp"
#include "models/train.hpp"
#include "nn/recurrent.hpp"
#include "plot/svg.hpp"
#include "runtime/block_cache.hpp"
#include "runtime/cpu.hpp"
#include "runtime/kernels.hpp"

namespace attend::tutorial {

struct Options {
  bool small = false;   // --small: the fast settings `meson test` uses (every check still runs)
  std::string figures;  // --figures DIR: write pictures there; empty: write none
  // --seed S (the chapters that train): added to every seed of the chapter's training — initial weights, batch order,
  // dropout — but not to its data, so that a chapter's claims can be measured over several trainings. 0: the run the
  // chapter quotes.
  std::uint64_t seed = 0;
};

namespace detail {

// Whether any check() has failed so far in this program.
inline bool& any_check_failed() {
  static bool failed = false;
  return failed;
}

inline std::string usage(bool takes_seed, bool takes_data_dir) {
  return std::string("usage: %s [--small] [--figures DIR]") + (takes_seed ? " [--seed S]" : "") +
         (takes_data_dir ? " [--data-dir DIR]" : "") + "\n";
}

[[noreturn]] inline void usage_error(const char* program, bool takes_seed, bool takes_data_dir = false) {
  std::fprintf(stderr, usage(takes_seed, takes_data_dir).c_str(), program);
  std::exit(2);
}

// S of "--seed S": decimal digits only.
inline bool parse_seed(const char* text, std::uint64_t& seed) {
  const std::string digits = text;
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  seed = std::stoull(digits);
  return true;
}

}  // namespace detail

// The options of a chapter's program. Every program reads --small, --figures DIR and --help (which prints the usage
// line to standard output and exits with 0); those that train (Seed::varies) also --seed S, and chapters 12 and 13
// (a non-null data_dir) --data-dir DIR: a folder that holds tatoeba/ and digits/, searched before the others of
// data/locate.hpp's rule (data_file below). Anything else, or a flag without
// its value, prints the usage line ("usage: <program> [--small] [--figures DIR] …") to standard error and exits with
// status 2.
enum class Seed { fixed, varies };

inline Options parse_options(int argc, char** argv, Seed seed = Seed::fixed, std::string* data_dir = nullptr) {
  attend::use_fitting_blas_kernels(argv);  // OpenBLAS on the kernels this CPU fits, as in the `attend` program
  attend::use_block_cache();  // tensors reuse freed blocks, as in the `attend` program (before the first tensor)
  try {
    attend::kernels::clone();  // the fused kernels' clone, chosen now: a wrong ATTEND_KERNELS is said at once
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(2);
  }
  const char* program = argc > 0 ? argv[0] : "tutorial";
  const bool takes_seed = seed == Seed::varies, takes_data_dir = data_dir != nullptr;
  Options options;
  for (int k = 1; k < argc; ++k) {
    const std::string argument = argv[k];
    const bool has_value = k + 1 < argc && argv[k + 1][0] != '\0';
    if (argument == "--small") {
      options.small = true;
    } else if (argument == "--figures" && has_value) {
      options.figures = argv[++k];
    } else if (argument == "--seed" && takes_seed && has_value && detail::parse_seed(argv[k + 1], options.seed)) {
      ++k;
    } else if (argument == "--data-dir" && takes_data_dir && has_value) {
      *data_dir = argv[++k];
    } else if (argument == "--help") {
      std::printf(detail::usage(takes_seed, takes_data_dir).c_str(), program);
      std::exit(0);
    } else {
      detail::usage_error(program, takes_seed, takes_data_dir);
    }
  }
  return options;
}

// A file of the course's data found by data/locate.hpp's rule (--data-dir DIR first); where it is not found, the
// program says so, naming the file, the folders searched and the `attend data fetch` command, and exits with status
// 77, which Meson counts as a skipped test.
inline std::string data_file(const std::string& relative, const std::string& data_dir) {
  try {
    return data::find_data_file(relative, data_dir);
  } catch (const data::DataNotFound& e) {
    std::fprintf(stderr, "needs data: %s\n", e.what());
    std::exit(77);
  }
}

// A seed of the chapter's training moved by --seed S (base + S), and, when S is not 0, a line saying so before the
// chapter's output: the numbers below then come from another training than the one the chapter quotes.
inline std::uint64_t seeded(const Options& options, std::uint64_t base) { return base + options.seed; }
inline void announce_seed(const Options& options) {
  if (options.seed != 0) {
    std::printf("(--seed %llu: every training seed of this chapter moved by %llu; the chapter quotes --seed 0)\n",
                static_cast<unsigned long long>(options.seed), static_cast<unsigned long long>(options.seed));
  }
}

// A self-check: prints "check: <what>: worst difference <d> (tolerance <t>) ok", or "... FAILED" (also when the
// difference is not a number), with %.3g; a failure is remembered for exit_status().
inline void check(const std::string& what, double worst_difference, double tolerance) {
  const bool ok = worst_difference <= tolerance;  // false for NaN
  if (!ok) detail::any_check_failed() = true;
  std::printf("check: %s: worst difference %.3g (tolerance %.3g) %s\n", what.c_str(), worst_difference, tolerance,
              ok ? "ok" : "FAILED");
}

// 1 if any check failed, else 0: main ends with `return exit_status();`.
inline int exit_status() { return detail::any_check_failed() ? 1 : 0; }

// Writes options.figures/<name> (an SVG string; chapter 1's graph: Graphviz DOT text) atomically when --figures was
// given, creating the folder if needed; prints "figure: <name>" either way, so the output is the same with and without
// --figures. A failure to write throws std::runtime_error naming the path.
inline void write_figure(const Options& options, const std::string& name, const std::string& svg) {
  if (!options.figures.empty()) {
    std::error_code error;
    std::filesystem::create_directories(options.figures, error);  // an error shows up as the write's failure below
    plot::write_file_atomically((std::filesystem::path(options.figures) / name).string(), svg);
  }
  // without --figures nothing is written, and the line says so
  std::printf(options.figures.empty() ? "figure: %s (not written: --figures DIR writes it)\n" : "figure: %s\n",
              name.c_str());
}

// n values of a tensor from flat position `first` on, in double: row_of(h, i * H, H) is h_i of a (1, T_x, H) tensor.
template <class T>
std::vector<double> row_of(const Tensor<T>& t, std::size_t first, std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t k = 0; k < n; ++k) v[k] = t.data()[first + k];
  return v;
}

// Row `row` of a tensor whose last axis is the one printed: (rows, n), or (batch, rows, n) with row counted across
// the batch.
inline std::vector<double> row_of(const Tensor<double>& t, std::size_t row) {
  const std::size_t n = t.shape()[t.rank() - 1];
  return row_of(t, row * n, n);
}

// "[ 0.123 -0.456  0.789 ]": every value with %7.3f.
inline std::string vector_string(const std::vector<double>& v) {
  std::string s = "[";
  char cell[16];
  for (const double x : v) {
    std::snprintf(cell, sizeof cell, "%7.3f", x + 0.0);  // + 0.0 prints -0 as 0
    s += cell;
  }
  return s + " ]";
}

// max_k |a_k - b_k| over the positions of a (b is at least as long).
inline double worst_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) worst = std::max(worst, std::abs(a[k] - b[k]));
  return worst;
}

// Wall-clock seconds since `start`, for the chapters' "time: ..." lines (the only lines that differ between runs).
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A progress report for a training of `steps` steps: "  training bahdanau: step 400/2000, loss 0.912" on standard
// error at every tenth of the run (standard output, what the chapters quote, is left alone).
inline std::function<void(const models::TrainStep&)> progress(const std::string& what, std::size_t steps) {
  return [what, steps](const models::TrainStep& done) {
    if (done.step % std::max<std::size_t>(1, steps / 10) == 0 || done.step == steps)
      std::fprintf(stderr, "  training %s: step %zu/%zu, loss %.3f\n", what.c_str(), done.step, steps, done.loss);
  };
}

// σ(v) = 1 / (1 + e^-v) on a plain double, for the computations by hand (the library's sigmoid works on the tape).
inline double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// The characters of a text as ids of a character vocabulary (no <sos>/<eos>: models::make_batch adds them).
inline std::vector<std::int64_t> ids_of(const data::Vocabulary& vocabulary, const std::string& text) {
  return vocabulary.encode(data::utf8_characters(text));
}

// (W v)_row = Σ_k W[row, first + k] v_k: one row of a weight matrix (out, in) times a vector, from column `first` on.
inline double row_times(const Tensor<float>& W, std::size_t row, const std::vector<double>& v, std::size_t first = 0) {
  double sum = 0;
  for (std::size_t k = 0; k < v.size(); ++k) sum += W.at({row, first + k}) * v[k];
  return sum;
}

// [docs:encoder-config]
// The encoder of chapters 5, 6 and 7: chapter 2's GRU encoder over the source's T_x words (ids 1..T_x; 0 is padding),
// embeddings of size E and states of size H.
inline nn::EncoderConfig encoder_config(std::size_t T_x, std::size_t E, std::size_t H) {
  nn::EncoderConfig config;
  config.vocab_size = T_x + 1;
  config.embedding_dim = E;
  config.padding_id = 0;
  config.rnn.cell = nn::CellKind::gru;
  config.rnn.hidden_size = H;
  return config;
}
// [docs:end]

}  // namespace attend::tutorial
