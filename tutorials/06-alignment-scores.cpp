// Chapter 6 — alignment scores (docs/06-alignment-scores.md).
//
// Bahdanau et al.'s alignment model scores how well the annotation h_i of source word i fits the decoder's previous
// state s_{j-1}: e_ij = v_aᵀ tanh(W_a s_{j-1} + U_a h_i). This program computes one score term by term, printing every
// intermediate vector, then all T_y × T_x scores with plain loops and batched with the library's
// models::AdditiveScore (keys() once per sentence, score() at every decoder step), and counts the multiplications
// that computing U_a h_i once per sentence saves. Deterministic, no training; exits with status 1 if a check fails.
// --small changes nothing (the run is instant).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "models/attention.hpp"
#include "nn/recurrent.hpp"
#include "tutorials/common.hpp"

using namespace attend;            // Tensor, Tape, Variable, Rng, and nn::, models::, data::, plot::
using namespace attend::tutorial;  // this folder's helpers (common.hpp)

namespace {

// Every score e_ij of one sentence with plain loops: h[i] and s[j] = s_j are vectors, e[j][i] is the score of source
// word i at output step j + 1 (so it reads s[j] = s_{(j+1)-1}). With precompute, U_a h_i is computed once per sentence;
// without, again at every step. Every multiplication is counted in `multiplications`.
std::vector<std::vector<double>> scores_by_hand(const Tensor<double>& W_a, const Tensor<double>& U_a,
                                                const Tensor<double>& v_a, const std::vector<std::vector<double>>& h,
                                                const std::vector<std::vector<double>>& s, bool precompute,
                                                std::uint64_t& multiplications) {
  const std::size_t A = W_a.shape()[0], Q = W_a.shape()[1], K = U_a.shape()[1];
  std::vector<std::vector<double>> U_a_h(h.size(), std::vector<double>(A));  // U_a h_i, (T_x, A)
  auto compute_keys = [&] {
    for (std::size_t i = 0; i < h.size(); ++i) {
      for (std::size_t a = 0; a < A; ++a) {
        U_a_h[i][a] = 0;
        for (std::size_t k = 0; k < K; ++k, ++multiplications) U_a_h[i][a] += U_a.at({a, k}) * h[i][k];
      }
    }
  };
  if (precompute) compute_keys();
  std::vector<std::vector<double>> e(s.size(), std::vector<double>(h.size(), 0.0));
  for (std::size_t j = 0; j < s.size(); ++j) {
    if (!precompute) compute_keys();
    std::vector<double> W_a_s_prev(A, 0.0);  // W_a s_{j-1}, once per step
    for (std::size_t a = 0; a < A; ++a)
      for (std::size_t q = 0; q < Q; ++q, ++multiplications) W_a_s_prev[a] += W_a.at({a, q}) * s[j][q];
    for (std::size_t i = 0; i < h.size(); ++i)
      for (std::size_t a = 0; a < A; ++a, ++multiplications)
        e[j][i] += v_a.at({0, a}) * std::tanh(W_a_s_prev[a] + U_a_h[i][a]);
  }
  return e;
}

// [docs:setup]
// The additive score (seed 6). Its weights: score.W_a (A, H) multiplies s_{j-1}, score.U_a (A, H) multiplies h_i,
// score.v_a is (1, A).
models::AdditiveScore<double> additive_score(std::size_t H, std::size_t A) {
  Rng score_rng(6);
  return models::AdditiveScore<double>(/*query_size=*/H, /*annotation_size=*/H, /*attention_size=*/A, score_rng);
}

// The decoder states the scores compare with: s_0 = h_Tx, where the decoder of chapter 3 starts, and random
// stand-ins for s_1..s_{T_y-1}, the states a decoder computes (chapter 8). Each is (1, H).
std::vector<Variable<double>> decoder_states(Tape<double>& tape, const Variable<double>& h_Tx, std::size_t T_y) {
  const std::size_t H = h_Tx.shape()[1];
  std::vector<Variable<double>> s{h_Tx};
  Rng state_rng(7);
  for (std::size_t j = 1; j < T_y; ++j) {
    s.push_back(tape.constant(state_rng.normal_tensor<double>(Shape{1, H}, 0, 0.5)));
  }
  return s;
}
// [docs:end]

// The annotations, the decoder states and the score's weights.
void print_setup(const std::vector<std::string>& source, const std::vector<std::vector<double>>& h_plain,
                 const std::vector<std::vector<double>>& s_plain, const models::AdditiveScore<double>& score) {
  const Tensor<double>& W_a = score.W_a.value;  // (A, H)
  const Tensor<double>& U_a = score.U_a.value;  // (A, H)
  const Tensor<double>& v_a = score.v_a.value;  // (1, A)
  const std::size_t T_x = h_plain.size(), T_y = s_plain.size(), A = v_a.shape()[1];
  for (std::size_t i = 0; i < T_x; ++i)
    std::printf("  h_%zu = %s   %s\n", i + 1, vector_string(h_plain[i]).c_str(), source[i].c_str());
  for (std::size_t j = 0; j < T_y; ++j) {
    std::printf("  s_%zu = %s%s\n", j, vector_string(s_plain[j]).c_str(), j == 0 ? "   = h_4" : "   (stand-in)");
  }
  std::printf("\n  W_a (A × H)                     U_a (A × H)                        v_a\n");
  for (std::size_t a = 0; a < A; ++a) {
    std::printf("  %s %s %7.3f\n", vector_string(row_of(W_a, a)).c_str(), vector_string(row_of(U_a, a)).c_str(),
                v_a.at({0, a}));
  }
}

// (6.2)-(6.6) for one score, e_21, printed term by term; returns e_21.
double one_term_by_hand(const models::AdditiveScore<double>& score, const std::vector<std::vector<double>>& h_plain,
                        const std::vector<std::vector<double>>& s_plain) {
  const Tensor<double>& W_a = score.W_a.value;  // (A, H)
  const Tensor<double>& U_a = score.U_a.value;  // (A, H)
  const Tensor<double>& v_a = score.v_a.value;  // (1, A)
  const std::size_t A = v_a.shape()[1], H = W_a.shape()[1];
  // [docs:one-term]
  // One score by hand, e_ij for i = 2 ("European") at output step j = 1, so s_{j-1} = s_0.
  const std::vector<double>& h_i = h_plain[1];
  const std::vector<double>& s_prev = s_plain[0];
  std::vector<double> W_a_s_prev(A, 0.0), U_a_h_i(A, 0.0), sum(A), tanh_sum(A);
  double e_ij = 0;
  for (std::size_t a = 0; a < A; ++a) {
    for (std::size_t k = 0; k < H; ++k) {
      // (6.2)  W_a s_{j-1}: row a of W_a times s_{j-1}
      W_a_s_prev[a] += W_a.at({a, k}) * s_prev[k];
      // (6.3)  U_a h_i: row a of U_a times h_i
      U_a_h_i[a] += U_a.at({a, k}) * h_i[k];
    }
    // (6.4)  W_a s_{j-1} + U_a h_i
    sum[a] = W_a_s_prev[a] + U_a_h_i[a];
    // (6.5)  tanh(W_a s_{j-1} + U_a h_i)
    tanh_sum[a] = std::tanh(sum[a]);
    // (6.6)  e_ij = v_aᵀ tanh(W_a s_{j-1} + U_a h_i): the dot with v_a
    e_ij += v_a.at({0, a}) * tanh_sum[a];
  }
  // [docs:end]
  std::printf("\none score by hand: e_21, source word 2 (\"European\") at output step 1 (s_{j-1} = s_0)\n");
  std::printf("  (6.2) W_a s_0                  = %s\n", vector_string(W_a_s_prev).c_str());
  std::printf("  (6.3) U_a h_2                  = %s\n", vector_string(U_a_h_i).c_str());
  std::printf("  (6.4) W_a s_0 + U_a h_2        = %s\n", vector_string(sum).c_str());
  std::printf("  (6.5) tanh(W_a s_0 + U_a h_2)  = %s\n", vector_string(tanh_sum).c_str());
  std::printf("  (6.6) e_21 = v_aᵀ tanh(...)    = %.6f\n", e_ij);

  return e_ij;
}

// (6.1) and (6.3) with the library, for every i at once.
struct Batched {
  models::Keys<double> keys;        // U_a h_i: (1, T_x, A)
  std::vector<Variable<double>> e;  // e[j]: the scores of output step j + 1, (1, T_x)
};

Batched batched_scores(models::AdditiveScore<double>& score, const Variable<double>& h,
                       const std::vector<Variable<double>>& s) {
  const std::size_t T_y = s.size();
  // [docs:batched]
  // (6.3) for every i at once, once per sentence: the keys U_a h_i, (1, T_x, A)
  const models::Keys<double> keys = score.keys(h);
  std::vector<Variable<double>> e;  // e[j]: the scores of output step j + 1, (1, T_x)
  for (std::size_t j = 0; j < T_y; ++j) {
    // (6.1) for every i at once: e_ij = v_aᵀ tanh(W_a s_{j-1} + U_a h_i), read from the precomputed keys
    e.push_back(score.score(s[j], keys));
  }
  // [docs:end]
  return {keys, e};
}

// The multiplications scores_by_hand counted, with U_a h_i once per sentence and at every step, and the worst
// difference between the scores of the two.
struct Counted {
  std::uint64_t once = 0, each_step = 0;
  double worst_recomputed_by_hand = 0;
};

// Every score by hand (both ways) against the library's table; prints the table.
Counted check_all_scores(const models::AdditiveScore<double>& score, const std::vector<std::vector<double>>& h_plain,
                         const std::vector<std::vector<double>>& s_plain, const Batched& batched, double e_ij) {
  const Tensor<double>& W_a = score.W_a.value;
  const Tensor<double>& U_a = score.U_a.value;
  const Tensor<double>& v_a = score.v_a.value;
  const models::Keys<double>& keys = batched.keys;
  const std::vector<Variable<double>>& e = batched.e;
  const std::size_t T_x = h_plain.size(), T_y = s_plain.size();
  std::uint64_t counted_once = 0, counted_each_step = 0;
  const auto e_by_hand = scores_by_hand(W_a, U_a, v_a, h_plain, s_plain, /*precompute=*/true, counted_once);
  const auto e_recomputed = scores_by_hand(W_a, U_a, v_a, h_plain, s_plain, /*precompute=*/false, counted_each_step);
  std::printf("\nall scores: keys = score.keys(h) is (%zu, %zu, %zu);", keys.shape()[0], keys.shape()[1],
              keys.shape()[2]);
  std::printf(" each e_j = score.score(s_{j-1}, keys) is (%zu, %zu)\n", e[0].shape()[0], e[0].shape()[1]);
  std::printf("  e_ij                        i=1    i=2    i=3    i=4   (the, European, Economic, Area)\n");
  for (std::size_t j = 0; j < T_y; ++j) {
    std::printf("  j = %zu (from s_%zu)       %s\n", j + 1, j, vector_string(row_of(e[j].value(), 0)).c_str());
  }
  double worst_one = std::abs(e_ij - e[0].value().at({0, 1})), worst_all = 0, worst_recomputed_by_hand = 0;
  for (std::size_t j = 0; j < T_y; ++j) {
    for (std::size_t i = 0; i < T_x; ++i) {
      worst_all = std::max(worst_all, std::abs(e_by_hand[j][i] - e[j].value().at({0, i})));
      worst_recomputed_by_hand = std::max(worst_recomputed_by_hand, std::abs(e_by_hand[j][i] - e_recomputed[j][i]));
    }
  }
  tutorial::check("(6.2)-(6.6) e_21 term by term vs AdditiveScore", worst_one, 1e-14);
  tutorial::check("(6.1) all e_ij by hand loops vs AdditiveScore", worst_all, 1e-14);

  return {counted_once, counted_each_step, worst_recomputed_by_hand};
}

// (6.3): the library's scores with the keys recomputed at every step, against the precomputed ones.
void check_recompute(models::AdditiveScore<double>& score, const Variable<double>& h,
                     const std::vector<Variable<double>>& s, const std::vector<Variable<double>>& e,
                     double worst_recomputed_by_hand) {
  const std::size_t T_x = h.shape()[1], T_y = s.size();
  // [docs:recompute]
  // The same scores without the precomputation: U_a h_i computed again at every decoder step.
  double worst_recomputed = 0;
  for (std::size_t j = 0; j < T_y; ++j) {
    const Variable<double> e_again = score.score(s[j], score.keys(h));
    for (std::size_t i = 0; i < T_x; ++i)
      worst_recomputed = std::max(worst_recomputed, std::abs(e_again.value().at({0, i}) - e[j].value().at({0, i})));
  }
  // [docs:end]
  tutorial::check("(6.3) precomputed keys vs U_a h_i recomputed at every step (library)", worst_recomputed, 0.0);
  tutorial::check("(6.3) precomputed keys vs U_a h_i recomputed at every step (hand loops)", worst_recomputed_by_hand,
                  0.0);
}

// [docs:count]
// (6.7)  the multiplications of one sentence's scores (Q = size of s_{j-1}, K = size of h_i): at every step,
// W_a s_{j-1} costs A·Q and v_aᵀ tanh(...) A per source word; U_a h_i costs A·K per source word, at every
// step or once per sentence
double each_step(double T_x, double T_y, double Q, double K, double A) { return T_y * (A * Q + T_x * A * K + T_x * A); }

double once(double T_x, double T_y, double Q, double K, double A) { return T_x * A * K + T_y * (A * Q + T_x * A); }
// [docs:end]

// (6.7) against the counted multiplications, and what the precomputation saves at three sizes.
void count_multiplications(const Counted& counted, std::size_t T_x, std::size_t T_y, std::size_t H, std::size_t A) {
  const std::uint64_t counted_once = counted.once, counted_each_step = counted.each_step;
  const double H_d = static_cast<double>(H), A_d = static_cast<double>(A);
  const double T_x_d = static_cast<double>(T_x), T_y_d = static_cast<double>(T_y);
  tutorial::check("(6.7) multiplications, U_a h_i at every step: loops vs formula",
                  std::abs(static_cast<double>(counted_each_step) - each_step(T_x_d, T_y_d, H_d, H_d, A_d)), 0.0);
  tutorial::check("(6.7) multiplications, U_a h_i once: loops vs formula",
                  std::abs(static_cast<double>(counted_once) - once(T_x_d, T_y_d, H_d, H_d, A_d)), 0.0);
  std::printf("\nmultiplications for the scores of one sentence: saved = (T_y - 1)·T_x·A·K\n");
  std::printf("  %-60s %12s %12s %12s %7s\n", "U_a h_i computed:", "every step", "once", "saved", "ratio");
  struct Sizes {
    const char* name;
    double T_x, T_y, Q, K, A;
  };
  const std::vector<Sizes> examples{
      {"this example: T_x = T_y = 4, Q = K = 4, A = 3", T_x_d, T_y_d, H_d, H_d, A_d},
      {"T_x = T_y = 10, Q = K = 128, A = 128", 10, 10, 128, 128, 128},
      {"RNNsearch-50: T_x = T_y = 50, Q = 1000, K = 2000, A = 1000", 50, 50, 1000, 2000, 1000},
  };
  for (const Sizes& z : examples) {
    const double every = each_step(z.T_x, z.T_y, z.Q, z.K, z.A), one = once(z.T_x, z.T_y, z.Q, z.K, z.A);
    std::printf("  %-60s %12.4g %12.4g %12.4g %6.1f×\n", z.name, every, one, every - one, every / one);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const tutorial::Options options = tutorial::parse_options(argc, argv);
  static_cast<void>(options);  // no pictures, and --small changes nothing
  const std::vector<std::string> source{"the", "European", "Economic", "Area"};
  const std::size_t T_x = source.size(), T_y = 4, E = 4, H = 4, A = 3;
  std::printf("Chapter 6: alignment scores e_ij = v_aᵀ tanh(W_a s_{j-1} + U_a h_i)\n");
  std::printf("  source \"the European Economic Area\" (T_x = %zu), %zu decoder steps, H = %zu, A = %zu\n\n", T_x, T_y,
              H, A);

  // ---- The set-up ---------------------------------------------------------------------------------------------------
  // The annotations h_i: chapter 5's encoder (GRU, untrained, seed 5), so the same h_1..h_4.
  Rng rng(5);
  nn::Encoder<double> encoder(encoder_config(T_x, E, H), rng);
  Tape<double> tape;
  const Ids tokens(Shape{1, T_x}, {1, 2, 3, 4});
  const nn::RecurrentOutput<double> encoded = encoder(tape, tokens, {static_cast<std::int64_t>(T_x)});
  const Variable<double> h = encoded.outputs;  // (1, T_x, H)
  models::AdditiveScore<double> score = additive_score(H, A);
  const std::vector<Variable<double>> s = decoder_states(tape, encoded.h_final[0], T_y);
  std::vector<std::vector<double>> h_plain, s_plain;  // the same vectors as plain doubles, for the loops
  for (std::size_t i = 0; i < T_x; ++i) h_plain.push_back(row_of(h.value(), i));
  for (std::size_t j = 0; j < T_y; ++j) s_plain.push_back(row_of(s[j].value(), 0));
  print_setup(source, h_plain, s_plain, score);

  // ---- One score, term by term; all scores, batched -----------------------------------------------------------------
  const double e_ij = one_term_by_hand(score, h_plain, s_plain);
  const Batched batched = batched_scores(score, h, s);
  const Counted counted = check_all_scores(score, h_plain, s_plain, batched, e_ij);

  // ---- Without the precomputation, and what it costs ----------------------------------------------------------------
  check_recompute(score, h, s, batched.e, counted.worst_recomputed_by_hand);
  count_multiplications(counted, T_x, T_y, H, A);
  return tutorial::exit_status();
}
