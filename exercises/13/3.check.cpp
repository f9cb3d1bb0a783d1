// The check of exercise 13.3 (exercises/13/3.hpp): failures against the reference on captions made by hand (a conv
// grid, ties, an empty caption, an unfinished one), then three small captioners trained on 2–3 digits and tested on
// 2–3, 4 and 5: your measurement against the reference's, and the claims it shows, against your prediction.
#include "exercises/13/3.hpp"

#include <string>
#define yours reference
#include "exercises/13/3.hpp"
#undef yours
#include "exercises/13/digits_data.hpp"
#include "exercises/check.hpp"

using namespace attend;

namespace {

// ---- captions made by hand --------------------------------------------------------------------------------------

// Weights over a conv grid (3×16 cells of 4×4 pixels) with all the weight on grid column k of row r.
std::vector<float> looking_at(std::size_t r, std::size_t k) {
  std::vector<float> alpha(48, 0.0f);
  alpha[r * 16 + k] = 1.0f;
  return alpha;
}

void by_hand(exercise::Check& check) {
  models::CaptionerConfig config;
  config.encoder = models::ImageEncoderKind::conv;  // grid columns 4 pixels wide, centres at 4k + 1.5
  config.max_length = 2;
  data::Composed three;
  three.digits = {1, 2, 3};
  const std::vector<data::Composed> images(5, three);
  std::vector<models::Hypothesis> outputs(5);
  // ends after 2 digits, looking further right each time
  outputs[0].tokens = {5, 6}, outputs[0].finished = true;
  outputs[0].attention = {looking_at(0, 2), looking_at(2, 6), looking_at(1, 1)};
  // stopped by the longest length (config.max_length = 2), not by the end token: not too early; turns back left
  outputs[1].tokens = {5, 7}, outputs[1].finished = false;
  outputs[1].attention = {looking_at(1, 7), looking_at(1, 5)};
  // the second token looks at the same column as the first (in another row): m_2 = m_1, not right of it
  outputs[2].tokens = {5, 6, 7}, outputs[2].finished = true;
  outputs[2].attention = {looking_at(0, 4), looking_at(2, 4), looking_at(1, 9), looking_at(0, 0)};
  // the end token at once
  outputs[3].finished = true;
  outputs[3].attention = {looking_at(1, 3)};
  // right, the end token's row looking back to the left
  outputs[4].tokens = {5, 6, 7}, outputs[4].finished = true;
  outputs[4].attention = {looking_at(1, 3), looking_at(1, 8), looking_at(0, 13), looking_at(1, 0)};
  check.near(
      "another case: 5 captions by hand on a conv grid (an early end, a stop at max_length, a tie, an empty one, "
      "an end row looking left): {too early, not left to right}",
      yours::failures(config, outputs, images), reference::failures(config, outputs, images), 1e-12);
}

// ---- the trainings ----------------------------------------------------------------------------------------------

data::ComposerOptions composer_of(std::size_t min_digits, std::size_t max_digits) {
  data::ComposerOptions composer;
  composer.height = 8, composer.width = 48;
  composer.min_digits = min_digits, composer.max_digits = max_digits;
  composer.max_gap = 2;  // 5 digits and 4 gaps fit in 48 columns
  return composer;
}

struct Measured {
  std::vector<double> short_strings, four, five;  // {too early, not left to right}
};

// One seed: the model trained, its captions of 200 test images of each length measured by your failures (and the
// reference's, which must agree).
Measured one_seed(exercise::Check& check, std::uint64_t seed) {
  models::Captioner<float> model(exercise::small_captioner_config(48, 64, seed));  // a 1×11 grid
  data::ComposerOptions composer = composer_of(2, 3);
  composer.noise = 0.05;
  exercise::train_captioner(model, composer, seed);  // 600 steps of 16 fresh images of 2–3 digits (noise 0.05)
  Measured measured;
  const std::pair<std::vector<double>*, data::ComposerOptions> sets[] = {{&measured.short_strings, composer_of(2, 3)},
                                                                         {&measured.four, composer_of(4, 4)},
                                                                         {&measured.five, composer_of(5, 5)}};
  std::string lengths[] = {"2–3 digits", "4 digits", "5 digits"};
  for (std::size_t k = 0; k < 3; ++k) {
    const std::vector<data::Composed> test = data::compose_many(exercise::digits().test, sets[k].second, 200, 2 + k);
    const std::vector<models::Hypothesis> outputs =
        models::decode(model, exercise::batch_of(test, model.config(), false).images);
    *sets[k].first = yours::failures(model.config(), outputs, test);
    check.near(
        "seed " + std::to_string(seed) + ", " + lengths[k] + ": {too early, not left to right} = the reference's",
        *sets[k].first, reference::failures(model.config(), outputs, test), 1e-12);
  }
  return measured;
}

}  // namespace

int main() {
  exercise::Check check("13.3", "train on short strings, test on long ones");
  check.run("failures by hand", [&] { by_hand(check); });
  double end_token = 0, attention = 0;  // the shares failing on 4 digits, summed over the seeds
  std::size_t seeds = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    check.run("seed " + std::to_string(seed), [&] {
      const Measured m = one_seed(check, seed);
      const std::string s = "seed " + std::to_string(seed) + ": ";
      auto shares = [](const std::vector<double>& v) {
        return "too early " + exercise::number(v[0]) + ", not left to right " + exercise::number(v[1]);
      };
      check.that(m.short_strings[0] <= 0.3 && m.short_strings[1] <= 0.15,
                 s + "on 2–3 digits, as in training, few end too early (≤ 0.3) or not left to right (≤ 0.15)",
                 shares(m.short_strings));
      check.that(m.five[0] >= 0.8, s + "on 5 digits most captions end too early (≥ 0.8)", shares(m.five));
      check.that(m.five[1] <= 0.15, s + "on 5 digits the attention still goes left to right (failing ≤ 0.15)",
                 shares(m.five));
      end_token += m.four[0], attention += m.four[1], ++seeds;
    });
  }
  check.run("your prediction", [&] {
    if (seeds < 3) throw std::runtime_error("the trainings did not all run");
    const std::string measured = end_token > attention ? "the end token" : "the attention";
    check.that(yours::fails_first() == measured, "on 4 digits, one more than in training, what fails first",
               "you say \"" + yours::fails_first() + "\"; over the three seeds " + exercise::number(end_token / 3) +
                   " of the captions end too early, " + exercise::number(attention / 3) +
                   " do not go left to right: \"" + measured + "\"");
  });
  return check.verdict();
}
