// PGM reading and writing (image.hpp). The format (Netpbm): magic "P5" (binary) or "P2" (plain), then width, height
// and maxval as decimal numbers separated by whitespace, with "#" comments allowed between them; one whitespace byte;
// then the pixels row by row — one byte each when maxval < 256, two bytes big-endian otherwise (P5), or decimal numbers
// (P2). Chapter: docs/13-visual-attention.md.
#include "data/image.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "data/data_file.hpp"
#include "io/atomic_file.hpp"

namespace attend::data {

namespace {

// Reads the header and the pixels of one PGM held in `bytes`, keeping the position for the next field.
class PgmReader {
 public:
  PgmReader(const std::string& bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  [[noreturn]] void fail(const std::string& problem) const { throw std::invalid_argument(name_ + ": " + problem); }

  // The next header number: skips whitespace and comments; `what` names the field in messages.
  std::size_t number(const char* what, std::size_t low, std::size_t high) {
    skip_space_and_comments();
    if (at_ >= bytes_.size()) fail(std::string("truncated header: no ") + what);
    if (!std::isdigit(static_cast<unsigned char>(bytes_[at_]))) {
      fail(std::string("bad header: the ") + what + " is not a number (found '" + printable(bytes_[at_]) + "')");
    }
    std::size_t value = 0;
    while (at_ < bytes_.size() && std::isdigit(static_cast<unsigned char>(bytes_[at_]))) {
      value = value * 10 + static_cast<std::size_t>(bytes_[at_] - '0');
      if (value > high) fail(std::string("bad header: the ") + what + " is larger than " + std::to_string(high));
      ++at_;
    }
    if (value < low)
      fail(std::string("bad header: the ") + what + " is " + std::to_string(value) + " (at least " +
           std::to_string(low) + ")");
    return value;
  }

  // The single whitespace byte between the header and binary pixel data.
  void end_of_header() {
    if (at_ >= bytes_.size()) fail("truncated: no pixel data");
    if (!std::isspace(static_cast<unsigned char>(bytes_[at_]))) fail("bad header: no whitespace after maxval");
    ++at_;
  }

  std::size_t position() const { return at_; }
  void advance(std::size_t n) { at_ += n; }
  std::size_t remaining() const { return bytes_.size() - at_; }
  const std::string& bytes() const { return bytes_; }

  // Whether only whitespace (and comments, for P2) is left.
  bool only_space_left(bool comments) {
    if (comments) {
      skip_space_and_comments();
    } else {
      while (at_ < bytes_.size() && std::isspace(static_cast<unsigned char>(bytes_[at_]))) ++at_;
    }
    return at_ >= bytes_.size();
  }

  void skip_space_and_comments() {
    while (at_ < bytes_.size()) {
      if (std::isspace(static_cast<unsigned char>(bytes_[at_]))) {
        ++at_;
      } else if (bytes_[at_] == '#') {
        while (at_ < bytes_.size() && bytes_[at_] != '\n' && bytes_[at_] != '\r') ++at_;
      } else {
        break;
      }
    }
  }

  static std::string printable(char c) {
    if (std::isprint(static_cast<unsigned char>(c))) return std::string(1, c);
    char code[8];
    std::snprintf(code, sizeof code, "\\x%02x", static_cast<unsigned char>(c));
    return code;
  }

 private:
  const std::string& bytes_;
  const std::string& name_;
  std::size_t at_ = 0;
};

constexpr std::size_t max_side = 1 << 15;  // a side longer than this is a broken header, not an image

}  // namespace

Image parse_pgm(const std::string& bytes, const std::string& name, std::size_t expected_height,
                std::size_t expected_width) {
  PgmReader in(bytes, name);
  if (bytes.empty()) in.fail("empty file, not a PGM image");
  if (bytes.size() < 2 || bytes[0] != 'P' || (bytes[1] != '5' && bytes[1] != '2')) {
    in.fail("not a PGM image (the file must start with P5 or P2, found \"" + in.printable(bytes[0]) +
            (bytes.size() > 1 ? in.printable(bytes[1]) : std::string()) + "\")");
  }
  const bool binary = bytes[1] == '5';
  in.advance(2);
  const std::size_t width = in.number("width", 1, max_side);
  const std::size_t height = in.number("height", 1, max_side);
  const std::size_t maxval = in.number("maxval", 1, 65535);
  if ((expected_height && height != expected_height) || (expected_width && width != expected_width)) {
    in.fail("the image is " + std::to_string(height) + "×" + std::to_string(width) +
            " (height×width); the model reads " + std::to_string(expected_height) + "×" +
            std::to_string(expected_width));
  }
  // the pixels are allocated only for data that is there: a header may claim 32768×32768 pixels of a short file
  Image image;
  image.height = height;
  image.width = width;
  const std::size_t count = height * width;
  const auto scale = static_cast<float>(maxval);
  auto check = [&](std::size_t value, std::size_t i) {
    if (value > maxval) {
      in.fail("pixel " + std::to_string(i) + " (row " + std::to_string(i / width) + ", column " +
              std::to_string(i % width) + ") is " + std::to_string(value) + ", above maxval " + std::to_string(maxval));
    }
  };
  if (binary) {
    in.end_of_header();
    const std::size_t bytes_per_pixel = maxval < 256 ? 1 : 2;
    const std::size_t available = in.remaining() / bytes_per_pixel;
    if (available < count) {
      in.fail("truncated: " + std::to_string(available) + " of " + std::to_string(count) + " pixels");
    }
    image.pixels.resize(count);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + in.position());
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t value = bytes_per_pixel == 1 ? p[i] : (std::size_t(p[2 * i]) << 8) | p[2 * i + 1];
      check(value, i);
      image.pixels[i] = static_cast<float>(value) / scale;
    }
    in.advance(count * bytes_per_pixel);
    if (in.remaining() != 0) {
      in.fail(std::to_string(in.remaining()) + " bytes after the last pixel (a " + std::to_string(height) + "×" +
              std::to_string(width) + " image has " + std::to_string(count * bytes_per_pixel) + " bytes of pixels)");
    }
  } else {
    image.pixels.reserve(std::min(count, in.remaining() / 2 + 1));  // a value and a space at least, each
    for (std::size_t i = 0; i < count; ++i) {
      in.skip_space_and_comments();
      if (in.remaining() == 0) in.fail("truncated: " + std::to_string(i) + " of " + std::to_string(count) + " pixels");
      const std::size_t value = in.number("pixel value", 0, 65535);
      check(value, i);
      image.pixels.push_back(static_cast<float>(value) / scale);
    }
    if (!in.only_space_left(true)) in.fail("more values after the last of " + std::to_string(count) + " pixels");
  }
  return image;
}

Tensor<float> to_tensor(const Image& image) {
  Tensor<float> result(Shape{image.height, image.width}, uninitialized);
  std::copy(image.pixels.begin(), image.pixels.end(), result.data());
  return result;
}

Image read_pgm(const std::string& path, std::size_t expected_height, std::size_t expected_width) {
  return parse_pgm(read_data_file(path, "a PGM image"), path, expected_height, expected_width);
}

std::string pgm_bytes(const Image& image) {
  std::string bytes = "P5\n" + std::to_string(image.width) + " " + std::to_string(image.height) + "\n255\n";
  for (float v : image.pixels) {
    const float clipped = std::clamp(std::isnan(v) ? 0.0f : v, 0.0f, 1.0f);
    bytes.push_back(static_cast<char>(static_cast<unsigned char>(std::lround(clipped * 255.0f))));
  }
  return bytes;
}

void write_pgm(const std::string& path, const Image& image) { write_file_atomically(path, pgm_bytes(image)); }

}  // namespace attend::data
