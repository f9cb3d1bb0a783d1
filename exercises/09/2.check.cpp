// The check of exercise 9.2 (exercises/09/2.hpp): the scaled score against DotScore's scores divided by √H (computed
// here), by gradcheck, and inside a Luong decoder's step; the mean largest weight against rows worked out by hand and
// against the reference solution; then luong-dot with and without your score, trained alike (scaled down, seeds 1–3),
// compared by their mean largest weight on 100 test dates.
#include "exercises/09/2.hpp"

#include <cmath>
#define yours reference
#include "exercises/09/2.hpp"
#undef yours
#include "exercises/check.hpp"
#include "exercises/dates_data.hpp"
#include "models/train.hpp"

using namespace attend;

namespace {

std::vector<double> values(const Tensor<double>& t) { return t.to_vector(); }

void check_values(exercise::Check& check, const std::string& name, std::size_t B, std::size_t S, std::size_t H,
                  double range, std::uint64_t seed) {
  Rng rng(seed);
  Tape<double> tape;
  const Variable<double> q = tape.constant(rng.uniform_tensor<double>(Shape{B, H}, -range, range));
  const Variable<double> h = tape.constant(rng.uniform_tensor<double>(Shape{B, S, H}, -range, range));
  const std::unique_ptr<models::Score<double>> score = yours::make_scaled_dot_score<double>(H);
  const Tensor<double> e = score->score(q, score->keys(h)).value();
  std::vector<double> expected = values(models::DotScore<double>().score(q, h).value());
  for (double& x : expected) x /= std::sqrt(static_cast<double>(H));
  check.near(name + ": e_ij = s_jᵀ h_i / √H (DotScore's scores / √H), shape (B, S)", values(e), expected, 1e-12);
  check.that(e.shape() == Shape({B, S}), name + ": e is (B, S)", "yours " + to_string(e.shape()));
}

void check_gradient(exercise::Check& check, const std::string& name, std::size_t B, std::size_t S, std::size_t H) {
  Rng rng(7);
  const Tensor<double> q = rng.uniform_tensor<double>(Shape{B, H}, -1, 1);
  const Tensor<double> h = rng.uniform_tensor<double>(Shape{B, S, H}, -1, 1);
  const std::unique_ptr<models::Score<double>> score = yours::make_scaled_dot_score<double>(H);
  const GradcheckResult result = gradcheck(
      [&](Tape<double>&, const std::vector<Variable<double>>& in) { return score->score(in[0], score->keys(in[1])); },
      {q, h});
  check.that(result.passed, name + ": gradcheck of the scaled score, ∂/∂s_j and ∂/∂h_i",
             result.passed ? "largest |analytic − numeric| " + exercise::number(result.worst_abs_error) + " over " +
                                 std::to_string(result.checked) + " elements"
                           : result.message);
}

// The first step of a Luong decoder: the energies with DotScore, then with your score in its place.
void check_decoder(exercise::Check& check, const std::string& name) {
  const std::size_t H = 6;
  models::Seq2seq<double> model(exercise::date_model_config("luong-dot", 5, H, 3));
  auto& decoder = dynamic_cast<models::LuongDecoder<double>&>(*model.decoder);
  const models::Batch one = models::make_batch({exercise::date_source_ids("12/28/1953")});
  const auto first_step = [&] {
    Tape<double> tape;
    const models::Encoded<double> encoded = model.encode(tape, one.source, one.source_lengths);
    const models::DecoderStep<double> step =
        decoder.step(Ids(Shape{1}, {data::Vocabulary::sos_id}), encoded.state, encoded.memory);
    return std::make_pair(values(step.energies.value()), values(step.alpha.value()));
  };
  std::vector<double> dot = first_step().first;
  decoder.score = yours::make_scaled_dot_score<double>(H);
  const auto [scaled, alpha] = first_step();
  for (double& e : dot) e /= std::sqrt(static_cast<double>(H));
  check.near(name + ": step 1's e_1 with your score = with DotScore / √H", scaled, dot, 1e-12);
  double sum = 0;
  for (const double a : alpha) sum += a;
  check.near(name + ": step 1's weights α_i1 sum to 1", sum, 1.0, 1e-12);
}

void check_by_hand(exercise::Check& check) {
  std::vector<models::Hypothesis> outputs(2);
  outputs[0].attention = {{1.0f, 0.0f, 0.0f}, {0.25f, 0.75f, 0.0f}};
  outputs[1].attention = {{0.5f, 0.5f}};
  check.near("another case: three rows by hand: (1 + 0.75 + 0.5) / 3", yours::mean_largest_weight(outputs), 0.75,
             1e-15);
}

// luong-dot trained 200 steps (your score in place of DotScore when `scaled`), decoded greedily on the test dates.
std::vector<models::Hypothesis> trained_outputs(const exercise::DatesData& data, bool scaled, std::uint64_t seed) {
  const std::size_t H = 24;
  models::Seq2seq<float> model(exercise::date_model_config("luong-dot", 12, H, seed));
  if (scaled) dynamic_cast<models::LuongDecoder<float>&>(*model.decoder).score = yours::make_scaled_dot_score<float>(H);
  models::train(model, data.sources, data.targets, exercise::dates_training(200, seed));
  return models::decode(model, data.test.source, data.test.source_lengths);
}

}  // namespace

int main() {
  exercise::Check check("9.2", "the scaled dot score");
  check.run("B = 2, S = 5, H = 6", [&] { check_values(check, "B = 2, S = 5, H = 6", 2, 5, 6, 1.0, 1); });
  check.run("another case: H = 1 (√H = 1)",
            [&] { check_values(check, "another case: H = 1 (√H = 1)", 3, 4, 1, 1, 2); });
  check.run("another case: H = 64, entries near ±1",
            [&] { check_values(check, "another case: H = 64, entries near ±1", 1, 9, 64, 0.99, 3); });
  check.run("B = 2, S = 4, H = 3: gradient", [&] { check_gradient(check, "B = 2, S = 4, H = 3", 2, 4, 3); });
  check.run("in luong-dot's decoder", [&] { check_decoder(check, "in luong-dot's decoder (H = 6)"); });
  check.run("the mean largest weight by hand", [&] { check_by_hand(check); });
  const exercise::DatesData data = exercise::dates_data(3000, 100, false);  // 3,000 training pairs, 100 test dates
  check.run("luong-dot and luong-dot with your score, trained", [&] {
    std::vector<double> dot, scaled;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const std::vector<models::Hypothesis> dot_outputs = trained_outputs(data, false, seed);
      if (seed == 1) {
        check.near("another case: luong-dot trained (seed 1), 100 test dates: as the reference solution's",
                   yours::mean_largest_weight(dot_outputs), reference::mean_largest_weight(dot_outputs), 1e-12);
      }
      dot.push_back(reference::mean_largest_weight(dot_outputs));
      scaled.push_back(reference::mean_largest_weight(trained_outputs(data, true, seed)));
    }
    bool softer = true;
    for (std::size_t s = 0; s < 3; ++s) softer = softer && scaled[s] < dot[s];
    check.that(softer, "trained alike, seeds 1–3: mean max_i α_ij is lower with e_ij / √H in every seed",
               "scaled " + exercise::numbers(scaled) + ", dot " + exercise::numbers(dot));
  });
  return check.verdict();
}
