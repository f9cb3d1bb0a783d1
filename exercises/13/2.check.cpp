// The check of exercise 13.2 (exercises/13/2.hpp): remove_positions on both encoders; the prediction same_weights
// against the weights the library gives every pair of grid positions once P is removed, on images that hold one digit
// image twice; then small trainings with and without P, three seeds each, and the left-to-right test (13.8).
#include "exercises/13/2.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#define yours reference
#include "exercises/13/2.hpp"
#undef yours
#include "exercises/13/digits_data.hpp"
#include "exercises/check.hpp"

using namespace attend;

namespace {

// ---- remove_positions -------------------------------------------------------------------------------------------

void check_removal(exercise::Check& check, const std::string& name, models::ImageEncoderKind kind) {
  models::CaptionerConfig config;
  config.encoder = kind;
  config.patch_hidden = 8, config.channels = 2, config.annotation_size = config.hidden_size = 8;
  config.vocab_size = data::digit_vocabulary().size();
  models::Captioner<float> model(config), untouched(config);
  yours::remove_positions(model);
  double largest_P = 0, largest_other = 0;
  const nn::NamedParameters<float> after = model.parameters(), before = untouched.parameters();
  for (std::size_t k = 0; k < after.size(); ++k) {
    const Tensor<float>&a = after[k].second->value, &b = before[k].second->value;
    for (std::size_t e = 0; e < a.size(); ++e) {
      double& largest = after[k].first == "encoder.P" ? largest_P : largest_other;
      largest = std::max(largest, after[k].first == "encoder.P" ? std::abs(double(a.data()[e]))
                                                                : std::abs(double(a.data()[e]) - double(b.data()[e])));
    }
  }
  check.that(largest_P == 0, name + ": after remove_positions, P = 0", "largest |P_ik| " + exercise::number(largest_P));
  check.that(largest_other == 0, name + ": every other parameter as it was",
             "largest change " + exercise::number(largest_other));
}

// ---- same_weights -----------------------------------------------------------------------------------------------

// A canvas with digit image k drawn twice, its top row at `row`, its left columns at c1 and c2; plus noise.
data::Image twin_image(std::size_t k, std::size_t row, std::size_t c1, std::size_t c2, double noise) {
  data::Image image(12, 64);
  const auto& pixels = exercise::digits().train.pixels[k];
  for (const std::size_t column : {c1, c2}) {
    for (std::size_t r = 0; r < 8; ++r) {
      for (std::size_t c = 0; c < 8; ++c) image.at(row + r, column + c) = float(pixels[r * 8 + c]) / 16.0f;
    }
  }
  Rng rng(17);
  for (float& v : image.pixels) v = float(std::clamp(double(v) + noise * rng.normal(), 0.0, 1.0));
  return image;
}

// For every pair i < j of grid positions: does the library give them the same weight at every step of a captioner
// without positions (random weights, teacher forcing over `steps` steps)? Compared with your prediction.
void check_pairs(exercise::Check& check, const std::string& name, const data::Image& image) {
  models::CaptionerConfig config;  // the chapter's grid: 12×64, 8×8 patches at stride 2, 3×29 = 87 positions
  config.patch_hidden = 16, config.annotation_size = config.hidden_size = 16;
  config.vocab_size = data::digit_vocabulary().size();
  config.seed = 21;
  models::Captioner<double> model(config);
  yours::remove_positions(model);
  const Tensor<double> images = models::make_image_batch<double, data::Image>({&image}, {}, config).images;
  const Tensor<double> patches = models::extract_patches(images, config);
  const std::size_t L = patches.shape()[1];
  Tape<double> tape;
  const models::Encoded<double> encoded = model.encode(tape, images);
  models::DecoderState<double> state = encoded.state;
  std::vector<std::vector<double>> alpha;  // α_t, t = 1 … 4
  for (const std::int64_t y : {data::Vocabulary::sos_id, std::int64_t{7}, std::int64_t{7}, std::int64_t{9}}) {
    const models::DecoderStep<double> step = model.decoder->step(Ids(Shape{1}, {y}), state, encoded.memory);
    alpha.emplace_back(step.alpha.value().data(), step.alpha.value().data() + L);
    state = step.state;
  }
  std::size_t wrong = 0, same = 0, pairs = 0;
  std::string first;
  for (std::size_t i = 0; i < L; ++i) {
    for (std::size_t j = i + 1; j < L; ++j) {
      double largest = 0;
      for (const auto& a : alpha) largest = std::max(largest, std::abs(a[i] - a[j]));
      const bool measured = largest <= 1e-12, predicted = yours::same_weights(patches, i, j);
      ++pairs, same += measured;
      if (measured != predicted && wrong++ == 0) {
        first = "e.g. positions " + std::to_string(i) + " and " + std::to_string(j) + ": you say " +
                (predicted ? "same" : "different") + ", the largest |α_ti − α_tj| over 4 steps is " +
                exercise::number(largest);
      }
    }
  }
  check.that(wrong == 0, name + ": your same_weights(i, j) = the library's α_ti = α_tj at every t, without P",
             std::to_string(pairs - wrong) + " of " + std::to_string(pairs) + " pairs right (" + std::to_string(same) +
                 " measured the same)" + (first.empty() ? "" : "; " + first));
}

// ---- the trainings ----------------------------------------------------------------------------------------------

data::ComposerOptions small_composer() {
  data::ComposerOptions composer;
  composer.height = 8, composer.width = 32;
  composer.min_digits = 2, composer.max_digits = 3;
  return composer;
}

// 600 steps of 16 fresh images (noise 0.05), Adam at 0.01, clipping at 1; without positions, remove_positions after
// every step. Returns the share of 200 test images whose attention goes left to right (13.8).
double left_to_right(std::uint64_t seed, bool positions) {
  models::Captioner<float> model(exercise::small_captioner_config(32, 64, seed));  // a 1×7 grid
  data::ComposerOptions composer = small_composer();
  composer.noise = 0.05;
  exercise::train_captioner(model, composer, seed, [&] {
    if (!positions) yours::remove_positions(model);
  });
  const std::vector<data::Composed> test = data::compose_many(exercise::digits().test, small_composer(), 200, 2);
  std::size_t moving = 0;
  for (const models::Hypothesis& h : models::decode(model, exercise::batch_of(test, model.config(), false).images)) {
    moving += models::moves_left_to_right(model.config(), h);
  }
  return double(moving) / double(test.size());
}

}  // namespace

int main() {
  exercise::Check check("13.2", "without the position embedding");
  check.run("remove_positions, patches",
            [&] { check_removal(check, "the patch encoder", models::ImageEncoderKind::patches); });
  check.run("remove_positions, conv",
            [&] { check_removal(check, "another case: the conv encoder", models::ImageEncoderKind::conv); });
  check.run("same_weights, one digit twice", [&] {
    check_pairs(check, "digit image 0 at columns 6 and 30 (24 pixels: 12 grid columns apart)",
                twin_image(0, 2, 6, 30, 0.0));
  });
  check.run("same_weights, off the grid", [&] {
    check_pairs(check, "another case: digit image 3 at columns 5 and 30 (an odd shift)", twin_image(3, 4, 5, 30, 0.0));
  });
  check.run("same_weights, noise", [&] {
    check_pairs(check, "another case: columns 6 and 30 and pixel noise 0.02", twin_image(0, 2, 6, 30, 0.02));
  });
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    check.run("seed " + std::to_string(seed) + ": training", [&] {
      const double with = left_to_right(seed, true), without = left_to_right(seed, false);
      const std::string shares = "left to right on " + exercise::number(with) + " of the test images with P, " +
                                 exercise::number(without) + " without";
      check.that(with >= 0.85, "seed " + std::to_string(seed) + ": with P the attention goes left to right (≥ 0.85)",
                 shares);
      check.that(without <= 0.7,
                 "seed " + std::to_string(seed) + ": with P removed after every step it does not (≤ 0.7)", shares);
    });
  }
  return check.verdict();
}
