// The check of exercise 7.1 (exercises/07/1.hpp): the Jacobian and ∂L/∂e with β against the tape's, through
// models::attention_weights of β e, on the chapter's padded batch (β = 0.1, 10, and another β) and on another
// sentence; the Jacobian's columns must sum to 0, as the weights always sum to 1.
#include "exercises/07/1.hpp"

#include <algorithm>
#include <cmath>
#define yours reference
#include "exercises/07/1.hpp"
#undef yours
#include "exercises/chapter_encoder.hpp"
#include "exercises/check.hpp"
#include "models/attention.hpp"
#include "nn/recurrent.hpp"

using namespace attend;

namespace {

struct Batch {
  Tensor<double> e;  // the scores at step j = 1: (B, T_x)
  Tensor<double> h;  // the annotations: (B, T_x, H)
  Mask m;            // (B, T_x)
};

// The chapter's padded batch: "the European Economic Area", "the Economic Area <pad>", its scores at step j = 1
// (s_0 = each sentence's own h_Tx; encoder seed 5, score seed 6).
Batch chapter_batch() {
  nn::Encoder<double> encoder = exercise::chapter_encoder();
  Rng score_rng(6);
  models::AdditiveScore<double> score(4, 4, 3, score_rng);
  Tape<double> tape;
  const std::vector<std::int64_t> lengths{4, 3};
  const nn::RecurrentOutput<double> padded = encoder(tape, Ids(Shape{2, 4}, {1, 2, 3, 4, 1, 3, 4, 0}), lengths);
  const Variable<double> e = score.score(padded.h_final[0], score.keys(padded.outputs));
  return {e.value(), padded.outputs.value(), models::source_mask(lengths, 4)};
}

std::vector<double> row(const Tensor<double>& t, std::size_t b) {
  const std::size_t n = t.shape()[1];
  return {t.data() + b * n, t.data() + (b + 1) * n};
}

void check_beta(exercise::Check& check, const std::string& name, const Batch& batch, double beta) {
  const std::size_t B = batch.e.shape()[0], T_x = batch.e.shape()[1], H = batch.h.shape()[2];
  const double tolerance = 1e-14 * std::max(1.0, std::abs(beta));
  Tape<double> tape;
  const Variable<double> e = tape.leaf(batch.e);
  const Variable<double> alpha = models::attention_weights(e * beta, batch.m);  // (7.4) of β e
  Rng w_rng(8);
  const Variable<double> L = sum(models::context(alpha, tape.constant(batch.h)) *
                                 tape.constant(w_rng.normal_tensor<double>(Shape{B, H}, 0, 1)));
  tape.backward(L);
  const Tensor<double> dL_de = e.grad(), dL_dalpha = alpha.grad();
  for (std::size_t b = 0; b < B; ++b) {
    const std::string at = name + ", sentence " + std::to_string(b + 1);
    const std::vector<double> alpha_b = row(alpha.value(), b);
    check.near(at + ": ∂L/∂e_kj, (7.8) with β, = the tape's", yours::scaled_dL_de(alpha_b, row(dL_dalpha, b), beta),
               row(dL_de, b), tolerance);
    const std::vector<std::vector<double>> J = yours::scaled_jacobian(alpha_b, beta);
    std::vector<double> yours_J, tape_J, column_sums(T_x, 0.0);
    for (std::size_t i = 0; i < T_x; ++i) {
      Tensor<double> seed(alpha.shape());
      seed.at({b, i}) = 1.0;
      tape.backward(alpha, seed);  // row i of sentence b's Jacobian, in e.grad()
      const std::vector<double> tape_row = row(e.grad(), b);
      tape_J.insert(tape_J.end(), tape_row.begin(), tape_row.end());
      for (std::size_t k = 0; k < T_x; ++k) {
        yours_J.push_back(i < J.size() && k < J[i].size() ? J[i][k] : NAN);
        column_sums[k] += yours_J.back();
      }
    }
    check.near(at + ": ∂α_ij/∂e_kj, (7.7) with β, = the tape's (rows i, columns k)", yours_J, tape_J, tolerance);
    check.near(at + ": every column k of your Jacobian sums to 0 (Σ_i α_ij = 1 whatever e)", column_sums,
               std::vector<double>(T_x, 0.0), tolerance);
  }
}

}  // namespace

int main() {
  exercise::Check check("7.1", "scaled scores in the softmax's gradients");
  const Batch chapter = chapter_batch();
  Rng rng(71);
  Mask one_padded(Shape{1, 6}, std::uint8_t{1});
  one_padded.data()[5] = 0;
  const Batch other{rng.normal_tensor<double>(Shape{1, 6}, 0, 1), rng.normal_tensor<double>(Shape{1, 6, 3}, 0, 1),
                    one_padded};
  const std::pair<const char*, double> chapter_betas[] = {
      {"the chapter's padded batch, β = 0.1", 0.1},
      {"the chapter's padded batch, β = 10", 10.0},
      {"another case: the chapter's padded batch, β = −2", -2.0},
  };
  for (const auto& [name, beta] : chapter_betas) {
    check.run(name, [&, name = name, beta = beta] { check_beta(check, name, chapter, beta); });
  }
  check.run("another case: T_x = 6 (the last one padding), H = 3, β = 3",
            [&] { check_beta(check, "another case: T_x = 6 (the last one padding), H = 3, β = 3", other, 3.0); });
  return check.verdict();
}
