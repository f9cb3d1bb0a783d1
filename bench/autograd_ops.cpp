// bench_autograd: micro-benchmarks of the autograd tape, for engineers tuning it (how to run it and what each column
// means: bench/README.md). Part 1 measures what the tape itself costs per op on tiny (4,8) tensors — the regime of an
// RNN step with a small batch — by timing the same arithmetic with and without the tape, forward only and
// forward+backward. Part 2 compares the matmul op's forward pass with a raw blas_gemm into a preallocated buffer
// (the target: within 5% from 256x256 up). Every number is the median of warmed-up repetitions timed with
// std::chrono::steady_clock, with the variants of one row interleaved so that a change in machine load hits them alike,
// and a page-fault count next to the matmul times (fresh memory from the kernel is what makes an op slower than gemm).
// The program reports times and ratios and never fails on a timing. "Raw" products call the engine's BLAS wrapper
// (autograd/blas.hpp: OpenBLAS's sgemm, its sgemv for at most 4 rows), so both sides do the same product. This file
// includes OpenBLAS's <cblas.h> (for its thread settings), so it must not include xtensor-blas (toolchain notes §9).
#include <cblas.h>
#include <sys/resource.h>
#include <xmmintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "autograd/blas.hpp"
#include "autograd/ops.hpp"
#include "autograd/tape.hpp"
#include "autograd/tensor.hpp"
#include "runtime/block_cache.hpp"

namespace {

using attend::Parameter;
using attend::Shape;
using attend::Tape;
using attend::Tensor;
using attend::Variable;
using Matrix = xt::xtensor<float, 2>;
using Vector = xt::xtensor<float, 1>;
using Clock = std::chrono::steady_clock;

// ---- options -----------------------------------------------------------------------------------------------------

struct Options {
  bool quick = false;  // a very short run: the smoke test of `meson test`
  bool json = false;   // also print one JSON line per measurement
  bool cold = false;   // do not prime timed runs: show what fresh memory from the kernel costs
  int threads = 1;     // OpenBLAS threads
};

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: bench_autograd [--quick] [--json] [--cold] [--threads N]\n"
               "  --quick      a very short run (smoke test; the numbers are not meaningful)\n"
               "  --json       also print one JSON line per measurement (lines starting with '{')\n"
               "  --cold       do not prime each timed run with an untimed call (shows the cost of page faults)\n"
               "  --threads N  OpenBLAS threads (default 1)\n");
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--cold") {
      options.cold = true;
    } else if (arg == "--threads" && i + 1 < argc) {
      options.threads = std::atoi(argv[++i]);
      if (options.threads < 1) {
        std::fprintf(stderr, "bench_autograd: --threads needs a positive number, got '%s'\n", argv[i]);
        std::exit(2);
      }
    } else if (arg == "--help" || arg == "-h") {
      print_usage(stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "bench_autograd: unknown argument '%s'\n", arg.c_str());
      print_usage(stderr);
      std::exit(2);
    }
  }
  return options;
}

// ---- timing ------------------------------------------------------------------------------------------------------

// Tells the compiler that `value` is read, so a computation whose result is otherwise unused is not removed.
template <class T>
void keep(const T& value) {
  __asm__ __volatile__("" : : "r"(&value) : "memory");
}

double elapsed_ns(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

// Minor page faults of the process so far: a fresh page touched for the first time (e.g. memory the allocator has
// just taken from, or given back to, the kernel) costs a fault, which shows up in the times.
long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

double median_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

struct Summary {
  double median = 0, min = 0, max = 0;  // ns per op or per call
  double faults = 0;                    // median minor page faults per op or per call
};

// One variant of a measurement: run(count) performs `count` units of work (tape segments, or calls).
using Variant = std::function<void(std::size_t count)>;

// Runs every variant `warmup` times, then `reps` rounds in which each variant runs once; round r starts with variant
// r mod V, so that no variant always follows the same one. With `prime`, each timed run of `count` units is preceded
// by one untimed unit of the same variant, so that the allocator has just freed what the timed run allocates (the
// steady state of a training loop); without it, the first unit may pay page faults for memory that glibc gave back to
// the kernel after another variant freed it. Returns, per variant, the summary of its run times divided by `count`.
std::vector<Summary> measure_interleaved(const std::vector<Variant>& variants, std::size_t count, int warmup, int reps,
                                         bool prime) {
  const std::size_t n = variants.size();
  for (int w = 0; w < warmup; ++w)
    for (const Variant& run : variants) run(count);
  std::vector<std::vector<double>> times(n), faults(n);
  for (int r = 0; r < reps; ++r) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t v = (static_cast<std::size_t>(r) + j) % n;
      if (prime) variants[v](1);
      const long faults_before = minor_faults();
      const Clock::time_point start = Clock::now();
      variants[v](count);
      times[v].push_back(elapsed_ns(start) / static_cast<double>(count));
      faults[v].push_back(static_cast<double>(minor_faults() - faults_before) / static_cast<double>(count));
    }
  }
  std::vector<Summary> result;
  for (std::size_t v = 0; v < n; ++v) {
    const auto [min, max] = std::minmax_element(times[v].begin(), times[v].end());
    result.push_back({median_of(times[v]), *min, *max, median_of(faults[v])});
  }
  return result;
}

// ---- raw BLAS ----------------------------------------------------------------------------------------------------

// C (m,n) = op(A) op(B) + beta C, row-major, float32: the call the matmul op makes, into memory given.
void sgemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
           float beta, float* c) {
  attend::blas_gemm(trans_a, trans_b, m, n, k, 1.0f, a, trans_a ? m : k, b, trans_b ? k : n, beta, c, n);
}

// ---- part 1: the tape's cost per op on tiny tensors ----------------------------------------------------------------

constexpr std::size_t rows = 4, cols = 8;  // every value of part 1 is (rows, cols), or a row (cols,)
constexpr std::size_t segment = 32;        // ops recorded between two clears of the tape

enum class TinyOp { add, mul, tanh, sigmoid, matmul, select, softmax };

struct TinyOpInfo {
  TinyOp op;
  const char* name;
  const char* shapes;
};

const TinyOpInfo tiny_ops[] = {
    {TinyOp::add, "add", "(4,8)+(4,8)"},
    {TinyOp::mul, "mul", "(4,8)*(4,8)"},
    {TinyOp::tanh, "tanh", "(4,8)"},
    {TinyOp::sigmoid, "sigmoid", "(4,8)"},
    {TinyOp::matmul, "matmul", "(4,8)@(8,8)"},
    {TinyOp::select, "select*", "(4,8)[i]->(8,)"},
    {TinyOp::softmax, "softmax", "(4,8) axis -1"},
};

// The inputs of part 1, owned outside the tape like a layer's weights, plus plain-xtensor copies for the baseline.
struct TinyInputs {
  Parameter<float> x;  // (4,8) in [-1,1]: where each chain starts
  Parameter<float> b;  // (4,8) in [0.9,1.1]: the other operand of add and mul (near 1: 32 products stay normal)
  Parameter<float> w;  // (8,8) 0.9 I + noise in [-0.05,0.05]: matmul's right operand (a 32-step chain stays bounded)
  Tensor<float> seed_chain;            // (4,8) ones: d(output) for the backward of a chain
  Tensor<float> seed_joined;           // (segment·8,) ones: d(output) for the backward of the joined selects
  Matrix x_m, b_m, w_m, seed_chain_m;  // the same values as xtensor matrices
  Vector seed_joined_v;
  Matrix dx_m, db_m, dw_m;  // the plain backward's parameter gradients
};

Matrix to_matrix(const Tensor<float>& t) {
  Matrix m = Matrix::from_shape({t.shape()[0], t.shape()[1]});
  std::copy(t.data(), t.data() + t.size(), m.begin());
  return m;
}

TinyInputs make_tiny_inputs() {
  attend::Rng rng(20240601);
  TinyInputs in;
  in.x = Parameter<float>(rng.uniform_tensor<float>(Shape{rows, cols}, -1.0, 1.0));
  in.b = Parameter<float>(rng.uniform_tensor<float>(Shape{rows, cols}, 0.9, 1.1));
  Tensor<float> w = rng.uniform_tensor<float>(Shape{cols, cols}, -0.05, 0.05);
  for (std::size_t i = 0; i < cols; ++i) w.at({i, i}) += 0.9f;
  in.w = Parameter<float>(w);
  in.seed_chain = Tensor<float>(Shape{rows, cols}, 1.0f);
  in.seed_joined = Tensor<float>(Shape{segment * cols}, 1.0f);
  in.x_m = to_matrix(in.x.value);
  in.b_m = to_matrix(in.b.value);
  in.w_m = to_matrix(in.w.value);
  in.seed_chain_m = to_matrix(in.seed_chain);
  in.seed_joined_v = xt::ones<float>({segment * cols});
  in.dx_m = xt::zeros<float>({rows, cols});
  in.db_m = xt::zeros<float>({rows, cols});
  in.dw_m = xt::zeros<float>({cols, cols});
  return in;
}

// One tape segment: clear, record the three parameters, `segment` ops, and (with_backward) one reverse sweep from the
// last value. Every op except select feeds its output into the next one (a chain, so one backward passes through all
// of them); select takes row i mod 4 of x, and the rows are joined by one concat at the end for the same reason
// (concat, not stack: attend's stack adds a reshape node per input).
void tape_segment(Tape<float>& tape, TinyOp op, TinyInputs& in, bool with_backward) {
  tape.clear();
  const Variable<float> x = tape.param(in.x), b = tape.param(in.b), w = tape.param(in.w);
  Variable<float> y = x;
  std::vector<Variable<float>> selected;  // select: the rows taken, (8,) each
  if (op == TinyOp::select) selected.reserve(segment);
  for (std::size_t i = 0; i < segment; ++i) {
    switch (op) {
      case TinyOp::add:
        y = attend::add(y, b);
        break;
      case TinyOp::mul:
        y = attend::mul(y, b);
        break;
      case TinyOp::tanh:
        y = attend::tanh(y);
        break;
      case TinyOp::sigmoid:
        y = attend::sigmoid(y);
        break;
      case TinyOp::matmul:
        y = attend::matmul(y, w);
        break;
      case TinyOp::select:
        selected.push_back(attend::select(x, 0, i % rows));
        break;
      case TinyOp::softmax:
        y = attend::softmax(y, -1);
        break;
    }
  }
  if (op == TinyOp::select) y = attend::concat(selected, 0);  // (segment·8,)
  if (with_backward) tape.backward(y, op == TinyOp::select ? in.seed_joined : in.seed_chain);
  keep(y.value().data()[0]);
}

// softmax along the rows of x into y, computed like autograd/softmax.cpp (max, sum of exp, exp(x - m - ln total)).
void softmax_rows(const Matrix& x, Matrix& y) {
  for (std::size_t r = 0; r < x.shape()[0]; ++r) {
    const float* in = &x(r, 0);
    float* out = &y(r, 0);
    const std::size_t n = x.shape()[1];
    float m = in[0];
    for (std::size_t k = 1; k < n; ++k) m = std::max(m, in[k]);
    float total = 0;
    for (std::size_t k = 0; k < n; ++k) total += std::exp(in[k] - m);
    const float log_total = std::log(total);
    for (std::size_t k = 0; k < n; ++k) out[k] = std::exp(in[k] - m - log_total);
  }
}

// The reverse sweep of plain_segment over a chain of ops (every op but select): adds into dx_m, db_m, dw_m.
void chain_backward(TinyOp op, TinyInputs& in, const std::vector<Matrix>& values) {
  // g = d(value i+1), walking the chain from its end; value 0 is x.
  Matrix g = in.seed_chain_m;
  for (std::size_t i = segment; i-- > 0;) {
    const Matrix& y_in = i == 0 ? in.x_m : values[i - 1];
    const Matrix& y_out = values[i];
    switch (op) {
      case TinyOp::add:
        xt::noalias(in.db_m) += g;  // d(y_in) = g: nothing to compute
        break;
      case TinyOp::mul: {
        xt::noalias(in.db_m) += g * y_in;
        Matrix next = g * in.b_m;
        g = std::move(next);
        break;
      }
      case TinyOp::tanh: {
        Matrix next = g * (1.0f - y_out * y_out);
        g = std::move(next);
        break;
      }
      case TinyOp::sigmoid: {
        Matrix next = g * y_out * (1.0f - y_out);
        g = std::move(next);
        break;
      }
      case TinyOp::matmul: {
        // dW (8,8) += y_inᵀ (8,4) g (4,8);  d(y_in) (4,8) = g (4,8) Wᵀ (8,8)
        sgemm(true, false, cols, cols, rows, y_in.data(), g.data(), 1.0f, in.dw_m.data());
        Matrix next = Matrix::from_shape({rows, cols});
        sgemm(false, true, rows, cols, cols, g.data(), in.w_m.data(), 0.0f, next.data());
        g = std::move(next);
        break;
      }
      case TinyOp::softmax: {
        // d(y_in)_k = y_k (g_k - Σ_j g_j y_j), row by row
        Matrix next = Matrix::from_shape({rows, cols});
        for (std::size_t r = 0; r < rows; ++r) {
          float dot = 0;
          for (std::size_t k = 0; k < cols; ++k) dot += g(r, k) * y_out(r, k);
          for (std::size_t k = 0; k < cols; ++k) next(r, k) = y_out(r, k) * (g(r, k) - dot);
        }
        g = std::move(next);
        break;
      }
      case TinyOp::select:
        break;
    }
  }
  xt::noalias(in.dx_m) += g;
  keep(in.dx_m.data()[0]);
}

// The same segment without the tape: each op's result is evaluated into a new xtensor and kept in `values` (the tape
// keeps every value too), and with_backward a hand-written reverse sweep over the kept values adds into dx_m, db_m,
// dw_m. `values` and `rows_taken` have capacity for a whole segment, so pointers into them stay valid.
void plain_segment(TinyOp op, TinyInputs& in, bool with_backward, std::vector<Matrix>& values,
                   std::vector<Vector>& rows_taken) {
  values.clear();
  rows_taken.clear();
  Vector joined;  // select: the rows one after the other, (segment·8,)
  const Matrix* y = &in.x_m;
  for (std::size_t i = 0; i < segment; ++i) {
    switch (op) {
      case TinyOp::add:
        values.emplace_back(*y + in.b_m);
        break;
      case TinyOp::mul:
        values.emplace_back(*y * in.b_m);
        break;
      case TinyOp::tanh:
        values.emplace_back(xt::tanh(*y));
        break;
      case TinyOp::sigmoid:
        values.emplace_back(1.0f / (1.0f + xt::exp(-*y)));
        break;
      case TinyOp::matmul:
        values.push_back(Matrix::from_shape({rows, cols}));
        sgemm(false, false, rows, cols, cols, y->data(), in.w_m.data(), 0.0f, values.back().data());
        break;
      case TinyOp::select:
        rows_taken.emplace_back(xt::view(in.x_m, i % rows, xt::all()));
        break;
      case TinyOp::softmax:
        values.push_back(Matrix::from_shape({rows, cols}));
        softmax_rows(*y, values.back());
        break;
    }
    if (op != TinyOp::select) y = &values.back();
  }
  if (op == TinyOp::select) {
    joined = Vector::from_shape({segment * cols});
    for (std::size_t i = 0; i < segment; ++i) std::copy(rows_taken[i].begin(), rows_taken[i].end(), &joined(i * cols));
    keep(joined.data()[0]);
  } else {
    keep(values.back().data()[0]);
  }
  if (!with_backward) return;

  if (op == TinyOp::select) {
    const Vector g = in.seed_joined_v;  // d(joined), (segment·8,)
    for (std::size_t i = 0; i < segment; ++i) {
      const Vector g_row = xt::view(g, xt::range(i * cols, (i + 1) * cols));  // d(row i), (8,)
      xt::noalias(xt::view(in.dx_m, i % rows, xt::all())) += g_row;
    }
    keep(in.dx_m.data()[0]);
    return;
  }
  chain_backward(op, in, values);
}

struct RunSize {
  std::size_t segments;  // per repetition; ops per repetition = segments · segment
  int warmup, reps;
};

void json_tiny(const TinyOpInfo& info, const char* pass, const char* variant, const Summary& s, const RunSize& size) {
  std::printf(
      "{\"bench\":\"tape_op\",\"op\":\"%s\",\"shapes\":\"%s\",\"pass\":\"%s\",\"variant\":\"%s\","
      "\"ns_per_op\":%.2f,\"ns_per_op_min\":%.2f,\"ns_per_op_max\":%.2f,\"page_faults_per_op\":%.3f,"
      "\"ops_per_rep\":%zu,"
      "\"segment\":%zu,\"reps\":%d}\n",
      info.name, info.shapes, pass, variant, s.median, s.min, s.max, s.faults, size.segments * segment, segment,
      size.reps);
}

void run_tiny_ops(const Options& options) {
  const RunSize size = options.quick ? RunSize{10, 1, 3} : RunSize{1000, 2, 9};
  std::printf(
      "\nPart 1: cost per op on tiny tensors, float32. ns per op = time of %zu ops / %zu, the tape cleared "
      "every %zu ops;\n        median of %d repetitions after %d warm-ups, the four variants of a row "
      "interleaved%s.\n\n",
      size.segments * segment, size.segments * segment, segment, size.reps, size.warmup,
      options.cold ? " (--cold: runs not primed)" : "");
  std::printf("%-8s %-15s | %8s %8s %8s %6s | %8s %8s %8s %6s\n", "", "", "forward", "", "", "", "fwd+bwd", "", "", "");
  std::printf("%-8s %-15s | %8s %8s %8s %6s | %8s %8s %8s %6s\n", "op", "shapes", "plain", "tape", "overhd", "x",
              "plain", "tape", "overhd", "x");
  std::printf("%s\n", std::string(98, '-').c_str());

  TinyInputs in = make_tiny_inputs();
  Tape<float> tape;
  std::vector<Matrix> values;
  values.reserve(segment);
  std::vector<Vector> rows_taken;
  rows_taken.reserve(segment);
  for (const TinyOpInfo& info : tiny_ops) {
    const TinyOp op = info.op;
    auto segments_of = [&](auto body) {
      return [body](std::size_t count) {
        for (std::size_t s = 0; s < count; ++s) body();
      };
    };
    const std::vector<Variant> variants = {
        segments_of([&] { plain_segment(op, in, false, values, rows_taken); }),
        segments_of([&] { tape_segment(tape, op, in, false); }),
        segments_of([&] { plain_segment(op, in, true, values, rows_taken); }),
        segments_of([&] { tape_segment(tape, op, in, true); }),
    };
    std::vector<Summary> r = measure_interleaved(variants, size.segments, size.warmup, size.reps, !options.cold);
    for (Summary& x : r) {  // per segment → per op
      x.median /= segment, x.min /= segment, x.max /= segment, x.faults /= segment;
    }
    std::printf("%-8s %-15s | %8.1f %8.1f %8.1f %6.1f | %8.1f %8.1f %8.1f %6.1f\n", info.name, info.shapes, r[0].median,
                r[1].median, r[1].median - r[0].median, r[1].median / r[0].median, r[2].median, r[3].median,
                r[3].median - r[2].median, r[3].median / r[2].median);
    if (options.json) {
      json_tiny(info, "forward", "plain", r[0], size);
      json_tiny(info, "forward", "tape", r[1], size);
      json_tiny(info, "forward+backward", "plain", r[2], size);
      json_tiny(info, "forward+backward", "tape", r[3], size);
    }
  }
  tape.clear();
  std::printf(
      "\n  plain  = the same arithmetic in xtensor (blas_gemm for matmul) evaluated into new tensors, no tape;\n"
      "  tape   = the attend ops recorded on a Tape (3 parameter leaves per segment; backward: one sweep per "
      "segment);\n"
      "  overhd = tape - plain (ns per op), x = tape / plain.\n"
      "  * select: row i mod 4 of x; the %zu rows of a segment are joined by one concat (its cost is spread over "
      "them).\n",
      segment);
}

// ---- part 2: the matmul op against raw sgemm -----------------------------------------------------------------------

struct MatmulCase {
  std::size_t m, k, n;
};

const MatmulCase matmul_cases[] = {
    {64, 64, 64},       {128, 128, 128}, {256, 256, 256}, {512, 512, 512},
    {1024, 1024, 1024}, {32, 256, 384},  // a GRU step's input projection: (batch 32, input 256) @ (256, 3·hidden 128)
    {64, 512, 1536},                     // the same with batch 64, input 512, hidden 512
};

void run_matmul(const Options& options) {
  const int warmup = options.quick ? 1 : 2, reps = options.quick ? 3 : 9;
  const double target_ns = options.quick ? 1e6 : 40e6;  // time of one run of one variant
  std::printf(
      "\nPart 2: the matmul op's forward pass against raw blas_gemm, float32, C = A B.\n"
      "        Time per call, median of %d repetitions of ~%.0f ms each after %d warm-ups, variants "
      "interleaved;\n"
      "        %s.\n\n",
      reps, target_ns / 1e6, warmup,
      options.cold ? "--cold: timed runs are not primed, so the first call may fault in fresh pages"
                   : "each timed run follows one untimed call of the same variant (allocator steady state)");
  std::printf("%-21s | %9s %7s | %9s %9s | %9s %7s %7s | %6s %s\n", "(m,k)@(k,n)", "raw us", "GFLOP/s", "new us",
              "zeroed us", "matmul us", "GFLOP/s", "faults", "mm/raw", "target");
  std::printf("%s\n", std::string(110, '-').c_str());

  attend::Rng rng(7);
  for (const MatmulCase& c : matmul_cases) {
    Parameter<float> a(rng.uniform_tensor<float>(Shape{c.m, c.k}, -1.0, 1.0));
    Parameter<float> b(rng.uniform_tensor<float>(Shape{c.k, c.n}, -1.0, 1.0));
    Vector out = xt::zeros<float>({c.m * c.n});  // the raw call's preallocated C
    const float* a_data = a.value.data();
    const float* b_data = b.value.data();
    Tape<float> tape;

    // Calls per run: enough for about target_ns, estimated from a few raw calls.
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < 3; ++i) sgemm(false, false, c.m, c.n, c.k, a_data, b_data, 0.0f, out.data());
    const double one_call_ns = elapsed_ns(start) / 3;
    const std::size_t calls = std::max<std::size_t>(1, static_cast<std::size_t>(target_ns / one_call_ns));

    const std::vector<Variant> variants = {
        // raw: sgemm into the preallocated buffer
        [&](std::size_t count) {
          for (std::size_t i = 0; i < count; ++i) {
            sgemm(false, false, c.m, c.n, c.k, a_data, b_data, 0.0f, out.data());
            keep(out.data()[0]);
          }
        },
        // new: a fresh uninitialised (m·n) buffer per call, then sgemm into it
        [&](std::size_t count) {
          for (std::size_t i = 0; i < count; ++i) {
            Vector fresh = Vector::from_shape({c.m * c.n});
            sgemm(false, false, c.m, c.n, c.k, a_data, b_data, 0.0f, fresh.data());
            keep(fresh.data()[0]);
          }
        },
        // zeroed: a fresh Tensor per call (its constructor zero-fills, as the matmul op's output does), then sgemm
        [&](std::size_t count) {
          for (std::size_t i = 0; i < count; ++i) {
            Tensor<float> fresh(Shape{c.m, c.n});
            sgemm(false, false, c.m, c.n, c.k, a_data, b_data, 0.0f, fresh.data());
            keep(fresh.data()[0]);
          }
        },
        // matmul: what a training step does per product — clear the tape, record the parameters, record the op
        [&](std::size_t count) {
          for (std::size_t i = 0; i < count; ++i) {
            tape.clear();
            const Variable<float> y = attend::matmul(tape.param(a), tape.param(b));
            keep(y.value().data()[0]);
          }
        },
    };
    const std::vector<Summary> r = measure_interleaved(variants, calls, warmup, reps, !options.cold);
    tape.clear();
    const double flop = 2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k);
    const double ratio = r[3].median / r[0].median;
    const bool large = c.m >= 256 && c.n >= 256 && c.k >= 256;
    const std::string label =
        std::to_string(c.m) + "x" + std::to_string(c.k) + " @ " + std::to_string(c.k) + "x" + std::to_string(c.n);
    const char* verdict = !large ? "-" : ratio <= 1.05 ? "ok (<=1.05)" : "MISSED (>1.05)";
    std::printf("%-21s | %9.1f %7.1f | %9.1f %9.1f | %9.1f %7.1f %7.1f | %6.3f %s\n", label.c_str(), r[0].median / 1e3,
                flop / r[0].median, r[1].median / 1e3, r[2].median / 1e3, r[3].median / 1e3, flop / r[3].median,
                r[3].faults, ratio, verdict);
    if (options.json) {
      const char* names[] = {"raw_sgemm", "new_buffer_sgemm", "zeroed_tensor_sgemm", "matmul_op"};
      for (std::size_t v = 0; v < r.size(); ++v) {
        std::printf(
            "{\"bench\":\"matmul\",\"m\":%zu,\"k\":%zu,\"n\":%zu,\"variant\":\"%s\",\"us\":%.3f,\"us_min\":%.3f,"
            "\"us_max\":%.3f,\"gflops\":%.2f,\"ratio_to_raw\":%.4f,\"page_faults_per_call\":%.2f,\"calls_per_rep\":%zu,"
            "\"reps\":%d}\n",
            c.m, c.k, c.n, names[v], r[v].median / 1e3, r[v].min / 1e3, r[v].max / 1e3, flop / r[v].median,
            r[v].median / r[0].median, r[v].faults, calls, reps);
      }
    }
  }
  std::printf(
      "\n  raw     = blas_gemm into a preallocated C (beta = 0);  new = sgemm into a fresh uninitialised buffer;\n"
      "  zeroed  = sgemm into a fresh attend::Tensor (zero-filled by its constructor, like the op's output);\n"
      "  matmul  = tape.clear() + two parameter leaves + attend::matmul;  GFLOP/s = 2mnk / time;\n"
      "  faults  = minor page faults per matmul call (fresh memory from the kernel; 1 per 4 KiB page touched);\n"
      "  mm/raw  = matmul time / raw time; the target is <= 1.05 for 256x256 and larger.\n");
}

}  // namespace

int main(int argc, char** argv) {
  attend::use_block_cache();  // as the attend program does
  const Options options = parse_options(argc, argv);

  // Flush subnormals to zero (FTZ, bit 15) and treat subnormal inputs as zero (DAZ, bit 6), as a training run should:
  // a gradient decaying into subnormals would otherwise slow every op several-fold (toolchain notes §9, pitfall 3).
  _mm_setcsr(_mm_getcsr() | 0x8040);
  openblas_set_num_threads(options.threads);

  std::printf("bench_autograd: attend autograd micro-benchmarks%s\n",
              options.quick ? " (--quick: smoke test, numbers not meaningful)" : "");
  std::printf("  OpenBLAS: %d thread(s) (--threads N to change), core %s, config: %s\n", openblas_get_num_threads(),
              openblas_get_corename(), openblas_get_config());
  std::printf(
      "  FTZ/DAZ: on (MXCSR = 0x%04x) on the main thread; OpenBLAS worker threads (--threads > 1) keep "
      "theirs\n",
      _mm_getcsr());
#ifdef XTENSOR_USE_XSIMD
  const bool xsimd = true;
#else
  const bool xsimd = false;
#endif
#ifdef NDEBUG
  const char* asserts = "off";
#else
  const char* asserts = "on (not a release build?)";
#endif
  std::printf("  xsimd: %s; asserts: %s; clock: std::chrono::steady_clock\n", xsimd ? "on" : "off", asserts);
  if (options.json) {
    std::printf(
        "{\"bench\":\"config\",\"threads\":%d,\"ftz_daz\":true,\"xsimd\":%s,\"quick\":%s,\"cold\":%s,"
        "\"openblas_core\":\"%s\"}\n",
        openblas_get_num_threads(), xsimd ? "true" : "false", options.quick ? "true" : "false",
        options.cold ? "true" : "false", openblas_get_corename());
  }

  run_tiny_ops(options);
  run_matmul(options);
  return 0;
}
