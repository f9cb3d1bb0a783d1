// Fuzz target `images`: the digits task's inputs on arbitrary bytes — data/image.hpp parse_pgm (any size, and the
// model's 12×64) and data/digits.hpp parse_digits (the text of digits.csv), both of which a user hands the program
// (`attend predict --image`, `attend train --task digits --data`). A finding is a crash, hang, leak or sanitizer
// report, an exception other than std::invalid_argument, and any of these broken promises:
//   - parse_pgm: a message starts with the name it was given; an image holds height·width pixels, every one finite
//     and in [0, 1], height and width > 0; with an expected size, the read succeeds exactly when the free read does
//     and gives that size; pgm_bytes of the image reads back as the same image, up to its 255 levels (|Δ| ≤ 1/510),
//     and pgm_bytes of that is byte for byte the same (writing is a fixed point after one round);
//   - parse_digits: a message starts with the name; the digits are at least one, pixels 0..16, labels 0..9, and as
//     many labels as images; the fingerprint is the text's.
#include <cmath>

#include "data/digits.hpp"
#include "data/image.hpp"
#include "data/text.hpp"
#include "tests/fuzz/fuzz.hpp"

using namespace attend::data;
using attend::fuzz::check;
using attend::fuzz::printable;

namespace {

const std::string name = "fuzz.pgm";

std::optional<Image> read(const std::string& bytes, std::size_t height, std::size_t width) {
  try {
    return parse_pgm(bytes, name, height, width);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    check(what.rfind(name + ":", 0) == 0, "parse_pgm: a message that does not start with the name: " + printable(what));
    return std::nullopt;
  }
}

void check_pgm(const std::string& bytes) {
  const std::optional<Image> image = read(bytes, 0, 0);
  const std::optional<Image> sized = read(bytes, 12, 64);
  check(sized.has_value() == (image.has_value() && image->height == 12 && image->width == 64),
        "parse_pgm: the read with the expected size 12×64 disagrees with the free read");
  if (!image) return;
  check(image->height > 0 && image->width > 0 && image->pixels.size() == image->height * image->width,
        "parse_pgm: an image whose pixels are not height × width");
  for (const float v : image->pixels)
    check(std::isfinite(v) && v >= 0.0f && v <= 1.0f, "parse_pgm: a pixel outside [0, 1]");
  if (sized) check(sized->pixels == image->pixels, "parse_pgm: the sized read gives other pixels");
  const std::string written = pgm_bytes(*image);
  const std::optional<Image> back = read(written, image->height, image->width);
  check(back.has_value(), "parse_pgm refuses what pgm_bytes wrote");
  for (std::size_t k = 0; k < image->pixels.size(); ++k) {
    check(std::fabs(back->pixels[k] - image->pixels[k]) <= 1.0f / 510 + 1e-6f,
          "pgm_bytes: a pixel moved by more than half a level");
  }
  check(pgm_bytes(*back) == written, "pgm_bytes of a written image's read is not the same bytes");
}

void check_digits(const std::string& text) {
  DigitImages digits;
  try {
    digits = parse_digits(text, "fuzz.csv");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    check(what.rfind("fuzz.csv", 0) == 0,
          "parse_digits: a message that does not start with the name: " + printable(what));
    return;
  }
  check(digits.size() > 0 && digits.pixels.size() == digits.labels.size(), "parse_digits: no digits, or uneven lists");
  for (const int label : digits.labels) check(label >= 0 && label <= 9, "parse_digits: a label outside 0..9");
  for (const auto& pixels : digits.pixels) {
    for (const auto v : pixels) check(v <= 16, "parse_digits: a pixel above 16");
  }
  check(digits.fingerprint == fingerprint(text), "parse_digits: the fingerprint is not the text's");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  check_pgm(bytes);
  check_digits(bytes);
  return 0;
}
