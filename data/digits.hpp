// The data of the visual-attention chapter: single handwritten digits (8×8 images, intensities 0..16, from the UCI
// "Optical Recognition of Handwritten Digits" test set as shipped with scikit-learn) split into training, validation
// and test digits by seed, and a composer that lays 3–6 of them side by side on one canvas with random gaps and a small
// vertical jitter. The caption of a composed image is its digit sequence, left to right ("3 0 7 1"). Because the split
// comes first, a test image contains only digit images never seen in training. Chapter: docs/13-visual-attention.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "autograd/tensor.hpp"
#include "data/image.hpp"
#include "data/vocabulary.hpp"

namespace attend::data {

inline constexpr std::size_t digit_side = 8;  // every digit image is 8×8

// Single digit images with their labels.
struct DigitImages {
  std::vector<std::array<std::uint8_t, digit_side * digit_side>> pixels;  // row by row, 0..16
  std::vector<int> labels;                                                // 0..9
  std::string fingerprint;  // of the file's text (text.hpp's fingerprint; the same compressed or not)
  std::size_t size() const { return labels.size(); }
};

// Reads digits.csv or digits.csv.gz (compressed or not, told by the content): one digit a line, 64 comma-separated
// intensities 0..16 then the label 0..9. Throws std::invalid_argument naming the file and line of the first problem
// (wrong number of fields, a field that is not a number, a value out of range), or that the file holds no digits.
DigitImages load_digits(const std::string& path);
// The same from a file's (uncompressed) text; `name` is what messages call it.
DigitImages parse_digits(const std::string& text, const std::string& name);

// The digits shuffled by seed, then cut: the first validation_size go to validation, the next test_size to test,
// the rest to training. Throws std::invalid_argument when fewer than 1 would be left for training.
struct DigitSplit {
  DigitImages train, validation, test;
};
DigitSplit split_digits(const DigitImages& digits, std::size_t validation_size, std::size_t test_size,
                        std::uint64_t seed);

struct ComposerOptions {
  std::size_t height = 12, width = 64;  // the canvas; a digit's top row lies in 0 … height − 8
  std::size_t min_digits = 3, max_digits = 6;
  std::size_t min_gap = 1, max_gap = 3;  // empty columns between neighbouring digit images (0: they touch)
  double noise = 0.0;                    // standard deviation of Gaussian noise added to every pixel (then
                                         // clipped to [0, 1]); 0: none
  // Throws std::invalid_argument naming the first bad field: counts out of order or 0, a canvas lower than 8, or a
  // canvas too narrow for max_digits digits with max_gap gaps.
  void validate() const;
};

// One composed image and what went into it.
struct Composed {
  Image image;                       // options.height × options.width, intensities value / 16 (plus noise)
  std::vector<int> digits;           // the caption: the digits left to right
  std::vector<std::size_t> sources;  // index of each digit in the pool it was drawn from
  std::vector<std::size_t> columns;  // left column of each digit image on the canvas
  std::vector<std::size_t> rows;     // top row of each digit image on the canvas
};

// Draws a digit count, the digits (uniformly from `pool`), the gaps, a left margin and each digit's top row from rng.
Composed compose(const DigitImages& pool, const ComposerOptions& options, Rng& rng);

// `count` images composed one after another from Rng(seed): the same arguments give the same images.
std::vector<Composed> compose_many(const DigitImages& pool, const ComposerOptions& options, std::size_t count,
                                   std::uint64_t seed);

// "3 0 7 1": a caption as the text the model's tokens spell.
std::string caption_text(const std::vector<int>& digits);

// The captions' vocabulary: the four specials, then the tokens "0" … "9" (digit d has id 4 + d).
Vocabulary digit_vocabulary();
// A caption as token ids of digit_vocabulary() (no <sos>/<eos>: make_targets adds them).
std::vector<std::int64_t> caption_ids(const std::vector<int>& digits);

}  // namespace attend::data
