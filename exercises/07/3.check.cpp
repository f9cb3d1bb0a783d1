// The check of exercise 7.3 (exercises/07/3.hpp): your filled weights against the reference's (in double and float),
// their gradient by attend::gradcheck; your predicted difference against the largest |α(filled) − α(masked)| the
// library computes on the chapter's padded batch and on another; your row of padding only against the library's.
#include "exercises/07/3.hpp"

#include <algorithm>
#include <cmath>
#define yours reference
#include "exercises/07/3.hpp"
#undef yours
#include "autograd/gradcheck.hpp"
#include "exercises/chapter_encoder.hpp"
#include "exercises/check.hpp"
#include "nn/recurrent.hpp"

using namespace attend;

namespace {

struct Batch {
  std::string name;
  Tensor<double> e;  // (B, T_x)
  Mask m;            // (B, T_x)
};

// The chapter's padded batch at step j = 1: "the European Economic Area", "the Economic Area <pad>" (encoder seed 5,
// score seed 6, s_0 = each sentence's h_Tx).
Tensor<double> chapter_scores() {
  nn::Encoder<double> encoder = exercise::chapter_encoder();
  Rng score_rng(6);
  models::AdditiveScore<double> score(4, 4, 3, score_rng);
  Tape<double> tape;
  const nn::RecurrentOutput<double> padded = encoder(tape, Ids(Shape{2, 4}, {1, 2, 3, 4, 1, 3, 4, 0}), {4, 3});
  return score.score(padded.h_final[0], score.keys(padded.outputs)).value();
}

template <class T>
std::vector<double> values(const Tensor<T>& t) {
  return {t.flat().begin(), t.flat().end()};
}

Tensor<float> as_float(const Tensor<double>& t) {
  Tensor<float> f(t.shape());
  for (std::size_t k = 0; k < t.size(); ++k) f.data()[k] = static_cast<float>(t.data()[k]);
  return f;
}

// The largest |filled − masked| over rows with a real word, by the reference's fill and the library's mask.
template <class T>
double measured_difference(const Tensor<T>& e, const Mask& m) {
  Tape<T> tape;
  const Variable<T> scores = tape.constant(e);
  const Tensor<T> filled = reference::filled_weights(scores, m).value(),
                  masked = models::attention_weights(scores, m).value();
  const std::size_t B = e.shape()[0], T_x = e.shape()[1];
  double worst = 0;
  for (std::size_t b = 0; b < B; ++b) {
    if (std::none_of(m.data() + b * T_x, m.data() + (b + 1) * T_x, [](std::uint8_t x) { return x != 0; })) continue;
    for (std::size_t i = 0; i < T_x; ++i) {
      worst =
          std::max(worst, std::abs(static_cast<double>(filled.at({b, i})) - static_cast<double>(masked.at({b, i}))));
    }
  }
  return worst;
}

void check_batch(exercise::Check& check, const Batch& batch) {
  Tape<double> tape;
  const Variable<double> e = tape.constant(batch.e);
  check.near(batch.name + ": filled_weights in double = the reference's",
             values(yours::filled_weights(e, batch.m).value()), values(reference::filled_weights(e, batch.m).value()),
             1e-15);
  Tape<float> tape_f;
  const Variable<float> e_f = tape_f.constant(as_float(batch.e));
  check.near(batch.name + ": filled_weights in float = the reference's",
             values(yours::filled_weights(e_f, batch.m).value()),
             values(reference::filled_weights(e_f, batch.m).value()), 1e-6);
  const Mask& m = batch.m;
  const GradcheckResult result = gradcheck(
      [&m](Tape<double>&, const std::vector<Variable<double>>& in) { return yours::filled_weights(in[0], m); },
      {batch.e});
  check.that(
      result.passed, batch.name + ": gradcheck of filled_weights in e (the padding's ∂α/∂e = 0)",
      result.passed ? "largest |analytic − numeric| " + exercise::number(result.worst_abs_error) : result.message);
}

void check_predictions(exercise::Check& check, const Batch& batch) {
  check.near(batch.name + ": your max |α(filled) − α(masked)| in double = the library's",
             yours::difference_from_masked(false), measured_difference(batch.e, batch.m), 0.0);
  check.near(batch.name + ": your max |α(filled) − α(masked)| in float = the library's",
             yours::difference_from_masked(true), measured_difference(as_float(batch.e), batch.m), 0.0);
}

void check_padding_only(exercise::Check& check, const std::string& name, std::size_t T_x) {
  Rng rng(73);
  const Tensor<double> e = rng.normal_tensor<double>(Shape{1, T_x}, 0, 2);
  const Mask none(Shape{1, T_x});  // every position padding
  Tape<double> tape;
  Tape<float> tape_f;
  check.near(name + ": your filled_weights on it = the reference's",
             values(yours::filled_weights(tape.constant(e), none).value()),
             values(reference::filled_weights(tape.constant(e), none).value()), 1e-15);
  check.near(name + ": the filled weights in double = your prediction",
             values(reference::filled_weights(tape.constant(e), none).value()), yours::padding_only_row(T_x, false),
             1e-15);
  check.near(name + ": the filled weights in float = your prediction",
             values(reference::filled_weights(tape_f.constant(as_float(e)), none).value()),
             yours::padding_only_row(T_x, true), 1e-7);
}

}  // namespace

int main() {
  exercise::Check check("7.3", "−10⁹ instead of a mask");
  Rng rng(7300);
  const Batch chapter{"the chapter's padded batch (lengths 4 and 3)", chapter_scores(), models::source_mask({4, 3}, 4)};
  const Batch other{"another case: B = 4, T_x = 6, lengths 6, 2, 0 and 4, scores of size 10",
                    rng.normal_tensor<double>(Shape{4, 6}, 0, 10), models::source_mask({6, 2, 0, 4}, 6)};
  for (const Batch* batch : {&chapter, &other}) {
    check.run(batch->name + ": filled_weights", [&] { check_batch(check, *batch); });
    check.run(batch->name + ": your predicted difference", [&] { check_predictions(check, *batch); });
  }
  check.run("a row of padding only, T_x = 4", [&] { check_padding_only(check, "a row of padding only, T_x = 4", 4); });
  check.run("another case: a row of padding only, T_x = 3",
            [&] { check_padding_only(check, "another case: a row of padding only, T_x = 3", 3); });
  return check.verdict();
}
