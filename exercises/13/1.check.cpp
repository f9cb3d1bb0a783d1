// The check of exercise 13.1 (exercises/13/1.hpp): c_t from the mean patch against the context of the library's
// decoder step (13.5) for captioners with a_i linear in the pixels, on a small grid, on the chapter's grid and with
// uniform weights; the linear classifier of single digits against the reference's; then small captioners with and
// without (13.1)'s hidden layer, three seeds each.
#include "exercises/13/1.hpp"

#include <algorithm>
#include <map>
#include <string>
#define yours reference
#include "exercises/13/1.hpp"
#undef yours
#include "exercises/13/digits_data.hpp"
#include "exercises/check.hpp"

using namespace attend;

namespace {

std::vector<double> row(const Tensor<double>& t, std::size_t first, std::size_t count) {
  return std::vector<double>(t.data() + first, t.data() + first + count);
}

// A captioner with a_i = W_p x_i + b_p + P_i on a canvas of `height` × `width`, patches 8×8 at `stride`.
models::CaptionerConfig linear_config(std::size_t height, std::size_t width, std::size_t stride, std::size_t A) {
  models::CaptionerConfig config;
  config.image_height = height, config.image_width = width;
  config.patch_stride = stride;
  config.patch_hidden = 0;
  config.annotation_size = config.hidden_size = A;
  config.vocab_size = data::digit_vocabulary().size();
  config.seed = 5;
  return config;
}

// One composed image through the captioner, steps t = 1 … T with teacher forcing: each step's c_t from your function
// and from the reference's against the library's context (13.5).
void contexts(exercise::Check& check, const std::string& name, const models::CaptionerConfig& config,
              std::uint64_t image_seed) {
  data::ComposerOptions composer;
  composer.height = config.image_height, composer.width = config.image_width;
  composer.min_digits = 2, composer.max_digits = std::min<std::size_t>(3, config.image_width / 11);
  Rng rng(image_seed);
  const data::Composed example = data::compose(exercise::digits().train, composer, rng);
  models::Captioner<double> model(config);
  const Tensor<double> images = models::make_image_batch<double, data::Image>({&example.image}, {}, config).images;
  const Tensor<double> patches = models::extract_patches(images, config);
  const std::size_t L = patches.shape()[1], A = config.annotation_size;
  Tape<double> tape;
  const models::Encoded<double> encoded = model.encode(tape, images);
  models::DecoderState<double> state = encoded.state;
  std::int64_t y_prev = data::Vocabulary::sos_id;
  for (std::size_t t = 1; t <= example.digits.size(); ++t) {
    const models::DecoderStep<double> step = model.decoder->step(Ids(Shape{1}, {y_prev}), state, encoded.memory);
    const std::vector<double> alpha = row(step.alpha.value(), 0, L), library = row(step.context.value(), 0, A);
    const std::string at = name + ", t = " + std::to_string(t);
    check.near(at + ": c_t = W_p x̄_t + b_p + Σ_i α_ti P_i = Σ_i α_ti a_i (the decoder step's c_t)",
               yours::context_from_mean_patch(model, patches, alpha), library, 1e-10);
    check.near(at + ": c_t = the reference's", yours::context_from_mean_patch(model, patches, alpha),
               reference::context_from_mean_patch(model, patches, alpha), 1e-10);
    state = step.state;
    y_prev = data::caption_ids(example.digits)[t - 1];
  }
}

// c with α_i = 1/L for every i: ā, the mean annotation (13.2) starts s_0 from.
void uniform_weights(exercise::Check& check) {
  const models::CaptionerConfig config = linear_config(12, 40, 4, 12);
  models::Captioner<double> model(config);
  Rng rng(9);
  const Tensor<double> images = rng.uniform_tensor<double>(Shape{1, 12, 40}, 0.0, 1.0);
  const Tensor<double> patches = models::extract_patches(images, config);
  const std::size_t L = patches.shape()[1], A = config.annotation_size;
  Tape<double> tape;
  const Tensor<double> a = model.annotate(tape, images).value();  // (1, L, A)
  std::vector<double> mean(A, 0.0);
  for (std::size_t i = 0; i < L; ++i) {
    for (std::size_t k = 0; k < A; ++k) mean[k] += a.data()[i * A + k] / static_cast<double>(L);
  }
  check.near("another case: α_i = 1/L (random pixels, L = " + std::to_string(L) + "): c = ā = (1/L) Σ_i a_i of (13.2)",
             yours::context_from_mean_patch(model, patches, std::vector<double>(L, 1.0 / static_cast<double>(L))), mean,
             1e-10);
}

std::size_t errors(const std::vector<int>& predicted, const data::DigitImages& test) {
  if (predicted.size() != test.size()) {
    throw std::runtime_error("linear_classifier gave " + std::to_string(predicted.size()) + " labels for " +
                             std::to_string(test.size()) + " digits");
  }
  std::size_t wrong = 0;
  for (std::size_t n = 0; n < test.size(); ++n) wrong += predicted[n] != test.labels[n];
  return wrong;
}

// "9 → 8 ×2, 3 → 8 ×1": (true digit, written digit) pairs, most frequent first.
std::string confusions(const std::map<std::pair<int, int>, int>& count) {
  std::vector<std::pair<int, std::pair<int, int>>> sorted;
  for (const auto& [pair, n] : count) sorted.push_back({-n, pair});
  std::sort(sorted.begin(), sorted.end());
  std::string text;
  for (std::size_t k = 0; k < sorted.size() && k < 6; ++k) {
    const auto& [n, pair] = sorted[k];
    text += (text.empty() ? "" : ", ") + std::to_string(pair.first) + " → " + std::to_string(pair.second) + " ×" +
            std::to_string(-n);
  }
  return text.empty() ? "none" : text + (sorted.size() > 6 ? ", …" : "");
}

// ---- the small captioners ---------------------------------------------------------------------------------------

struct Trained {
  double exact_match = 0;
  std::map<std::pair<int, int>, int> confused;  // digit by digit, over the captions of the right length
};

// A captioner of 8×32 images of 2–3 digits (a 1×7 grid of 8×8 patches at stride 4, A = H = 32), patch_hidden K,
// trained for 600 steps of 16 fresh images (noise 0.05; Adam at 0.01, clipping at 1); greedy captions of 400 test
// images.
Trained small_captioner(std::size_t K, std::uint64_t seed) {
  const models::CaptionerConfig config = exercise::small_captioner_config(32, K, seed);
  data::ComposerOptions composer;
  composer.height = 8, composer.width = 32, composer.min_digits = 2, composer.max_digits = 3;
  models::Captioner<float> model(config);
  data::ComposerOptions noisy = composer;
  noisy.noise = 0.05;
  exercise::train_captioner(model, noisy, seed);
  const std::vector<data::Composed> test = data::compose_many(exercise::digits().test, composer, 400, 2);
  Trained trained;
  std::size_t n = 0, right = 0;
  for (const models::Hypothesis& h : models::decode(model, exercise::batch_of(test, config, false).images)) {
    const std::vector<std::int64_t> truth = data::caption_ids(test[n++].digits);
    right += h.tokens == truth;
    if (h.tokens.size() != truth.size()) continue;
    for (std::size_t t = 0; t < truth.size(); ++t) {
      if (h.tokens[t] != truth[t]) ++trained.confused[{int(truth[t] - 4), int(h.tokens[t] - 4)}];
    }
  }
  trained.exact_match = double(right) / double(test.size());
  return trained;
}

}  // namespace

int main() {
  exercise::Check check("13.1", "annotations linear in the pixels");
  check.run("(13.5) with linear annotations, a small grid",
            [&] { contexts(check, "8×32 canvas, stride 4 (L = 7, A = 16)", linear_config(8, 32, 4, 16), 1); });
  check.run("(13.5) with linear annotations, the chapter's grid", [&] {
    contexts(check, "another case: the chapter's 12×64 canvas, stride 2 (L = 87, A = 24)", linear_config(12, 64, 2, 24),
             2);
  });
  check.run("(13.2) uniform weights", [&] { uniform_weights(check); });
  check.run("the linear classifier of single digits", [&] {
    const data::DigitImages& test = exercise::digits().test;
    const std::vector<int> yours = yours::linear_classifier(exercise::digits().train, test);
    const std::size_t wrong = errors(yours, test);
    const std::size_t expected = errors(reference::linear_classifier(exercise::digits().train, test), test);
    std::map<std::pair<int, int>, int> confused;
    for (std::size_t n = 0; n < test.size(); ++n) {
      if (yours[n] != test.labels[n]) ++confused[{test.labels[n], yours[n]}];
    }
    check.that(wrong <= expected + 4,
               "z = W x + b on the " + std::to_string(test.size()) +
                   " single test digits: errors at most the "
                   "reference's + 4",
               "yours " + std::to_string(wrong) + ", the reference's " + std::to_string(expected) +
                   "; yours confuses (true → written) " + confusions(confused));
  });
  check.run("the captioners", [&] {
    double linear = 0, hidden = 0;
    std::string seeds;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const Trained without = small_captioner(0, seed), with = small_captioner(64, seed);
      linear += without.exact_match / 3, hidden += with.exact_match / 3;
      seeds += "; seed " + std::to_string(seed) + ": " + exercise::number(with.exact_match) + " against " +
               exercise::number(without.exact_match) + " (digits confused without it: " + confusions(without.confused) +
               ")";
    }
    check.that(hidden > linear,
               "small captioners: exact match with (13.1)'s hidden layer (K = 64) above patch_hidden = 0, over 3 seeds",
               "mean " + exercise::number(hidden) + " against " + exercise::number(linear) + seeds);
  });
  return check.verdict();
}
