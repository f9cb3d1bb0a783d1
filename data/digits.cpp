// The digits data and the composer of captioning images (digits.hpp). Every random choice is `rng.next() % n` or
// rng.normal(), one per statement, so that a seed gives the same images everywhere. Chapter:
// docs/13-visual-attention.md.
#include "data/digits.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "data/data_file.hpp"
#include "data/text.hpp"

namespace attend::data {

namespace {

// The whole file, uncompressed: zlib's gzread passes an uncompressed file through unchanged.
std::string read_maybe_gzipped(const std::string& path) {
  check_data_file(path, "a digits file");
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw std::invalid_argument(path + ": cannot open (" + std::strerror(errno) + ")");
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  int code = Z_OK;
  const std::string problem = n < 0 ? gzerror(file, &code) : "";
  gzclose(file);
  if (n < 0) throw std::invalid_argument(path + ": cannot read the compressed data (" + problem + ")");
  return text;
}

}  // namespace

DigitImages parse_digits(const std::string& text, const std::string& name) {
  DigitImages digits;
  digits.fingerprint = fingerprint(text);
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = name + ":" + std::to_string(line_number) + ": ";
    std::array<std::uint8_t, digit_side * digit_side> pixels{};
    std::size_t field = 0, at = 0;
    int label = -1;
    while (true) {
      std::size_t comma = line.find(',', at);
      const std::string text_field = line.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      if (field > pixels.size()) {
        throw std::invalid_argument(where + "more than " + std::to_string(pixels.size() + 1) +
                                    " fields (64 pixels and a label)");
      }
      if (text_field.empty() || text_field.size() > 3 ||
          !std::all_of(text_field.begin(), text_field.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        throw std::invalid_argument(where + "field " + std::to_string(field + 1) + " (\"" + text_field.substr(0, 20) +
                                    "\") is not a whole number");
      }
      const int value = std::stoi(text_field);
      if (field < pixels.size()) {
        if (value > 16) {
          throw std::invalid_argument(where + "pixel " + std::to_string(field + 1) + " is " + std::to_string(value) +
                                      " (intensities are 0..16)");
        }
        pixels[field] = static_cast<std::uint8_t>(value);
      } else {
        if (value > 9) throw std::invalid_argument(where + "label " + std::to_string(value) + " (labels are 0..9)");
        label = value;
      }
      ++field;
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    if (field != pixels.size() + 1) {
      throw std::invalid_argument(where + std::to_string(field) + " fields (expected 65: 64 pixels and a label)");
    }
    digits.pixels.push_back(pixels);
    digits.labels.push_back(label);
  }
  if (digits.size() == 0) throw std::invalid_argument(name + ": no digits (the file is empty)");
  return digits;
}

DigitImages load_digits(const std::string& path) { return parse_digits(read_maybe_gzipped(path), path); }

DigitSplit split_digits(const DigitImages& digits, std::size_t validation_size, std::size_t test_size,
                        std::uint64_t seed) {
  if (validation_size + test_size >= digits.size()) {
    throw std::invalid_argument("split_digits: " + std::to_string(validation_size) + " validation and " +
                                std::to_string(test_size) + " test digits leave none of the " +
                                std::to_string(digits.size()) + " for training");
  }
  std::vector<std::size_t> order(digits.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  Rng rng(seed);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.next() % i]);
  DigitSplit split;
  for (std::size_t k = 0; k < order.size(); ++k) {
    DigitImages& part = k < validation_size               ? split.validation
                        : k < validation_size + test_size ? split.test
                                                          : split.train;
    part.pixels.push_back(digits.pixels[order[k]]);
    part.labels.push_back(digits.labels[order[k]]);
  }
  return split;
}

void ComposerOptions::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("composer: " + what); };
  if (min_digits == 0 || min_digits > max_digits) {
    fail("the digit counts " + std::to_string(min_digits) + "…" + std::to_string(max_digits) +
         " must satisfy 1 ≤ min ≤ max");
  }
  if (min_gap > max_gap)
    fail("the gaps " + std::to_string(min_gap) + "…" + std::to_string(max_gap) + " are out of order");
  if (height < digit_side) fail("the canvas height " + std::to_string(height) + " is below the digits' 8 rows");
  const std::size_t widest = max_digits * digit_side + (max_digits - 1) * max_gap;
  if (widest > width) {
    fail("the canvas width " + std::to_string(width) + " is below the " + std::to_string(widest) + " columns of " +
         std::to_string(max_digits) + " digits with gaps of " + std::to_string(max_gap));
  }
  if (!(noise >= 0.0) || noise > 1.0) fail("the noise " + std::to_string(noise) + " is outside 0…1");
}

Composed compose(const DigitImages& pool, const ComposerOptions& options, Rng& rng) {
  options.validate();
  if (pool.size() == 0) throw std::invalid_argument("composer: no digits to compose from");
  Composed result;
  result.image = Image(options.height, options.width);
  const std::size_t count = options.min_digits + rng.next() % (options.max_digits - options.min_digits + 1);
  std::vector<std::size_t> gaps(count, 0);  // gaps[k]: the empty columns before digit k (k ≥ 1)
  std::size_t used = count * digit_side;
  for (std::size_t k = 1; k < count; ++k) {
    gaps[k] = options.min_gap + rng.next() % (options.max_gap - options.min_gap + 1);
    used += gaps[k];
  }
  std::size_t column = rng.next() % (options.width - used + 1);  // the left margin
  for (std::size_t k = 0; k < count; ++k) {
    column += gaps[k];
    const std::size_t source = rng.next() % pool.size();
    const std::size_t row = rng.next() % (options.height - digit_side + 1);
    result.digits.push_back(pool.labels[source]);
    result.sources.push_back(source);
    result.columns.push_back(column);
    result.rows.push_back(row);
    for (std::size_t r = 0; r < digit_side; ++r) {
      for (std::size_t c = 0; c < digit_side; ++c) {
        result.image.at(row + r, column + c) = static_cast<float>(pool.pixels[source][r * digit_side + c]) / 16.0f;
      }
    }
    column += digit_side;
  }
  if (options.noise > 0) {
    for (float& v : result.image.pixels) {
      const double noisy = v + options.noise * rng.normal();
      v = static_cast<float>(std::clamp(noisy, 0.0, 1.0));
    }
  }
  return result;
}

std::vector<Composed> compose_many(const DigitImages& pool, const ComposerOptions& options, std::size_t count,
                                   std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Composed> result;
  result.reserve(count);
  for (std::size_t i = 0; i < count; ++i) result.push_back(compose(pool, options, rng));
  return result;
}

std::string caption_text(const std::vector<int>& digits) {
  std::string text;
  for (int d : digits) {
    if (!text.empty()) text += ' ';
    text += static_cast<char>('0' + d);
  }
  return text;
}

Vocabulary digit_vocabulary() {
  Vocabulary vocabulary;
  for (char d = '0'; d <= '9'; ++d) vocabulary.add(std::string(1, d));
  return vocabulary;
}

std::vector<std::int64_t> caption_ids(const std::vector<int>& digits) {
  std::vector<std::int64_t> ids;
  for (int d : digits) {
    if (d < 0 || d > 9) throw std::invalid_argument("caption_ids: " + std::to_string(d) + " is not a digit");
    ids.push_back(Vocabulary::unk_id + 1 + d);
  }
  return ids;
}

}  // namespace attend::data
