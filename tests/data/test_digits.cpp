// The visual-attention chapter's data: the digits file, the split, the composer of captioning images, and PGM files.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "data/digits.hpp"
#include "data/image.hpp"
#include "tests/needs_data.hpp"

using namespace attend;
using namespace attend::data;

namespace {

std::string digits_path() { return attend::test::data_file("digits/digits.csv.gz"); }

// A message check: the call throws std::invalid_argument whose text contains every part.
template <class F>
void expect_error(F&& call, std::initializer_list<std::string> parts) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    for (const std::string& part : parts) {
      BOOST_TEST(message.find(part) != std::string::npos, "\"" << message << "\" should contain \"" << part << "\"");
    }
    return;
  }
  BOOST_FAIL("no std::invalid_argument thrown; expected one naming " << *parts.begin());
}

std::string line_of(int first, int label) {
  std::string line;
  for (int i = 0; i < 64; ++i) line += std::to_string((first + i) % 17) + ",";
  return line + std::to_string(label);
}

DigitImages small_pool() {
  std::string text;
  for (int d = 0; d < 10; ++d) text += line_of(d, d) + "\n";
  return parse_digits(text, "pool.csv");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(digits)

BOOST_AUTO_TEST_CASE(the_shared_file_has_1797_digits_of_every_class,
                     *attend::test::needs_data({"digits/digits.csv.gz"})) {
  const DigitImages digits = load_digits(digits_path());
  BOOST_TEST(digits.size() == 1797u);
  std::vector<int> per_class(10, 0);
  for (int label : digits.labels) per_class.at(static_cast<std::size_t>(label)) += 1;
  for (int count : per_class) BOOST_TEST(count > 170);
  // the first line of the file, as printed by zcat: 0,0,5,13,9,1,0,0,… label 0
  BOOST_TEST(digits.pixels[0][2] == 5);
  BOOST_TEST(digits.pixels[0][3] == 13);
  BOOST_TEST(digits.labels[0] == 0);
}

BOOST_AUTO_TEST_CASE(parsing_reads_pixels_and_labels_and_names_bad_lines) {
  const DigitImages pool = small_pool();
  BOOST_TEST(pool.size() == 10u);
  BOOST_TEST(pool.pixels[3][0] == 3);
  BOOST_TEST(pool.pixels[3][63] == (3 + 63) % 17);
  BOOST_TEST(pool.labels[7] == 7);
  expect_error([] { parse_digits(line_of(0, 1) + "\n1,2,3\n", "d.csv"); }, {"d.csv:2:", "3 fields", "expected 65"});
  expect_error([] { parse_digits(line_of(0, 1) + ",4\n", "d.csv"); }, {"d.csv:1:", "more than 65 fields"});
  expect_error([] { parse_digits("x" + line_of(0, 1) + "\n", "d.csv"); },
               {"d.csv:1:", "field 1", "not a whole number"});
  expect_error([] { parse_digits("17" + line_of(0, 1).substr(1) + "\n", "d.csv"); }, {"d.csv:1:", "pixel 1 is 17"});
  expect_error([] { parse_digits(line_of(0, 10) + "\n", "d.csv"); }, {"d.csv:1:", "label 10"});
  expect_error([] { parse_digits("\n\n", "d.csv"); }, {"d.csv", "no digits"});
  expect_error([] { load_digits("/nonexistent/digits.csv.gz"); }, {"/nonexistent/digits.csv.gz", "cannot open"});
  expect_error([] { load_digits("/tmp"); }, {"/tmp", "is a directory"});
}

BOOST_AUTO_TEST_CASE(an_uncompressed_file_reads_the_same) {
  const std::string path = "test_digits_plain.csv";
  {
    std::ofstream out(path);
    out << line_of(2, 4) << "\r\n" << line_of(5, 9) << "\n";
  }
  const DigitImages plain = load_digits(path);
  std::remove(path.c_str());
  BOOST_TEST(plain.size() == 2u);
  BOOST_TEST(plain.labels[1] == 9);
  BOOST_TEST(plain.pixels[1][0] == 5);
}

BOOST_AUTO_TEST_CASE(the_split_is_disjoint_complete_and_seeded, *attend::test::needs_data({"digits/digits.csv.gz"})) {
  const DigitImages digits = load_digits(digits_path());
  const DigitSplit a = split_digits(digits, 200, 300, 7);
  const DigitSplit b = split_digits(digits, 200, 300, 7);
  const DigitSplit c = split_digits(digits, 200, 300, 8);
  BOOST_TEST(a.validation.size() == 200u);
  BOOST_TEST(a.test.size() == 300u);
  BOOST_TEST(a.train.size() == 1797u - 500u);
  BOOST_TEST(a.test.pixels == b.test.pixels);
  BOOST_TEST(!(a.test.pixels == c.test.pixels));
  // every digit image lands in exactly one part: the multiset of images is the file's
  std::multiset<std::array<std::uint8_t, 64>> all(digits.pixels.begin(), digits.pixels.end()), parts;
  for (const DigitImages* part : {&a.train, &a.validation, &a.test})
    parts.insert(part->pixels.begin(), part->pixels.end());
  BOOST_TEST((all == parts));
  expect_error([&] { split_digits(digits, 1000, 797, 1); }, {"split_digits", "leave none"});
}

BOOST_AUTO_TEST_CASE(a_composed_caption_matches_the_digits_on_the_canvas,
                     *attend::test::needs_data({"digits/digits.csv.gz"})) {
  const DigitImages pool = load_digits(digits_path());
  ComposerOptions options;  // 12×64, 3–6 digits, gaps 1–3
  Rng rng(3);
  std::set<std::size_t> counts;
  for (int n = 0; n < 300; ++n) {
    const Composed c = compose(pool, options, rng);
    const std::size_t k = c.digits.size();
    counts.insert(k);
    BOOST_TEST_REQUIRE(k >= 3u);
    BOOST_TEST_REQUIRE(k <= 6u);
    BOOST_TEST_REQUIRE(c.sources.size() == k);
    Image expected(options.height, options.width);
    for (std::size_t i = 0; i < k; ++i) {
      // the caption's digit is the label of the image drawn at that place, left to right, within the canvas
      BOOST_TEST(c.digits[i] == pool.labels[c.sources[i]]);
      BOOST_TEST(c.rows[i] + 8 <= options.height);
      BOOST_TEST(c.columns[i] + 8 <= options.width);
      if (i > 0) {
        const std::size_t gap = c.columns[i] - (c.columns[i - 1] + 8);
        BOOST_TEST((gap >= 1 && gap <= 3), "gap " << gap);
      }
      for (std::size_t r = 0; r < 8; ++r)
        for (std::size_t col = 0; col < 8; ++col)
          expected.at(c.rows[i] + r, c.columns[i] + col) = pool.pixels[c.sources[i]][r * 8 + col] / 16.0f;
    }
    // the canvas is exactly those digit images and nothing else
    BOOST_TEST_REQUIRE((c.image.pixels == expected.pixels));
  }
  BOOST_TEST((counts == std::set<std::size_t>{3, 4, 5, 6}));
  BOOST_TEST(caption_text({3, 0, 7, 1}) == "3 0 7 1");
}

BOOST_AUTO_TEST_CASE(caption_ids_are_the_digit_tokens_of_the_vocabulary) {
  const Vocabulary vocabulary = digit_vocabulary();
  BOOST_TEST(vocabulary.size() == 14u);
  const std::vector<std::int64_t> ids = caption_ids({3, 0, 9});
  BOOST_TEST((vocabulary.decode(ids) == std::vector<std::string>{"3", "0", "9"}));
  BOOST_CHECK_THROW(caption_ids({10}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(composing_is_deterministic_and_noise_stays_in_range) {
  const DigitImages pool = small_pool();
  ComposerOptions options;
  const auto a = compose_many(pool, options, 20, 5);
  const auto b = compose_many(pool, options, 20, 5);
  const auto c = compose_many(pool, options, 20, 6);
  for (std::size_t i = 0; i < a.size(); ++i) BOOST_TEST((a[i].image.pixels == b[i].image.pixels));
  BOOST_TEST(!(a[0].image.pixels == c[0].image.pixels && a[1].image.pixels == c[1].image.pixels));
  options.noise = 0.2;
  for (const Composed& noisy : compose_many(pool, options, 20, 5)) {
    for (float v : noisy.image.pixels) BOOST_TEST_REQUIRE((v >= 0.0f && v <= 1.0f));
  }
  options.noise = 0;
  options.min_gap = options.max_gap = 0;  // touching digits: each digit starts where the previous ends
  for (const Composed& touching : compose_many(pool, options, 20, 5)) {
    for (std::size_t i = 1; i < touching.columns.size(); ++i)
      BOOST_TEST(touching.columns[i] == touching.columns[i - 1] + 8);
  }
}

BOOST_AUTO_TEST_CASE(composer_options_are_checked) {
  const DigitImages pool = small_pool();
  Rng rng(1);
  auto with = [&](auto change) {
    ComposerOptions o;
    change(o);
    return [o, &pool, &rng] { compose(pool, o, rng); };
  };
  expect_error(with([](ComposerOptions& o) { o.min_digits = 0; }), {"composer", "digit counts"});
  expect_error(with([](ComposerOptions& o) { o.min_digits = 5, o.max_digits = 4; }), {"composer", "digit counts"});
  expect_error(with([](ComposerOptions& o) { o.min_gap = 3, o.max_gap = 2; }), {"composer", "gaps"});
  expect_error(with([](ComposerOptions& o) { o.height = 7; }), {"composer", "height 7"});
  expect_error(with([](ComposerOptions& o) { o.max_digits = 7; }), {"composer", "width 64", "74 columns", "7 digits"});
  expect_error(with([](ComposerOptions& o) { o.noise = -0.5; }), {"composer", "noise"});
  expect_error([&] { compose(DigitImages{}, ComposerOptions{}, rng); }, {"composer", "no digits"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(pgm)

BOOST_AUTO_TEST_CASE(binary_and_plain_files_read_the_same_image) {
  const Image binary = parse_pgm(
      std::string("P5\n# a comment\n3 2\n255\n") + '\x00' + '\xff' + '\x33' + '\x66' + '\x99' + '\xcc', "b.pgm");
  const Image plain = parse_pgm("P2\n3 2 255\n0 255 51\n# comment\n102 153 204\n", "p.pgm");
  BOOST_TEST(binary.height == 2u);
  BOOST_TEST(binary.width == 3u);
  BOOST_TEST((binary.pixels == plain.pixels));
  BOOST_TEST(binary.at(0, 1) == 1.0f);
  BOOST_TEST(binary.at(1, 2) == 0.8f);
  // 16-bit samples are big-endian
  const Image wide = parse_pgm(std::string("P5 1 1 1000\n") + '\x01' + '\xf4', "w.pgm");
  BOOST_TEST(wide.pixels[0] == 0.5f);
}

BOOST_AUTO_TEST_CASE(write_then_read_gives_the_image_back_to_within_rounding) {
  const DigitImages pool = small_pool();
  ComposerOptions options;
  const Composed c = compose_many(pool, options, 1, 9)[0];
  const std::string path = "test_digits_roundtrip.pgm";
  write_pgm(path, c.image);
  const Image back = read_pgm(path, options.height, options.width);
  std::remove(path.c_str());
  BOOST_TEST_REQUIRE(back.pixels.size() == c.image.pixels.size());
  for (std::size_t i = 0; i < back.pixels.size(); ++i)
    BOOST_TEST(std::abs(back.pixels[i] - c.image.pixels[i]) <= 0.5f / 255 + 1e-6f);
}

BOOST_AUTO_TEST_CASE(bad_files_are_named_with_the_problem) {
  expect_error([] { parse_pgm("", "e.pgm"); }, {"e.pgm", "empty file"});
  expect_error([] { parse_pgm("P6\n1 1\n255\nabc", "c.pgm"); }, {"c.pgm", "not a PGM image", "P6"});
  expect_error([] { parse_pgm("\x89PNG", "x.png"); }, {"x.png", "not a PGM image"});
  expect_error([] { parse_pgm("P5\nx 2\n255\n", "h.pgm"); }, {"h.pgm", "bad header", "width", "'x'"});
  expect_error([] { parse_pgm("P5\n2 0\n255\n", "h.pgm"); }, {"h.pgm", "bad header", "height is 0"});
  expect_error([] { parse_pgm("P5\n2 2\n70000\n", "h.pgm"); }, {"h.pgm", "maxval is larger than 65535"});
  expect_error([] { parse_pgm("P5\n2 2", "h.pgm"); }, {"h.pgm", "truncated header", "maxval"});
  expect_error([] { parse_pgm("P5\n2 2\n255\nab", "t.pgm"); }, {"t.pgm", "truncated", "2 of 4 pixels"});
  expect_error([] { parse_pgm("P5\n2 2\n255\nabcde", "l.pgm"); }, {"l.pgm", "1 bytes after the last pixel"});
  expect_error([] { parse_pgm("P2\n2 2\n255\n1 2 3", "t.pgm"); }, {"t.pgm", "truncated", "3 of 4 pixels"});
  expect_error([] { parse_pgm("P2\n2 1\n9\n1 10", "v.pgm"); }, {"v.pgm", "pixel 1", "column 1", "above maxval 9"});
  expect_error([] { parse_pgm("P2\n1 1\n9\n1 2", "m.pgm"); }, {"m.pgm", "more values"});
  expect_error([] { parse_pgm("P5\n8 10\n255\n" + std::string(80, 'a'), "s.pgm", 12, 64); },
               {"s.pgm", "10×8", "the model reads 12×64"});
  expect_error([] { read_pgm("/nonexistent.pgm"); }, {"/nonexistent.pgm", "cannot open"});
  expect_error([] { read_pgm("/tmp"); }, {"/tmp", "is a directory"});
}

// A header may claim a billion pixels of a file that holds a few: the error comes before 4 GB are allocated for them
// (found by reading the code for the `images` fuzz target, whose allocations are capped at 1 GiB).
BOOST_AUTO_TEST_CASE(a_huge_header_over_a_short_file_is_truncated_not_allocated) {
  expect_error([] { parse_pgm("P5\n32768 32768\n255\nabc", "big.pgm"); },
               {"big.pgm", "truncated: 3 of 1073741824 pixels"});
  expect_error([] { parse_pgm("P2\n32768 32768\n255\n1 2 3", "big.pgm"); },
               {"big.pgm", "truncated: 3 of 1073741824 pixels"});
}

BOOST_AUTO_TEST_SUITE_END()
