// Grey-scale images for the visual-attention chapter: a plain row-major grid of intensities in [0, 1], and the PGM
// ("portable graymap", Netpbm) files that `attend predict --image` reads and `attend data --task digits` writes.
// Ink is bright (1) on a dark background (0), as in the digits data. Chapter: docs/13-visual-attention.md.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "autograd/tensor.hpp"

namespace attend::data {

struct Image {
  std::size_t height = 0, width = 0;
  std::vector<float> pixels;  // height · width intensities in [0, 1], row by row

  Image() = default;
  Image(std::size_t height, std::size_t width) : height(height), width(width), pixels(height * width, 0.0f) {}
  float& at(std::size_t row, std::size_t column) { return pixels[row * width + column]; }
  float at(std::size_t row, std::size_t column) const { return pixels[row * width + column]; }
};

// The image as a (height, width) tensor (plot::image_attention_svg draws one).
Tensor<float> to_tensor(const Image& image);

// Reads a PGM file, binary ("P5") or plain text ("P2"), with a maximum value from 1 to 65535; intensities become
// value / maxval. Comments ("#" to the end of a line) are allowed in the header. Throws std::invalid_argument naming
// the file and the problem: not a PGM file (another magic number), a malformed or out-of-range header field, pixel data
// that ends early ("truncated: 40 of 768 pixels"), a value above maxval, bytes after the last pixel, or (when
// expected_height and expected_width are non-zero) a size other than the expected one.
Image read_pgm(const std::string& path, std::size_t expected_height = 0, std::size_t expected_width = 0);
// The same from the bytes of a file; `name` is what messages call it.
Image parse_pgm(const std::string& bytes, const std::string& name, std::size_t expected_height = 0,
                std::size_t expected_width = 0);

// Writes a binary PGM with maxval 255 (intensities clipped to [0, 1] and rounded). Throws std::runtime_error naming
// the file when it cannot be written; the file appears whole or not at all.
void write_pgm(const std::string& path, const Image& image);
// The bytes write_pgm writes.
std::string pgm_bytes(const Image& image);

}  // namespace attend::data
