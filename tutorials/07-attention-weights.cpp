// Chapter 7 — attention weights and the context vector (docs/07-attention-weights.md).
//
// The scores e_ij of chapter 6 become weights by a softmax over the source positions, α_ij = exp(e_ij) / Σ_k exp(e_kj),
// and the weights average the annotations into the context c_j = Σ_i α_ij h_i. This program computes both by hand and
// with the library (models::attention_weights, models::context), then masks a padded batch (models::source_mask: the
// padding gets exactly zero weight and the real words the same weights as the sentence alone), and finally derives the
// gradients by hand — the softmax Jacobian ∂α_ij/∂e_kj = α_ij (δ_ik - α_kj), ∂c_j/∂α_ij and ∂c_j/∂h_i — and compares
// them with the tape's. It draws the weights of the padded sentence as a heatmap. Deterministic, no training; exits
// with status 1 if a check fails. --small changes nothing (the run is instant).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "models/attention.hpp"
#include "nn/recurrent.hpp"
#include "plot/svg.hpp"
#include "tutorials/common.hpp"

using namespace attend;            // Tensor, Tape, Variable, Rng, and nn::, models::, data::, plot::
using namespace attend::tutorial;  // this folder's helpers (common.hpp)

namespace {

// Chapter 6's decoder states: s_0 = h_Tx, then T_y - 1 random stand-ins (seed 7).
std::vector<Variable<double>> decoder_states(Tape<double>& tape, const Variable<double>& h_Tx, std::size_t T_y) {
  const std::size_t H = h_Tx.shape()[1];
  std::vector<Variable<double>> s{h_Tx};
  Rng state_rng(7);
  for (std::size_t j = 1; j < T_y; ++j) {
    s.push_back(tape.constant(state_rng.normal_tensor<double>(Shape{1, H}, 0, 0.5)));
  }
  return s;
}

// (7.1)-(7.2) at step j, with the library and with plain loops.
struct Weights {
  Variable<double> e_j, alpha_j, c_j;       // the library's: (1, T_x), (1, T_x), (1, H)
  std::vector<double> alpha_ij, c_by_hand;  // by hand
};

Weights weights_at(models::AdditiveScore<double>& score, const std::vector<Variable<double>>& s, std::size_t j,
                   const models::Keys<double>& keys, const Variable<double>& h, const Mask& all_real) {
  const std::size_t T_x = h.shape()[1], H = h.shape()[2];
  // [docs:weights]
  const Variable<double> e_j = score.score(s[j], keys);  // e_ij for every i: (1, T_x)
  // (7.1) with the library: α_ij = exp(e_ij) / Σ_k exp(e_kj), over the real positions of the mask
  const Variable<double> alpha_j = models::attention_weights(e_j, all_real);
  // (7.2) with the library: c_j = Σ_i α_ij h_i, (1, H)
  const Variable<double> c_j = models::context(alpha_j, h);
  // (7.1) and (7.2) again with plain loops
  std::vector<double> alpha_ij(T_x), c_by_hand(H, 0.0);
  double total = 0;
  for (std::size_t k = 0; k < T_x; ++k) total += std::exp(e_j.value().at({0, k}));
  for (std::size_t i = 0; i < T_x; ++i) {
    alpha_ij[i] = std::exp(e_j.value().at({0, i})) / total;
    for (std::size_t d = 0; d < H; ++d) c_by_hand[d] += alpha_ij[i] * h.value().at({0, i, d});
  }
  // [docs:end]
  return {e_j, alpha_j, c_j, alpha_ij, c_by_hand};
}

// The weights and contexts of every step, printed and checked.
void weights_and_contexts(models::AdditiveScore<double>& score, const std::vector<Variable<double>>& s,
                          const models::Keys<double>& keys, const Variable<double>& h, const Mask& all_real) {
  const std::size_t T_x = h.shape()[1], H = h.shape()[2];
  std::printf("weights and contexts (chapter 6's scores e_ij; each row of α sums to 1)\n");
  double worst_alpha = 0, worst_sum = 0, worst_c = 0;
  for (std::size_t j = 0; j < s.size(); ++j) {
    const auto [e_j, alpha_j, c_j, alpha_ij, c_by_hand] = weights_at(score, s, j, keys, h, all_real);
    double sum = 0;
    for (std::size_t i = 0; i < T_x; ++i) {
      worst_alpha = std::max(worst_alpha, std::abs(alpha_ij[i] - alpha_j.value().at({0, i})));
      sum += alpha_j.value().at({0, i});
    }
    worst_sum = std::max(worst_sum, std::abs(sum - 1));
    for (std::size_t d = 0; d < H; ++d) worst_c = std::max(worst_c, std::abs(c_by_hand[d] - c_j.value().at({0, d})));
    std::printf("  j = %zu  e = %s  α = %s  c = %s\n", j + 1, vector_string(row_of(e_j.value(), 0)).c_str(),
                vector_string(row_of(alpha_j.value(), 0)).c_str(), vector_string(row_of(c_j.value(), 0)).c_str());
  }
  tutorial::check("(7.1) α_ij by hand vs models::attention_weights", worst_alpha, 1e-15);
  tutorial::check("(7.1) Σ_i α_ij = 1", worst_sum, 1e-15);
  tutorial::check("(7.2) c_j by hand vs models::context", worst_c, 1e-15);
}

// A batch of two sentences, the second padded: its weights with and without the mask, and the sentence alone.
struct Padded {
  Variable<double> h_batch, e_batch, alpha_batch, c_batch, alpha_unmasked, c_unmasked, alpha_alone, c_alone;
  Mask m;
};

Padded padded_batch(Tape<double>& tape, nn::Encoder<double>& encoder, models::AdditiveScore<double>& score,
                    std::size_t T_x) {
  // [docs:mask]
  // A batch of two sentences, the second padded to T_x: "the European Economic Area", "the Economic Area <pad>".
  const std::vector<std::int64_t> lengths{4, 3};
  const Ids batch(Shape{2, T_x}, {1, 2, 3, 4, 1, 3, 4, 0});
  const nn::RecurrentOutput<double> padded = encoder(tape, batch, lengths);
  const Variable<double> h_batch = padded.outputs;                         // (2, T_x, H); exactly 0 at the padded step
  const Variable<double> s_0 = padded.h_final[0];                          // (2, H): each sentence's own s_0 = h_Tx
  const Variable<double> e_batch = score.score(s_0, score.keys(h_batch));  // (2, T_x)
  // (7.3)  m_i = 1 for a real word (i ≤ its sentence's length), 0 for padding: (2, T_x)
  const Mask m = models::source_mask(lengths, T_x);
  // (7.4)  α_ij = m_i exp(e_ij) / Σ_k m_k exp(e_kj): the padding is left out of the sum and gets exactly 0
  const Variable<double> alpha_batch = models::attention_weights(e_batch, m);
  const Variable<double> c_batch = models::context(alpha_batch, h_batch);  // (2, H)
  // Without the mask the padding takes a share of the weight, and c_j averages in its zero annotation.
  const Variable<double> alpha_unmasked = softmax(e_batch, 1);
  const Variable<double> c_unmasked = models::context(alpha_unmasked, h_batch);
  // The second sentence alone, unpadded: the reference the padded batch must match.
  const nn::RecurrentOutput<double> alone = encoder(tape, Ids(Shape{1, 3}, {1, 3, 4}), {3});
  const Variable<double> e_alone = score.score(alone.h_final[0], score.keys(alone.outputs));  // (1, 3)
  const Variable<double> alpha_alone = models::attention_weights(e_alone, models::source_mask({3}, 3));
  const Variable<double> c_alone = models::context(alpha_alone, alone.outputs);  // (1, H)
  // [docs:end]
  return {h_batch, e_batch, alpha_batch, c_batch, alpha_unmasked, c_unmasked, alpha_alone, c_alone, m};
}

// (7.3)-(7.4): the padding gets exactly 0, and the padded sentence gets what it gets alone.
void check_mask(const Padded& p) {
  const std::size_t T_x = p.h_batch.shape()[1], H = p.h_batch.shape()[2];
  const auto& [h_batch, e_batch, alpha_batch, c_batch, alpha_unmasked, c_unmasked, alpha_alone, c_alone, m] = p;
  std::printf("\na padded batch: sentence 2 is \"the Economic Area <pad>\" (lengths 4 and 3), step j = 1\n");
  std::printf("  mask m           %s\n", vector_string({1, 1, 1, 0}).c_str());
  std::printf("  scores e         %s   (the padding's score is finite)\n",
              vector_string(row_of(e_batch.value(), 1)).c_str());
  std::printf("  α, masked        %s   c = %s\n", vector_string(row_of(alpha_batch.value(), 1)).c_str(),
              vector_string(row_of(c_batch.value(), 1)).c_str());
  std::printf("  α, not masked    %s   c = %s\n", vector_string(row_of(alpha_unmasked.value(), 1)).c_str(),
              vector_string(row_of(c_unmasked.value(), 1)).c_str());
  std::printf("  α, alone         %s           c = %s\n", vector_string(row_of(alpha_alone.value(), 0)).c_str(),
              vector_string(row_of(c_alone.value(), 0)).c_str());
  double worst_padding = 0, worst_real = 0, worst_context = 0;
  for (std::size_t i = 3; i < T_x; ++i) {
    worst_padding = std::max(worst_padding, std::abs(alpha_batch.value().at({1, i})));
  }
  for (std::size_t i = 0; i < 3; ++i)
    worst_real = std::max(worst_real, std::abs(alpha_batch.value().at({1, i}) - alpha_alone.value().at({0, i})));
  for (std::size_t d = 0; d < H; ++d)
    worst_context = std::max(worst_context, std::abs(c_batch.value().at({1, d}) - c_alone.value().at({0, d})));
  tutorial::check("(7.4) masked positions: α exactly 0", worst_padding, 0.0);
  tutorial::check("(7.4) real positions: padded batch vs the sentence alone", worst_real, 1e-15);
  tutorial::check("(7.2) c_j: padded batch vs the sentence alone", worst_context, 1e-15);
  // Without the mask, the real words share 1 - α_pad in the masked weights' proportions and h_pad = 0, so the
  // unmasked context is the masked one shrunk by the factor 1 - α_pad.
  double worst_shrunk = 0;
  const double alpha_pad = alpha_unmasked.value().at({1, 3});
  for (std::size_t d = 0; d < H; ++d) {
    worst_shrunk =
        std::max(worst_shrunk, std::abs(c_unmasked.value().at({1, d}) - (1 - alpha_pad) * c_batch.value().at({1, d})));
  }
  tutorial::check("(7.1) without the mask: c_j = (1 - α_pad) × the masked c_j", worst_shrunk, 1e-15);
}

// The tape's gradients of L = Σ_b w_bᵀ c_j with respect to the scores, the weights and the annotations.
struct TapeGradients {
  Tensor<double> w;                        // (B, H)
  Variable<double> e, annotations, alpha;  // the leaves e and h, and α computed from e
  Tensor<double> dL_de, dL_dalpha, dL_dh;
};

TapeGradients tape_gradients(Tape<double>& tape, const Padded& p) {
  const std::size_t H = p.h_batch.shape()[2];
  const Variable<double>& e_batch = p.e_batch;
  const Variable<double>& h_batch = p.h_batch;
  const Mask& m = p.m;
  // [docs:tape-gradients]
  // The tape's gradients of L = Σ_b w_bᵀ c_j (w fixed, random: a stand-in for whatever the decoder does with c_j)
  // with respect to the scores, the weights and the annotations of the padded batch.
  const std::size_t B = 2;
  Rng w_rng(8);
  const Tensor<double> w = w_rng.normal_tensor<double>(Shape{B, H}, 0, 1);
  const Variable<double> e = tape.leaf(e_batch.value());            // (B, T_x)
  const Variable<double> annotations = tape.leaf(h_batch.value());  // h_i for every i: (B, T_x, H)
  const Variable<double> alpha = models::attention_weights(e, m);
  const Variable<double> c = models::context(alpha, annotations);  // (B, H)
  const Variable<double> L = sum(c * tape.constant(w));
  tape.backward(L);
  const Tensor<double> dL_de = e.grad(), dL_dalpha = alpha.grad(), dL_dh = annotations.grad();
  // [docs:end]
  return {w, e, annotations, alpha, dL_de, dL_dalpha, dL_dh};
}

// (7.5)-(7.8) by hand: the softmax Jacobians, and the worst difference of each gradient from the tape's.
struct HandGradients {
  std::vector<std::vector<std::vector<double>>> J;  // J[b][i][k] = ∂α_ij/∂e_kj of sentence b
  double worst_dalpha = 0, worst_dh = 0, worst_de = 0;
};

HandGradients hand_gradients(const TapeGradients& g) {
  const std::size_t B = g.alpha.shape()[0], T_x = g.alpha.shape()[1], H = g.w.shape()[1];
  // references, not a structured binding: C++17 lets no lambda capture one (clang refuses it, GCC accepts it)
  const Tensor<double>& w = g.w;
  const Tensor<double>& dL_de = g.dL_de;
  const Tensor<double>& dL_dalpha = g.dL_dalpha;
  const Tensor<double>& dL_dh = g.dL_dh;
  const Variable<double>& annotations = g.annotations;
  const Variable<double>& alpha = g.alpha;
  // [docs:hand-gradients]
  // The same gradients by hand, one sentence b at a time, from the values α and h alone.
  auto alpha_of = [&](std::size_t b, std::size_t i) { return alpha.value().at({b, i}); };
  double worst_dalpha = 0, worst_dh = 0, worst_de = 0;
  std::vector<std::vector<std::vector<double>>> J(B);  // J[b][i][k] = ∂α_ij/∂e_kj of sentence b
  for (std::size_t b = 0; b < B; ++b) {
    std::vector<double> dL_dalpha_by_hand(T_x, 0.0);
    for (std::size_t i = 0; i < T_x; ++i) {
      for (std::size_t d = 0; d < H; ++d) {
        // (7.5)  ∂L/∂α_ij = Σ_d ∂L/∂c_jd ∂c_jd/∂α_ij = Σ_d w_d h_id, since ∂c_j/∂α_ij = h_i
        dL_dalpha_by_hand[i] += w.at({b, d}) * annotations.value().at({b, i, d});
        // (7.6)  ∂L/∂h_id = ∂L/∂c_jd ∂c_jd/∂h_id = w_d α_ij, since ∂c_j/∂h_i = α_ij I
        const double dL_dh_id = w.at({b, d}) * alpha_of(b, i);
        worst_dh = std::max(worst_dh, std::abs(dL_dh_id - dL_dh.at({b, i, d})));
      }
      worst_dalpha = std::max(worst_dalpha, std::abs(dL_dalpha_by_hand[i] - dL_dalpha.at({b, i})));
    }
    J[b].assign(T_x, std::vector<double>(T_x));
    for (std::size_t i = 0; i < T_x; ++i) {
      for (std::size_t k = 0; k < T_x; ++k) {
        // (7.7)  ∂α_ij/∂e_kj = α_ij (δ_ik - α_kj): the softmax Jacobian (rows and columns of padding are 0)
        J[b][i][k] = alpha_of(b, i) * ((i == k ? 1.0 : 0.0) - alpha_of(b, k));
      }
    }
    for (std::size_t k = 0; k < T_x; ++k) {
      // (7.8)  ∂L/∂e_kj = Σ_i ∂L/∂α_ij ∂α_ij/∂e_kj
      double dL_de_k = 0;
      for (std::size_t i = 0; i < T_x; ++i) dL_de_k += dL_dalpha_by_hand[i] * J[b][i][k];
      worst_de = std::max(worst_de, std::abs(dL_de_k - dL_de.at({b, k})));
    }
  }
  // [docs:end]
  return {J, worst_dalpha, worst_dh, worst_de};
}

// The Jacobian from the tape against the one by hand, and (7.7)'s columns summing to 0; prints sentence 2's
// gradients and checks (7.5)-(7.8).
void check_gradients(Tape<double>& tape, const TapeGradients& g, const HandGradients& hand) {
  const std::size_t B = g.alpha.shape()[0], T_x = g.alpha.shape()[1];
  const std::vector<std::vector<std::vector<double>>>& J = hand.J;
  const Variable<double>& alpha = g.alpha;
  const Variable<double>& e = g.e;
  const Tensor<double>& dL_de = g.dL_de;
  const Tensor<double>& dL_dalpha = g.dL_dalpha;
  const Tensor<double>& dL_dh = g.dL_dh;
  // [docs:tape-jacobian]
  // The Jacobian from the tape: one backward pass from α seeded with the unit vector of (b, i) gives row i of
  // sentence b's Jacobian in e.grad().
  double worst_J = 0, worst_column_sum = 0;
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t i = 0; i < T_x; ++i) {
      Tensor<double> seed(alpha.shape());
      seed.at({b, i}) = 1.0;
      tape.backward(alpha, seed);
      for (std::size_t k = 0; k < T_x; ++k) worst_J = std::max(worst_J, std::abs(e.grad().at({b, k}) - J[b][i][k]));
    }
  }
  // [docs:end]
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t k = 0; k < T_x; ++k) {
      double column = 0;  // Σ_i ∂α_ij/∂e_kj = ∂(Σ_i α_ij)/∂e_kj = ∂1/∂e_kj = 0
      for (std::size_t i = 0; i < T_x; ++i) column += J[b][i][k];
      worst_column_sum = std::max(worst_column_sum, std::abs(column));
    }
  }
  std::printf("\ngradients of L = Σ_b w_bᵀ c_j, sentence 2 (its 4th position is padding)\n");
  std::printf("  ∂α_ij/∂e_kj by hand (7.7), row i, column k\n");
  for (std::size_t i = 0; i < T_x; ++i) std::printf("    %s\n", vector_string(J[1][i]).c_str());
  std::printf("  ∂L/∂α (tape)     %s\n", vector_string(row_of(dL_dalpha, 1)).c_str());
  std::printf("  ∂L/∂e (tape)     %s\n", vector_string(row_of(dL_de, 1)).c_str());
  std::printf("  ∂L/∂h_i (tape)   %s  (i = 1)\n", vector_string(row_of(dL_dh, T_x)).c_str());
  std::printf("                   %s  (i = 4, padding)\n", vector_string(row_of(dL_dh, T_x + 3)).c_str());
  tutorial::check("(7.5) ∂L/∂α by hand vs the tape", hand.worst_dalpha, 1e-15);
  tutorial::check("(7.6) ∂L/∂h by hand vs the tape", hand.worst_dh, 1e-15);
  tutorial::check("(7.7) softmax Jacobian by hand vs the tape", worst_J, 1e-15);
  tutorial::check("(7.7) every column of the Jacobian sums to 0", worst_column_sum, 1e-15);
  tutorial::check("(7.8) ∂L/∂e by hand vs the tape", hand.worst_de, 1e-15);
}

// The weights of sentence 2 at every decoder step, drawn as a heatmap.
void weights_heatmap(const tutorial::Options& options, models::AdditiveScore<double>& score,
                     const std::vector<Variable<double>>& s, const Padded& p) {
  const std::size_t T_y = s.size();
  const Variable<double>& alpha_batch = p.alpha_batch;
  const Variable<double>& h_batch = p.h_batch;
  const Mask& m = p.m;
  // [docs:heatmap]
  // The weights of sentence 2 at four decoder steps (s_0 its own h_Tx, then chapter 6's stand-ins s_1..s_3), drawn
  // as a heatmap: one row per step j, one column per source position i; the padding column is exactly 0.
  std::vector<std::vector<double>> weights{row_of(alpha_batch.value(), 1)};
  for (std::size_t j = 1; j < T_y; ++j) {
    const Variable<double> s_prev = concat(std::vector<Variable<double>>{s[j], s[j]}, 0);  // (2, H): both sentences
    const Variable<double> alpha_j = models::attention_weights(score.score(s_prev, score.keys(h_batch)), m);
    weights.push_back(row_of(alpha_j.value(), 1));
  }
  plot::HeatmapOptions heatmap;
  heatmap.title = "α_ij of a padded sentence";
  heatmap.x_label = "source position i";
  heatmap.y_label = "decoder step j";
  const std::vector<std::string> source_2{"the", "Economic", "Area", "<pad>"};
  const std::vector<std::string> steps{"j=1", "j=2", "j=3", "j=4"};
  const std::string svg = plot::attention_svg(source_2, steps, weights, heatmap);
  // [docs:end]
  std::printf("\nthe weights of sentence 2 at steps j = 1..4 (the heatmap)\n");
  for (std::size_t j = 0; j < T_y; ++j) std::printf("  j = %zu  %s\n", j + 1, vector_string(weights[j]).c_str());
  tutorial::write_figure(options, "07-weights.svg", svg);
}

}  // namespace

int main(int argc, char** argv) {
  const tutorial::Options options = tutorial::parse_options(argc, argv);
  const std::vector<std::string> source{"the", "European", "Economic", "Area"};
  const std::size_t T_x = source.size(), T_y = 4, E = 4, H = 4, A = 3;
  std::printf("Chapter 7: attention weights α_ij = softmax_i(e_ij) and the context c_j = Σ_i α_ij h_i\n");
  std::printf("  source \"the European Economic Area\" (T_x = %zu), %zu decoder steps, H = %zu, A = %zu\n\n", T_x, T_y,
              H, A);

  // Chapter 6's set-up: the same encoder (seed 5), additive score (seed 6) and decoder states s_0 = h_Tx, s_1..s_3.
  Rng rng(5);
  nn::Encoder<double> encoder(encoder_config(T_x, E, H), rng);
  Rng score_rng(6);
  models::AdditiveScore<double> score(H, H, A, score_rng);
  Tape<double> tape;
  const nn::RecurrentOutput<double> encoded = encoder(tape, Ids(Shape{1, T_x}, {1, 2, 3, 4}), {4});
  const Variable<double> h = encoded.outputs;  // (1, T_x, H)
  const std::vector<Variable<double>> s = decoder_states(tape, encoded.h_final[0], T_y);
  const models::Keys<double> keys = score.keys(h);
  const Mask all_real = models::source_mask({static_cast<std::int64_t>(T_x)}, T_x);  // (1, T_x), all ones

  // ---- The weights and the context (7.1)-(7.2) ----------------------------------------------------------------------
  weights_and_contexts(score, s, keys, h, all_real);

  // ---- Padding and the mask (7.3)-(7.4) -----------------------------------------------------------------------------
  const Padded padded = padded_batch(tape, encoder, score, T_x);
  check_mask(padded);

  // ---- Gradients through the weights and the context (7.5)-(7.8) ----------------------------------------------------
  const TapeGradients gradients = tape_gradients(tape, padded);
  check_gradients(tape, gradients, hand_gradients(gradients));

  // ---- The weights as a heatmap -------------------------------------------------------------------------------------
  weights_heatmap(options, score, s, padded);
  return tutorial::exit_status();
}
