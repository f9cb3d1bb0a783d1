// The digits and the small captioners the checks of chapter 13's exercises share: the course's digits split as the
// chapter splits them, the captioner of 8-pixel-high images those checks scale the chapter's down to, composed images
// as a batch, and its training (600 steps of 16 fresh images).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "data/digits.hpp"
#include "data/locate.hpp"
#include "models/captioner.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"

namespace attend::exercise {

// The course's digits, split as the chapter splits them (seed 1: 1,497 training, 100 validation, 200 test digits).
// Throws data::DataNotFound (naming the folders searched and `attend data fetch digits`) when the file is absent.
inline const data::DigitSplit& digits() {
  static const data::DigitSplit split =
      data::split_digits(data::load_digits(data::find_data_file("digits/digits.csv.gz")), 100, 200, 1);
  return split;
}

// A small captioner of 8 × `width` images: a 1-row grid of 8×8 patches at stride 4, patch_hidden K, A = H = 32.
inline models::CaptionerConfig small_captioner_config(std::size_t width, std::size_t K, std::uint64_t seed) {
  models::CaptionerConfig config;
  config.image_height = 8, config.image_width = width;
  config.patch_height = config.patch_width = 8, config.patch_stride = 4;
  config.patch_hidden = K;
  config.annotation_size = config.hidden_size = 32;
  config.vocab_size = data::digit_vocabulary().size();
  config.seed = seed;
  return config;
}

// Composed images as one batch for a captioner of `config`, with their captions when `with_captions`.
inline models::ImageBatch<float> batch_of(const std::vector<data::Composed>& examples,
                                          const models::CaptionerConfig& config, bool with_captions) {
  std::vector<const data::Image*> images;
  std::vector<std::vector<std::int64_t>> captions;
  for (const data::Composed& e : examples) {
    images.push_back(&e.image);
    if (with_captions) captions.push_back(data::caption_ids(e.digits));
  }
  return models::make_image_batch<float>(images, captions, config);
}

// 600 steps of 16 fresh images composed by `composer` from the training digits (drawn from seed + 100), Adam at 0.01,
// clipping at 1; then the model in evaluation mode. `every_step`, if given, runs before the first step and after each.
inline void train_captioner(models::Captioner<float>& model, const data::ComposerOptions& composer, std::uint64_t seed,
                            const std::function<void()>& every_step = nullptr) {
  nn::Adam<float> adam(model.parameters(), {/*lr=*/1e-2});
  nn::OneTape<float> one_tape;
  nn::Trainer<float> trainer(adam, one_tape, /*max_grad_norm=*/1.0);
  Rng rng(seed + 100);
  if (every_step) every_step();
  model.train();
  for (std::size_t step = 0; step < 600; ++step) {
    std::vector<data::Composed> examples;
    for (std::size_t b = 0; b < 16; ++b) examples.push_back(data::compose(digits().train, composer, rng));
    const models::ImageBatch<float> batch = batch_of(examples, model.config(), true);
    trainer.step(
        16, [&](Tape<float>& tape, std::size_t, std::size_t) { return nn::ShardLoss<float>{model.loss(tape, batch)}; });
    if (every_step) every_step();
  }
  model.eval();
}

}  // namespace attend::exercise
