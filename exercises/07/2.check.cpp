// The check of exercise 7.2 (exercises/07/2.hpp): your padded step at T_x = 4, 5 and 8 against the reference, against
// the batch at T_x = 4 and against the second sentence alone (the masked weights and contexts do not move, the padding
// gets exactly 0), and your factor 1 − α_pad against the unmasked contexts the library computes, and against the
// unmasked softmax on scores typed here (some large enough to overflow exp).
#include "exercises/07/2.hpp"

#include <algorithm>
#include <cmath>
#define yours reference
#include "exercises/07/2.hpp"
#undef yours
#include "exercises/chapter_encoder.hpp"
#include "exercises/check.hpp"

using namespace attend;

namespace {

std::vector<double> row(const Tensor<double>& t, std::size_t b, std::size_t first, std::size_t n) {
  const std::size_t width = t.shape()[1];
  return {t.data() + b * width + first, t.data() + b * width + first + n};
}

std::vector<double> flat(const Tensor<double>& t) { return {t.flat().begin(), t.flat().end()}; }

// The chapter's encoder (seed 5) and score (seed 6).
struct Model {
  nn::Encoder<double> encoder = exercise::chapter_encoder();
  Rng score_rng{6};
  models::AdditiveScore<double> score{4, 4, 3, score_rng};
};

void check_step(exercise::Check& check, const std::string& name, Model& model, std::size_t T_x) {
  const std::vector<std::size_t> lengths{4, 3};
  Tape<double> tape;
  const auto [alpha, c] = yours::padded_step(tape, model.encoder, model.score, T_x);
  const auto [alpha_4, c_4] = reference::padded_step(tape, model.encoder, model.score, 4);
  const auto [expected_alpha, expected_c] = reference::padded_step(tape, model.encoder, model.score, T_x);
  check.that(alpha.shape() == Shape{2, T_x} && c.shape() == Shape{2, 4}, name + ": α is (2, T_x), c is (2, H)",
             "α " + to_string(alpha.shape()) + ", c " + to_string(c.shape()));
  if (alpha.shape() != Shape{2, T_x}) return;
  check.near(name + ": α = the reference's", flat(alpha.value()), flat(expected_alpha.value()), 1e-15);
  check.near(name + ": c = the reference's", flat(c.value()), flat(expected_c.value()), 1e-15);
  // the second sentence alone, unpadded: what the padded batch must match
  const nn::RecurrentOutput<double> alone = model.encoder(tape, Ids(Shape{1, 3}, {1, 3, 4}), {3});
  const Variable<double> alpha_alone = models::attention_weights(
      model.score.score(alone.h_final[0], model.score.keys(alone.outputs)), models::source_mask({3}, 3));
  for (std::size_t b = 0; b < 2; ++b) {
    const std::string sentence = name + ", sentence " + std::to_string(b + 1);
    if (T_x > lengths[b]) {
      check.near(sentence + ": (7.4) α_ij = 0 exactly at every <pad>",
                 row(alpha.value(), b, lengths[b], T_x - lengths[b]), std::vector<double>(T_x - lengths[b], 0.0), 0.0);
    }
    check.near(sentence + ": α_ij of the real words = the batch's at T_x = 4", row(alpha.value(), b, 0, lengths[b]),
               row(alpha_4.value(), b, 0, lengths[b]), 1e-15);
    check.near(sentence + ": c_j = the batch's at T_x = 4", row(c.value(), b, 0, 4), row(c_4.value(), b, 0, 4), 1e-15);
  }
  check.near(name + ", sentence 2: α_ij = the sentence's alone, unpadded", row(alpha.value(), 1, 0, 3),
             row(alpha_alone.value(), 0, 0, 3), 1e-15);
}

// c_unmasked = (1 − α_pad) c_masked for each sentence, with your factor, the library's unmasked softmax and context.
void check_shrink(exercise::Check& check, const std::string& name, Model& model, std::size_t T_x) {
  const std::vector<std::size_t> lengths{4, 3};
  Tape<double> tape;
  Ids batch(Shape{2, T_x});
  const std::int64_t words[2][4] = {{1, 2, 3, 4}, {1, 3, 4, 0}};
  for (std::size_t b = 0; b < 2; ++b) std::copy(words[b], words[b] + lengths[b], batch.data() + b * T_x);
  const nn::RecurrentOutput<double> padded = model.encoder(tape, batch, {4, 3});
  const Variable<double> e = model.score.score(padded.h_final[0], model.score.keys(padded.outputs));
  const Variable<double> c_masked =
      models::context(models::attention_weights(e, models::source_mask({4, 3}, T_x)), padded.outputs);
  const Variable<double> c_unmasked = models::context(softmax(e, 1), padded.outputs);
  for (std::size_t b = 0; b < 2; ++b) {
    const std::size_t pads = T_x - lengths[b];
    const double pad_score = pads > 0 ? e.value().at({b, lengths[b]}) : 0.0;
    const double shrink = yours::unmasked_shrink(row(e.value(), b, 0, lengths[b]), pad_score, pads);
    std::vector<double> predicted = row(c_masked.value(), b, 0, 4);
    for (double& x : predicted) x *= shrink;
    check.near(name + ", sentence " + std::to_string(b + 1) + " (" + std::to_string(pads) +
                   " <pad>): the unmasked c_j = your (1 − α_pad) × the masked c_j",
               predicted, row(c_unmasked.value(), b, 0, 4), 1e-14);
  }
}

// Your factor against the unmasked softmax's total weight on the real words, for scores typed here.
void check_typed(exercise::Check& check, const std::string& name, const std::vector<double>& real, double pad_score,
                 std::size_t pads) {
  std::vector<double> all = real;
  all.insert(all.end(), pads, pad_score);
  Tape<double> tape;
  const Tensor<double> alpha = softmax(tape.constant(Tensor<double>(Shape{1, all.size()}, all)), 1).value();
  double on_real = 0;
  for (std::size_t i = 0; i < real.size(); ++i) on_real += alpha.data()[i];
  check.near(name + ": your 1 − α_pad = Σ of the unmasked softmax over the real words",
             yours::unmasked_shrink(real, pad_score, pads), on_real, 1e-14);
}

}  // namespace

int main() {
  exercise::Check check("7.2", "one more <pad>");
  Model model;
  const std::pair<std::string, std::size_t> paddings[] = {
      {"the chapter's T_x = 4", 4}, {"T_x = 5 (one more <pad>)", 5}, {"another case: T_x = 8 (four more <pad>)", 8}};
  for (const auto& [name, T_x] : paddings) {
    check.run(name + ": the masked step", [&, name = name, T_x = T_x] { check_step(check, name, model, T_x); });
  }
  for (const auto& [name, T_x] : paddings) {
    check.run(name + ": without the mask", [&, name = name, T_x = T_x] { check_shrink(check, name, model, T_x); });
  }
  check.run("another case: e = (0.2, −1, 3), three <pad> scored 1.5", [&] {
    check_typed(check, "another case: e = (0.2, −1, 3), three <pad> scored 1.5", {0.2, -1, 3}, 1.5, 3);
  });
  check.run("another case: e = (800, 790), two <pad> scored 805 (exp(800) overflows)", [&] {
    check_typed(check, "another case: e = (800, 790), two <pad> scored 805 (exp(800) overflows)", {800, 790}, 805, 2);
  });
  return check.verdict();
}
