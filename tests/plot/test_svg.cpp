// Tests of the SVG attention heatmap and the atomic file write (plot/svg.hpp): the picture is well-formed XML (judged
// by a small checker written here, which is itself tested on broken samples), has one cell per weight with colours that
// rank like the weights, escapes every token, sizes itself from its labels, and is the same bytes under any locale;
// wrong shapes and non-finite weights are errors that name the problem; the atomic write creates and replaces files and
// leaves nothing behind when it fails. The line chart: well-formed, one polyline per series, a legend with every name,
// nice ticks that cover the data, points placed monotonically, a given y range kept, and errors that name the problem.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <clocale>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <locale>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "plot/svg.hpp"
#include "plot/svg_parts.hpp"
#include "tests/autograd/helpers.hpp"
#include "tests/plot/xml_check.hpp"

using attend::Shape;
using attend::Tensor;
using attend::plot::attention_svg;
using attend::plot::HeatmapOptions;
using attend::plot::image_attention_svg;
using attend::plot::ImageAttentionOptions;
using attend::plot::line_chart_svg;
using attend::plot::line_charts_svg;
using attend::plot::LineChart;
using attend::plot::LineChartOptions;
using attend::plot::Series;
using attend::plot::write_file_atomically;
using attend::plot::xml_escape;
using attend::testing::message_has;
using attend::testing::xml_problem;

namespace {

using Weights = std::vector<std::vector<double>>;
using Tokens = std::vector<std::string>;

// ---------------------------------------------------------------------------------------------------------------------
// Reading the picture back

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + part.size())) ++n;
  return n;
}

// The start tags (from '<' to '>') that begin with `prefix`, e.g. "<rect class=\"cell\"", in document order.
std::vector<std::string> start_tags(const std::string& svg, const std::string& prefix) {
  std::vector<std::string> tags;
  for (std::size_t pos = svg.find(prefix); pos != std::string::npos; pos = svg.find(prefix, pos + 1)) {
    tags.push_back(svg.substr(pos, svg.find('>', pos) + 1 - pos));
  }
  return tags;
}

// The value of attribute `name` in start tag `tag`, or "" when it has none.
std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const std::size_t start = tag.find(key);
  if (start == std::string::npos) return "";
  const std::size_t begin = start + key.size();
  return tag.substr(begin, tag.find('"', begin) - begin);
}

// A number written by attention_svg, read locale-independently; NaN when it is not entirely a number.
double number(const std::string& text) {
  double value = std::numeric_limits<double>::quiet_NaN();
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size())
    return std::numeric_limits<double>::quiet_NaN();
  return value;
}

// The texts of the <title> children of the cells, in document order.
std::vector<std::string> cell_tooltips(const std::string& svg) {
  std::vector<std::string> tooltips;
  for (std::size_t pos = svg.find("<rect class=\"cell\""); pos != std::string::npos;
       pos = svg.find("<rect class=\"cell\"", pos + 1)) {
    const std::size_t begin = svg.find("<title>", pos) + 7;
    tooltips.push_back(svg.substr(begin, svg.find("</title>", begin) - begin));
  }
  return tooltips;
}

// The part of the picture from `<g class="name"` to the end of that group (groups do not nest in attention_svg).
std::string group(const std::string& svg, const std::string& name) {
  const std::size_t begin = svg.find("<g class=\"" + name + "\"");
  if (begin == std::string::npos) return "";
  return svg.substr(begin, svg.find("</g>", begin) - begin);
}

// Relative luminance (WCAG) of "#rrggbb", 0 for black to 1 for white.
double luminance(const std::string& hex) {
  BOOST_REQUIRE_EQUAL(hex.size(), 7u);
  double y = 0;
  const double weights[3] = {0.2126, 0.7152, 0.0722};
  for (int c = 0; c < 3; ++c) {
    const double s = std::stoi(hex.substr(1 + 2 * c, 2), nullptr, 16) / 255.0;
    y += weights[c] * (s <= 0.04045 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4));
  }
  return y;
}

// ---------------------------------------------------------------------------------------------------------------------
// Inputs

// A character-level date, "sat 17 jul" → "07-17": tokens with spaces, weights roughly along a diagonal.
struct Example {
  Tokens source = {"s", "a", "t", " ", "1", "7", " ", "j", "u", "l"};
  Tokens output = {"0", "7", "-", "1", "7"};
  Weights weights;
  Example() {
    for (std::size_t j = 0; j < output.size(); ++j) {
      std::vector<double> row(source.size());
      double total = 0;
      for (std::size_t i = 0; i < source.size(); ++i) {
        row[i] = std::exp(-std::abs(static_cast<double>(i) - 1.5 * static_cast<double>(j) - 2));
        total += row[i];
      }
      for (double& w : row) w /= total;
      weights.push_back(row);
    }
  }
};

// A rows × columns matrix of zeros.
Weights zeros(std::size_t rows, std::size_t columns) { return Weights(rows, std::vector<double>(columns, 0.0)); }

// A folder of its own under the system's temporary folder, removed with everything in it at the end of the test.
struct ScratchFolder {
  std::filesystem::path path;
  ScratchFolder() {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           ("attend-test-svg-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  // the names of the entries of the folder, sorted
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A numpunct that writes 1.234,5 instead of 1,234.5, for a global C++ locale that would corrupt stream-formatted
// numbers.
struct DecimalComma : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(svg)

BOOST_AUTO_TEST_CASE(checker_rejects_broken_xml_and_accepts_good_xml) {
  // each of these breaks exactly one rule the checker is there for
  const std::vector<std::string> broken = {
      "<svg><g></svg></g>", "<svg><g></svg>",        "<svg a=1/>",   "<svg>a & b</svg>",       "<svg>a < b</svg>",
      "<svg a=\"x<y\"/>",   "<svg a=\"x&y\"/>",      "<svg/><svg/>", "<svg a=\"1\" a=\"2\"/>", "<svg>\xff</svg>",
      "<svg>\x01</svg>",    "<svg a=\"1\"b=\"2\"/>", "text<svg/>",   "<svg>&unknown</svg>",    "",
      "<svg></g></svg>",
  };
  for (const auto& xml : broken) BOOST_TEST(!xml_problem(xml).empty(), "accepted: " << xml);
  const std::string good =
      "<?xml version=\"1.0\"?>\n<svg a=\"1\" b='2'><!-- c --><g>&amp;&#10;&#x41;\xc3\xa9 &gt; x</g><rect/></svg>\n";
  BOOST_TEST(xml_problem(good) == "");
}

BOOST_AUTO_TEST_CASE(starts_with_svg_and_ends_with_its_end_tag) {
  const Example example;
  const std::string svg = attention_svg(example.source, example.output, example.weights);
  BOOST_TEST(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"", 0) == 0u);
  BOOST_TEST(svg.size() >= 7u);
  BOOST_TEST(svg.substr(svg.size() - 7) == "</svg>\n");
  BOOST_TEST(count(svg, "<svg") == 1u);
  // the root's size and viewBox agree, and everything uses one sans-serif font on a white background
  const std::string root = start_tags(svg, "<svg").at(0);
  const std::string width = attribute(root, "width");
  const std::string height = attribute(root, "height");
  BOOST_TEST(number(width) > 0);
  BOOST_TEST(number(height) > 0);
  BOOST_TEST(attribute(root, "viewBox") == "0 0 " + width + " " + height);
  BOOST_TEST(attribute(root, "font-family") == "sans-serif");
  // white space drawn as written, so a title's (or a token's) two spaces in a row do not collapse into one
  BOOST_TEST(attribute(root, "xml:space") == "preserve");
  const auto background = start_tags(svg, "<rect class=\"background\"");
  BOOST_REQUIRE_EQUAL(background.size(), 1u);
  BOOST_TEST(attribute(background[0], "width") == width);
  BOOST_TEST(attribute(background[0], "height") == height);
  BOOST_TEST(attribute(background[0], "fill") == "#ffffff");
}

BOOST_AUTO_TEST_CASE(output_is_well_formed_xml) {
  const Example example;
  HeatmapOptions titled;
  titled.title = "Bahdanau & Luong: \"<attention>\" isn't 'free'";
  titled.x_label = "source <chars>";
  titled.y_label = "output & more";
  HeatmapOptions tiny;
  tiny.cell_size = 3;
  HeatmapOptions huge;
  huge.cell_size = 80.5;
  const Tokens awkward = {"<", "&", "\"", "'", ">", "a<b&c\"d'e", "", "\t\n\r", "\x01\x7f", "\xff\xc3", "\xed\xa0\x80"};
  struct Case {
    Tokens source, output;
    Weights weights;
    HeatmapOptions options;
  };
  const std::vector<Case> cases = {
      {example.source, example.output, example.weights, {}},
      {example.source, example.output, example.weights, titled},
      {example.source, example.output, example.weights, tiny},
      {example.source, example.output, example.weights, huge},
      {{"the", "agreement", "on", "économique"}, {"l'", "accord"}, zeros(2, 4), titled},
      {awkward, awkward, zeros(awkward.size(), awkward.size()), titled},
      {{}, {}, {}, {}},
      {{"a", "b"}, {}, {}, titled},
      {{}, {"x", "y"}, {{}, {}}, {}},
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const std::string svg = attention_svg(c.source, c.output, c.weights, c.options);
    BOOST_TEST(xml_problem(svg) == "", "case " << k);
    BOOST_TEST(svg.substr(0, 5) == "<svg ", "case " << k);
    BOOST_TEST(svg.substr(svg.size() - 7) == "</svg>\n", "case " << k);
  }
}

BOOST_AUTO_TEST_CASE(one_cell_rect_per_weight) {
  for (const auto& [rows, columns] :
       std::vector<std::pair<std::size_t, std::size_t>>{{1, 1}, {2, 3}, {5, 1}, {7, 12}}) {
    const Tokens source(columns, "s");
    const Tokens output(rows, "o");
    const std::string svg = attention_svg(source, output, zeros(rows, columns));
    BOOST_TEST(start_tags(svg, "<rect class=\"cell\"").size() == rows * columns, rows << " x " << columns);
    BOOST_TEST(cell_tooltips(svg).size() == rows * columns);
    // one label per token, and the cells' titles plus the picture's own
    BOOST_TEST(count(group(svg, "source-labels"), "<text") == columns);
    BOOST_TEST(count(group(svg, "output-labels"), "<text") == rows);
    BOOST_TEST(count(svg, "<title>") == rows * columns + 1);
  }
}

BOOST_AUTO_TEST_CASE(cells_form_a_grid_inside_the_picture) {
  const Example example;
  HeatmapOptions options;
  options.cell_size = 17.5;
  const std::string svg = attention_svg(example.source, example.output, example.weights, options);
  const std::string root = start_tags(svg, "<svg").at(0);
  const double width = number(attribute(root, "width"));
  const double height = number(attribute(root, "height"));
  const auto cells = start_tags(svg, "<rect class=\"cell\"");
  BOOST_REQUIRE_EQUAL(cells.size(), example.source.size() * example.output.size());
  const double left = number(attribute(cells[0], "x"));
  const double top = number(attribute(cells[0], "y"));
  // row-major order: cell (j, i) sits i cells right of and j cells below cell (0, 0), all inside the picture
  for (std::size_t j = 0; j < example.output.size(); ++j) {
    for (std::size_t i = 0; i < example.source.size(); ++i) {
      const std::string& cell = cells[j * example.source.size() + i];
      BOOST_TEST(number(attribute(cell, "x")) == left + 17.5 * static_cast<double>(i),
                 boost::test_tools::tolerance(0.01));
      BOOST_TEST(number(attribute(cell, "y")) == top + 17.5 * static_cast<double>(j),
                 boost::test_tools::tolerance(0.01));
      BOOST_TEST(number(attribute(cell, "width")) == 17.5);
      BOOST_TEST(number(attribute(cell, "height")) == 17.5);
    }
  }
  BOOST_TEST(left > 0);
  BOOST_TEST(top > 0);
  BOOST_TEST(left + 17.5 * static_cast<double>(example.source.size()) < width);
  BOOST_TEST(top + 17.5 * static_cast<double>(example.output.size()) < height);
  // the colour bar right of the grid and inside the picture, with ticks 0.0, 0.5, 1.0
  const std::string bar = group(svg, "colour-bar");
  const std::string bar_rect = start_tags(bar, "<rect").at(0);
  BOOST_TEST(number(attribute(bar_rect, "x")) > left + 17.5 * static_cast<double>(example.source.size()));
  BOOST_TEST(number(attribute(bar_rect, "x")) + number(attribute(bar_rect, "width")) < width);
  BOOST_TEST(number(attribute(bar_rect, "y")) + number(attribute(bar_rect, "height")) < height);
  BOOST_TEST(attribute(bar_rect, "fill") == "url(#attention-colour-bar)");
  BOOST_TEST(count(svg, "id=\"attention-colour-bar\"") == 1u);
  for (const char* tick : {">0.0</text>", ">0.5</text>", ">1.0</text>"}) BOOST_TEST(count(bar, tick) == 1u, tick);
  BOOST_TEST(count(bar, "<line") == 3u);
}

// The colour bar says what its colours show: α unless told otherwise, in italics, standing on the bar's top, inside
// the picture (room is made above the grid, and the picture widens for a long label); a label that reaches over the
// tick labels stands clear of "1.0"; an empty label is left out.
BOOST_AUTO_TEST_CASE(colour_bar_is_labelled_with_what_it_shows) {
  const Example example;
  const auto label_of = [](const std::string& svg) {
    return start_tags(group(svg, "colour-bar"), "<text class=\"value-label\"");
  };
  const auto bar_of = [](const std::string& svg) { return start_tags(group(svg, "colour-bar"), "<rect").at(0); };
  const std::string svg = attention_svg(example.source, example.output, example.weights);
  const std::vector<std::string> labels = label_of(svg);
  BOOST_TEST_REQUIRE(labels.size() == 1u);
  BOOST_TEST(count(group(svg, "colour-bar"), "font-style=\"italic\">\u03b1</text>") == 1u);
  BOOST_TEST(number(attribute(labels[0], "x")) == number(attribute(bar_of(svg), "x")));
  BOOST_TEST(number(attribute(labels[0], "y")) < number(attribute(bar_of(svg), "y")));
  // with nothing else above the grid (no titles, small cells), room is still made: the label's top keeps the margin
  HeatmapOptions bare;
  bare.x_label = "";
  bare.cell_size = 10;
  const std::string tight = attention_svg({"a", "b"}, {"x"}, zeros(1, 2), bare);
  const std::string tight_label = label_of(tight).at(0);
  BOOST_TEST(number(attribute(tight_label, "y")) - number(attribute(tight_label, "font-size")) >= 12 - 1e-9);
  HeatmapOptions scores;
  scores.value_label = "e_ij & <more>";
  const std::string escaped = attention_svg(example.source, example.output, example.weights, scores);
  BOOST_TEST(xml_problem(escaped) == "");
  BOOST_TEST(count(escaped, ">e_ij &amp; &lt;more&gt;</text>") == 1u);
  // this one reaches over "1.0", centred on the bar's top: its baseline (and descenders) stand above that label's top
  const double raised = number(attribute(bar_of(escaped), "y")) - number(attribute(label_of(escaped).at(0), "y"));
  BOOST_TEST(raised >= 0.35 * 11 + 0.25 * 13);
  HeatmapOptions long_label;
  long_label.value_label = std::string(60, 'w');
  const std::string wide = attention_svg(example.source, example.output, example.weights, long_label);
  const double bar_left = number(attribute(bar_of(wide), "x"));
  BOOST_TEST(number(attribute(start_tags(wide, "<svg").at(0), "width")) >= bar_left + 60 * 13 * 0.6);
  HeatmapOptions none;
  none.value_label = "";
  BOOST_TEST(label_of(attention_svg(example.source, example.output, example.weights, none)).empty());
}

BOOST_AUTO_TEST_CASE(brightest_and_darkest_cells_are_the_largest_and_smallest_weights) {
  // twelve distinct weights from 0 to 1, scattered over a 3 × 4 grid
  const std::vector<std::size_t> order = {7, 2, 11, 0, 5, 9, 3, 10, 1, 6, 8, 4};
  Weights weights = zeros(3, 4);
  for (std::size_t k = 0; k < order.size(); ++k) weights[k / 4][k % 4] = static_cast<double>(order[k]) / 11.0;
  const std::string svg = attention_svg({"a", "b", "c", "d"}, {"x", "y", "z"}, weights);
  std::vector<std::string> fills;
  for (const auto& cell : start_tags(svg, "<rect class=\"cell\"")) fills.push_back(attribute(cell, "fill"));
  BOOST_REQUIRE_EQUAL(fills.size(), 12u);
  std::vector<double> brightness;
  for (const auto& fill : fills) brightness.push_back(luminance(fill));
  const auto brightest = std::max_element(brightness.begin(), brightness.end()) - brightness.begin();
  const auto darkest = std::min_element(brightness.begin(), brightness.end()) - brightness.begin();
  BOOST_TEST(order[static_cast<std::size_t>(brightest)] == 11u);
  BOOST_TEST(order[static_cast<std::size_t>(darkest)] == 0u);
  // the map's ends, and brightness rising strictly with the weight in between
  BOOST_TEST(fills[3] == "#440154");
  BOOST_TEST(fills[2] == "#fde725");
  std::vector<double> by_weight(12);
  for (std::size_t k = 0; k < order.size(); ++k) by_weight[order[k]] = brightness[k];
  for (std::size_t v = 1; v < by_weight.size(); ++v) {
    BOOST_TEST(by_weight[v] > by_weight[v - 1], "weight " << v << "/11 is not brighter than " << v - 1 << "/11");
  }
}

BOOST_AUTO_TEST_CASE(weights_outside_zero_to_one_take_the_colour_of_the_nearer_end) {
  const std::string svg = attention_svg({"a", "b", "c", "d"}, {"x"}, {{-0.25, 0.0, 1.0, 1.5}});
  const auto cells = start_tags(svg, "<rect class=\"cell\"");
  BOOST_REQUIRE_EQUAL(cells.size(), 4u);
  BOOST_TEST(attribute(cells[0], "fill") == attribute(cells[1], "fill"));
  BOOST_TEST(attribute(cells[3], "fill") == attribute(cells[2], "fill"));
  // the tooltip tells the value itself
  const auto tooltips = cell_tooltips(svg);
  BOOST_TEST(tooltips[0] == "output 'x' \u2190 source 'a': -0.250");
  BOOST_TEST(tooltips[3] == "output 'x' \u2190 source 'd': 1.500");
}

BOOST_AUTO_TEST_CASE(tooltips_name_both_tokens_and_the_weight) {
  const std::string svg = attention_svg({"17", "july"}, {"07", "-"}, {{0.7314, 0.2686}, {0.0004, 0.9996}});
  const std::vector<std::string> expected = {
      "output '07' \u2190 source '17': 0.731",
      "output '07' \u2190 source 'july': 0.269",
      "output '-' \u2190 source '17': 0.000",
      "output '-' \u2190 source 'july': 1.000",
  };
  BOOST_TEST(cell_tooltips(svg) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(tokens_with_markup_characters_are_escaped) {
  const Tokens source = {"<", "&", "\"", "a<b&c\"d'e>"};
  const Tokens output = {"<eos>", "R&D"};
  const std::string svg = attention_svg(source, output, zeros(2, 4));
  BOOST_TEST(xml_problem(svg) == "");
  const std::string columns = group(svg, "source-labels");
  BOOST_TEST(count(columns, ">&lt;</text>") == 1u);
  BOOST_TEST(count(columns, ">&amp;</text>") == 1u);
  BOOST_TEST(count(columns, ">&quot;</text>") == 1u);
  BOOST_TEST(count(columns, ">a&lt;b&amp;c&quot;d&apos;e&gt;</text>") == 1u);
  const std::string rows = group(svg, "output-labels");
  BOOST_TEST(count(rows, ">&lt;eos&gt;</text>") == 1u);
  BOOST_TEST(count(rows, ">R&amp;D</text>") == 1u);
  BOOST_TEST(count(svg, "R&D") == 0u);
  BOOST_TEST(count(svg, "<eos>") == 0u);
  BOOST_TEST(count(svg, "output '&lt;eos&gt;' \u2190 source 'a&lt;b&amp;c&quot;d&apos;e&gt;': 0.000") == 1u);
}

BOOST_AUTO_TEST_CASE(xml_escape_escapes_markup_and_replaces_what_xml_forbids) {
  BOOST_TEST(xml_escape("a<b>&\"'c") == "a&lt;b&gt;&amp;&quot;&apos;c");
  BOOST_TEST(xml_escape("&amp;") == "&amp;amp;");
  BOOST_TEST(xml_escape("\t\n\r") == "&#9;&#10;&#13;");
  BOOST_TEST(xml_escape("") == "");
  // valid UTF-8 passes unchanged: é, ␣, 日, an emoji (4 bytes)
  BOOST_TEST(xml_escape("\xc3\xa9\xe2\x90\xa3\xe6\x97\xa5\xf0\x9f\x98\x80") ==
             "\xc3\xa9\xe2\x90\xa3\xe6\x97\xa5\xf0\x9f\x98\x80");
  // control characters, stray and truncated bytes, overlong forms, surrogates, U+FFFE: one U+FFFD per bad byte
  const std::string fffd = "\xef\xbf\xbd";
  BOOST_TEST(xml_escape(std::string("a\x01", 2) + "b") == "a" + fffd + "b");
  BOOST_TEST(xml_escape(std::string("\0", 1)) == fffd);
  BOOST_TEST(xml_escape("\xff") == fffd);
  BOOST_TEST(xml_escape("x\xc3") == "x" + fffd);
  BOOST_TEST(xml_escape("\xc0\xaf") == fffd + fffd);
  BOOST_TEST(xml_escape("\xed\xa0\x80") == fffd + fffd + fffd);
  BOOST_TEST(xml_escape("\xef\xbf\xbe") == fffd);
  BOOST_TEST(xml_problem("<t a=\"" + xml_escape("\x01<&\"'\xff\xc3") + "\">" + xml_escape("]]> <&\x02") + "</t>") ==
             "");
}

BOOST_AUTO_TEST_CASE(whitespace_and_empty_tokens_are_drawn_visibly) {
  const std::string svg = attention_svg({"a", " ", "b", "\t", ""}, {"new york", "\n"}, zeros(2, 5));
  const std::string columns = group(svg, "source-labels");
  BOOST_TEST(count(columns, ">\u2423</text>") == 1u);  // ␣
  BOOST_TEST(count(columns, ">\u21E5</text>") == 1u);  // ⇥
  BOOST_TEST(count(columns, ">\u2205</text>") == 1u);  // ∅
  const std::string rows = group(svg, "output-labels");
  BOOST_TEST(count(rows, ">new\u2423york</text>") == 1u);
  BOOST_TEST(count(rows, ">\u21B5</text>") == 1u);  // ↵
  // the tooltips keep the token itself
  BOOST_TEST(count(svg, "source ' ': 0.000") == 2u);
}

BOOST_AUTO_TEST_CASE(characters_stand_upright_and_words_are_turned) {
  const Example example;
  const std::string characters = group(attention_svg(example.source, example.output, example.weights), "source-labels");
  BOOST_TEST(count(characters, "<text") == example.source.size());
  BOOST_TEST(count(characters, "rotate(") == 0u);
  const std::string words = group(attention_svg({"saturday", "17", "july"}, {"07"}, zeros(1, 3)), "source-labels");
  BOOST_TEST(count(words, "rotate(-90)") == 3u);
  // the same word fits upright in wide enough cells
  HeatmapOptions wide;
  wide.cell_size = 120;
  BOOST_TEST(count(group(attention_svg({"saturday"}, {"07"}, zeros(1, 1), wide), "source-labels"), "rotate(") == 0u);
}

BOOST_AUTO_TEST_CASE(picture_size_follows_label_lengths) {
  const auto size_of = [](const Tokens& source, const Tokens& output) {
    const std::string root =
        start_tags(attention_svg(source, output, zeros(output.size(), source.size())), "<svg").at(0);
    return std::make_pair(number(attribute(root, "width")), number(attribute(root, "height")));
  };
  const auto [short_width, short_height] = size_of({"a", "b"}, {"x", "y"});
  // longer output labels widen the picture by the extra text, not its height
  const auto [long_row_width, long_row_height] = size_of({"a", "b"}, {"x", "yyyyyyyyyyyy"});
  BOOST_TEST(long_row_width > short_width + 50);
  BOOST_TEST(long_row_height == short_height);
  // longer (turned) source labels make it taller
  const auto [long_column_width, long_column_height] = size_of({"a", "bbbbbbbbbbbb"}, {"x", "y"});
  BOOST_TEST(long_column_height > short_height + 50);
  BOOST_TEST(long_column_width == short_width);
  // widths count characters, not bytes: "éééé" (8 bytes) takes the room of "eeee", wide CJK characters take more
  const auto accented = size_of({"a"}, {"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"});
  const auto plain = size_of({"a"}, {"eeee"});
  const auto cjk = size_of({"a"}, {"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe5\xad\x97"});  // 日本語字
  BOOST_TEST(accented.first == plain.first);
  BOOST_TEST(cjk.first > plain.first);
  // a long title widens the picture to hold it
  HeatmapOptions titled;
  titled.title = std::string(80, 'T');
  const std::string root = start_tags(attention_svg({"a"}, {"x"}, zeros(1, 1), titled), "<svg").at(0);
  BOOST_TEST(number(attribute(root, "width")) > 80 * 16 * 0.5);
}

BOOST_AUTO_TEST_CASE(title_and_axis_titles_are_drawn_when_given) {
  HeatmapOptions options;
  options.title = "Dates & times";
  options.x_label = "English <src>";
  options.y_label = "French";
  const std::string svg = attention_svg({"a"}, {"x"}, zeros(1, 1), options);
  BOOST_TEST(count(svg, "<text class=\"title\"") == 1u);
  BOOST_TEST(count(svg, ">Dates &amp; times</text>") == 1u);
  BOOST_TEST(count(svg, "<title>Dates &amp; times</title>") == 1u);
  BOOST_TEST(count(svg, "<text class=\"axis-title\"") == 2u);
  BOOST_TEST(count(svg, ">English &lt;src&gt;</text>") == 1u);
  BOOST_TEST(count(svg, ">French</text>") == 1u);
  // defaults: no title, axis titles "source" and "output"; an empty axis title is left out
  const std::string plain = attention_svg({"a"}, {"x"}, zeros(1, 1));
  BOOST_TEST(count(plain, "class=\"title\"") == 0u);
  BOOST_TEST(count(plain, ">source</text>") == 1u);
  BOOST_TEST(count(plain, ">output</text>") == 1u);
  HeatmapOptions bare;
  bare.x_label = "";
  bare.y_label = "";
  BOOST_TEST(count(attention_svg({"a"}, {"x"}, zeros(1, 1), bare), "class=\"axis-title\"") == 0u);
}

BOOST_AUTO_TEST_CASE(empty_token_lists_give_an_empty_grid) {
  struct Case {
    Tokens source, output;
    Weights weights;
  };
  const std::vector<Case> cases = {{{}, {}, {}}, {{"a", "b"}, {}, {}}, {{}, {"x", "y"}, {{}, {}}}};
  for (const auto& c : cases) {
    const std::string svg = attention_svg(c.source, c.output, c.weights);
    BOOST_TEST(xml_problem(svg) == "");
    BOOST_TEST(count(svg, "class=\"cell\"") == 0u);
    BOOST_TEST(count(group(svg, "source-labels"), "<text") == c.source.size());
    BOOST_TEST(count(group(svg, "output-labels"), "<text") == c.output.size());
    // the colour bar is still there
    BOOST_TEST(count(svg, "fill=\"url(#attention-colour-bar)\"") == 1u);
  }
}

BOOST_AUTO_TEST_CASE(output_is_the_same_bytes_whatever_the_locale) {
  const Example example;
  HeatmapOptions options;
  options.cell_size = 21.37;  // fractional coordinates everywhere
  const std::string before = attention_svg(example.source, example.output, example.weights, options);
  BOOST_TEST(attention_svg(example.source, example.output, example.weights, options) == before);

  // a global C++ locale with a decimal comma (which streams would pick up), and a C one too where the machine has one
  const std::locale previous_cpp = std::locale::global(std::locale(std::locale::classic(), new DecimalComma));
  const std::string previous_c = std::setlocale(LC_ALL, nullptr);
  const char* comma_locale = nullptr;
  for (const char* name : {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "nl_NL.UTF-8"}) {
    if (std::setlocale(LC_ALL, name) != nullptr) {
      comma_locale = name;
      break;
    }
  }
  BOOST_TEST_MESSAGE("C locale with a decimal comma: " << (comma_locale ? comma_locale : "none installed"));
  const std::string during = attention_svg(example.source, example.output, example.weights, options);
  std::setlocale(LC_ALL, previous_c.c_str());
  std::locale::global(previous_cpp);

  BOOST_TEST(during == before);
  // every coordinate reads back as a plain number with a decimal point
  for (const auto& cell : start_tags(before, "<rect class=\"cell\"")) {
    BOOST_TEST(std::isfinite(number(attribute(cell, "x"))), cell);
    BOOST_TEST(std::isfinite(number(attribute(cell, "y"))), cell);
  }
}

BOOST_AUTO_TEST_CASE(weights_of_the_wrong_shape_are_rejected) {
  const Tokens source = {"a", "b", "c"};
  const Tokens output = {"x", "y"};
  BOOST_CHECK_EXCEPTION(attention_svg(source, output, zeros(3, 3)), std::invalid_argument,
                        message_has({"attention_svg", "(2,3)", "output tokens, source tokens", "3 rows"}));
  BOOST_CHECK_EXCEPTION(attention_svg(source, output, {}), std::invalid_argument, message_has({"(2,3)", "0 rows"}));
  Weights ragged = zeros(2, 3);
  ragged[1].push_back(0.5);
  BOOST_CHECK_EXCEPTION(attention_svg(source, output, ragged), std::invalid_argument,
                        message_has({"(2,3)", "row 1 has 4 entries"}));
  BOOST_CHECK_EXCEPTION(attention_svg({}, output, {}), std::invalid_argument, message_has({"(2,0)", "0 rows"}));
  BOOST_CHECK_EXCEPTION(attention_svg(source, {}, zeros(1, 3)), std::invalid_argument,
                        message_has({"(0,3)", "1 rows"}));
}

BOOST_AUTO_TEST_CASE(non_finite_weights_are_rejected) {
  const Tokens source = {"a", "b", "c"};
  const Tokens output = {"x", "y"};
  Weights weights = zeros(2, 3);
  weights[1][2] = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_EXCEPTION(attention_svg(source, output, weights), std::invalid_argument,
                        message_has({"attention_svg", "weights[1][2]", "output 'y'", "source 'c'", "nan", "finite"}));
  weights[1][2] = 0;
  weights[0][1] = -std::numeric_limits<double>::infinity();
  BOOST_CHECK_EXCEPTION(attention_svg(source, output, weights), std::invalid_argument,
                        message_has({"weights[0][1]", "output 'x'", "source 'b'", "-inf"}));
}

BOOST_AUTO_TEST_CASE(cell_size_must_be_positive_and_finite) {
  for (const double size :
       {0.0, -3.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    HeatmapOptions options;
    options.cell_size = size;
    BOOST_CHECK_EXCEPTION(attention_svg({"a"}, {"x"}, zeros(1, 1), options), std::invalid_argument,
                          message_has({"attention_svg", "cell_size"}));
  }
  HeatmapOptions negative;
  negative.cell_size = -3;
  BOOST_CHECK_EXCEPTION(attention_svg({"a"}, {"x"}, zeros(1, 1), negative), std::invalid_argument,
                        message_has({"-3.000"}));
}

BOOST_AUTO_TEST_CASE(write_file_atomically_creates_and_replaces) {
  const ScratchFolder folder;
  const std::string path = (folder.path / "figure.svg").string();
  write_file_atomically(path, "first version, the longer one\n");
  BOOST_TEST(read_whole_file(path) == "first version, the longer one\n");
  // a shorter file replaces it entirely, and nothing else is left in the folder
  const Example example;
  const std::string svg = attention_svg(example.source, example.output, example.weights);
  write_file_atomically(path, svg);
  BOOST_TEST(read_whole_file(path) == svg);
  write_file_atomically(path, "");
  BOOST_TEST(read_whole_file(path) == "");
  const std::string large(3 << 20, 'x');
  write_file_atomically(path, large);
  BOOST_TEST(read_whole_file(path) == large);
  BOOST_TEST(folder.entries() == std::vector<std::string>{"figure.svg"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(write_file_atomically_into_a_missing_folder_throws_naming_the_path) {
  const ScratchFolder folder;
  const std::string path = (folder.path / "missing" / "figure.svg").string();
  BOOST_CHECK_EXCEPTION(write_file_atomically(path, "<svg/>\n"), std::runtime_error,
                        message_has({"cannot write", path, std::strerror(ENOENT)}));
  BOOST_TEST(folder.entries().empty());
}

BOOST_AUTO_TEST_CASE(write_file_atomically_leaves_no_temporary_file_when_the_rename_fails) {
  // the target is a folder: the temporary file is created and written, then the rename fails
  const ScratchFolder folder;
  const std::filesystem::path target = folder.path / "figure.svg";
  std::filesystem::create_directory(target);
  write_file_atomically((target / "inside.txt").string(), "kept");
  BOOST_CHECK_EXCEPTION(write_file_atomically(target.string(), "<svg/>\n"), std::runtime_error,
                        message_has({target.string(), "rename", std::strerror(EISDIR)}));
  BOOST_TEST(folder.entries() == std::vector<std::string>{"figure.svg"}, boost::test_tools::per_element());
  BOOST_TEST(std::filesystem::is_directory(target));
  BOOST_TEST(read_whole_file(target / "inside.txt") == "kept");
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// ---------------------------------------------------------------------------------------------------------------------
// The line chart

// Three curves like chapter 11's: time per step against source length, one of them with a name that needs escaping.
std::vector<Series> step_times() {
  const std::vector<double> T_x = {8, 16, 32, 64, 128};
  return {{"vanilla", T_x, {0.010, 0.018, 0.034, 0.066, 0.131}},
          {"bahdanau", T_x, {0.013, 0.024, 0.047, 0.094, 0.190}},
          {"luong <general> & \"dot\"", T_x, {0.012, 0.022, 0.043, 0.085, 0.171}}};
}

// The (x, y) pairs of a polyline's points attribute.
std::vector<std::pair<double, double>> polyline_points(const std::string& tag) {
  std::vector<std::pair<double, double>> points;
  const std::string text = attribute(tag, "points");
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string point = text.substr(pos, end - pos);
    const std::size_t comma = point.find(',');
    points.emplace_back(number(point.substr(0, comma)), number(point.substr(comma + 1)));
    pos = end + 1;
  }
  return points;
}

// The numbers written as the <text> contents of group `name` (the tick labels), in document order.
std::vector<double> text_numbers(const std::string& svg, const std::string& name) {
  std::vector<double> values;
  const std::string part = group(svg, name);
  for (std::size_t pos = part.find("<text"); pos != std::string::npos; pos = part.find("<text", pos + 1)) {
    const std::size_t begin = part.find('>', pos) + 1;
    values.push_back(number(part.substr(begin, part.find('<', begin) - begin)));
  }
  return values;
}

// The <rect class="plot-area"> as top and bottom y coordinates.
std::pair<double, double> plot_top_and_bottom(const std::string& svg) {
  const std::vector<std::string> tags = start_tags(svg, "<rect class=\"plot-area\"");
  BOOST_REQUIRE_EQUAL(tags.size(), 1u);
  const double top = number(attribute(tags[0], "y"));
  return {top, top + number(attribute(tags[0], "height"))};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(svg)

BOOST_AUTO_TEST_CASE(line_chart_is_well_formed_xml) {
  LineChartOptions options;
  options.title = "time per step <ms> & more";
  options.x_label = "T_x";
  options.y_label = "seconds";
  const std::string svg = line_chart_svg(step_times(), options);
  BOOST_TEST(xml_problem(svg) == "");
  BOOST_TEST(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"", 0) == 0u);
  BOOST_TEST(svg.size() >= 7u);
  BOOST_TEST(svg.substr(svg.size() - 7) == "</svg>\n");
  BOOST_TEST(count(svg, "fill=\"#ffffff\"/>") >= 1u);  // the white background
  BOOST_TEST(count(svg, ">time per step &lt;ms&gt; &amp; more</text>") == 1u);
  BOOST_TEST(count(svg, ">T_x</text>") == 1u);
  BOOST_TEST(count(svg, ">seconds</text>") == 1u);
  BOOST_TEST(attribute(start_tags(svg, "<svg").at(0), "xml:space") == "preserve");
  // deterministic: the same input gives the same bytes; a single point and a single series are fine too
  BOOST_TEST(line_chart_svg(step_times(), options) == svg);
  BOOST_TEST(xml_problem(line_chart_svg({{"one", {3}, {-2}}})) == "");
  BOOST_TEST(xml_problem(line_chart_svg({{"", {0, 0}, {0, 0}}})) == "");
}

// Charts stacked in one picture: each drawn exactly as alone (its clip path renamed so that the ids stay unique and
// each chart's series use their own), one below the other, in a picture as wide as the widest and as high as all.
BOOST_AUTO_TEST_CASE(line_charts_stack_each_chart_as_drawn_alone) {
  LineChartOptions loss_options;
  loss_options.title = "training loss";
  loss_options.x_label = "epoch";
  LineChartOptions score_options;
  score_options.y_label = "exact match, a longer axis title";
  score_options.y_min = 0;
  score_options.y_max = 1;
  const std::vector<LineChart> charts = {{{{"loss", {0.1, 0.2, 0.3}, {2.5, 1.2, 0.7}}}, loss_options},
                                         {step_times(), score_options}};
  const std::string svg = line_charts_svg(charts, "a training");
  BOOST_TEST(xml_problem(svg) == "");
  BOOST_TEST(count(svg, "<title>a training</title>") == 1u);
  double width = 0, height = 0;
  std::size_t from = 0;
  for (std::size_t k = 0; k < charts.size(); ++k) {
    std::string alone = line_chart_svg(charts[k].series, charts[k].options);
    const std::string root = start_tags(alone, "<svg")[0];
    width = std::max(width, number(attribute(root, "width")));
    const double top = height;
    height += number(attribute(root, "height"));
    alone = alone.substr(alone.find("</title>\n") + 9);
    alone = alone.substr(0, alone.size() - 7);  // without </svg>\n
    const std::string id = "line-chart-plot-area-" + std::to_string(k + 1);
    for (std::size_t at = alone.find("line-chart-plot-area"); at != std::string::npos;
         at = alone.find("line-chart-plot-area", at + id.size())) {
      alone.replace(at, 20, id);
    }
    const std::string group = "<g class=\"chart\" transform=\"translate(0," + attend::plot::detail::px(top) + ")\">\n";
    from = svg.find(group, from);
    BOOST_TEST_REQUIRE(from != std::string::npos, group);
    from += group.size();
    BOOST_TEST(svg.compare(from, alone.size(), alone) == 0, "chart " << k + 1);
    BOOST_TEST(svg.compare(from + alone.size(), 5, "</g>\n") == 0);
    BOOST_TEST(count(svg, "id=\"" + id + "\"") == 1u);
  }
  const std::string root = start_tags(svg, "<svg")[0];
  BOOST_TEST(number(attribute(root, "width")) == width);
  BOOST_TEST(number(attribute(root, "height")) == height);
  BOOST_TEST(line_charts_svg(charts, "a training") == svg);
  // the problems, named with the chart
  BOOST_CHECK_EXCEPTION(line_charts_svg({}, "t"), std::invalid_argument, [](const std::invalid_argument& e) {
    return std::string(e.what()) == "line_charts_svg: no charts";
  });
  BOOST_CHECK_EXCEPTION(line_charts_svg({charts[0], {{{"empty", {}, {}}}, {}}}, "t"), std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          return std::string(e.what()).rfind("line_charts_svg: chart 2: line_chart_svg: ", 0) == 0;
                        });
}

BOOST_AUTO_TEST_CASE(line_chart_has_one_polyline_and_one_marker_per_point_per_series) {
  const std::vector<Series> series = step_times();
  const std::string svg = line_chart_svg(series);
  BOOST_TEST(count(svg, "<polyline class=\"line\"") == series.size());
  BOOST_TEST(count(svg, "<g class=\"series\"") == series.size());
  std::set<std::string> colours;
  for (const std::string& line : start_tags(svg, "<polyline class=\"line\"")) {
    BOOST_TEST(polyline_points(line).size() == 5u);
    colours.insert(attribute(line, "stroke"));
  }
  BOOST_TEST(colours.size() == series.size());  // a colour of its own for each series
  BOOST_TEST(count(group(svg, "series"), "class=\"marker\"") == 5u);
}

BOOST_AUTO_TEST_CASE(line_chart_legend_names_every_series_escaped) {
  const std::string legend = group(line_chart_svg(step_times()), "legend");
  for (const Series& s : step_times()) BOOST_TEST(count(legend, ">" + xml_escape(s.name) + "</text>") == 1u, s.name);
  BOOST_TEST(count(legend, ">luong &lt;general&gt; &amp; &quot;dot&quot;</text>") == 1u);
  BOOST_TEST(count(legend, "<text") == 3u);
}

BOOST_AUTO_TEST_CASE(line_chart_tick_labels_cover_the_data_in_nice_steps) {
  const std::string svg = line_chart_svg(step_times());
  for (const auto& [name, low, high] :
       {std::tuple<const char*, double, double>{"x-ticks", 8, 128}, {"y-ticks", 0.010, 0.190}}) {
    const std::vector<double> ticks = text_numbers(svg, name);
    BOOST_TEST_REQUIRE(ticks.size() >= 3u, name);
    BOOST_TEST(ticks.size() <= 12u, name);
    BOOST_TEST(ticks.front() <= low, name);
    BOOST_TEST(ticks.back() >= high, name);
    // equal steps of 1, 2 or 5 times a power of ten
    const double step = ticks[1] - ticks[0];
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    BOOST_TEST((std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 || std::abs(mantissa - 5) < 1e-6),
               name << ": step " << step);
    for (std::size_t k = 1; k < ticks.size(); ++k) BOOST_TEST(std::abs(ticks[k] - ticks[k - 1] - step) < 1e-9 * step);
  }
  // a series entirely below zero, and one constant value: still ticks around the data
  const std::vector<double> negative = text_numbers(line_chart_svg({{"n", {1, 2}, {-37, -3}}}), "y-ticks");
  BOOST_TEST(negative.front() <= -37);
  BOOST_TEST(negative.back() >= -3);
  const std::vector<double> constant = text_numbers(line_chart_svg({{"c", {1, 2}, {5, 5}}}), "y-ticks");
  BOOST_TEST(constant.front() < 5);
  BOOST_TEST(constant.back() > 5);
}

BOOST_AUTO_TEST_CASE(line_chart_draws_a_larger_y_higher_and_a_larger_x_further_right) {
  // the data are not sorted by y, and x runs backwards in the second series
  const std::vector<Series> series = {{"a", {1, 2, 3, 4}, {0.5, -2, 7, 3}}, {"b", {4, 3, 2, 1}, {1, 2, 3, 4}}};
  const std::string svg = line_chart_svg(series);
  const std::vector<std::string> lines = start_tags(svg, "<polyline class=\"line\"");
  BOOST_TEST_REQUIRE(lines.size() == 2u);
  std::vector<std::pair<double, double>> data, drawn;  // every point of both series
  for (std::size_t s = 0; s < 2; ++s) {
    const auto points = polyline_points(lines[s]);
    BOOST_TEST_REQUIRE(points.size() == series[s].x.size());
    for (std::size_t k = 0; k < points.size(); ++k) {
      data.emplace_back(series[s].x[k], series[s].y[k]);
      drawn.push_back(points[k]);
    }
  }
  const auto [top, bottom] = plot_top_and_bottom(svg);
  for (std::size_t a = 0; a < data.size(); ++a) {
    BOOST_TEST(drawn[a].second >= top);
    BOOST_TEST(drawn[a].second <= bottom);
    for (std::size_t b = 0; b < data.size(); ++b) {
      if (data[a].second > data[b].second) BOOST_TEST(drawn[a].second < drawn[b].second);  // SVG's y grows down
      if (data[a].first > data[b].first) BOOST_TEST(drawn[a].first > drawn[b].first);
      if (data[a].first == data[b].first) BOOST_TEST(drawn[a].first == drawn[b].first);
    }
  }
}

BOOST_AUTO_TEST_CASE(line_chart_keeps_the_y_range_it_is_given) {
  LineChartOptions options;
  options.y_min = 0.05;
  options.y_max = 1.5;
  const std::vector<Series> series = {{"s", {0, 1, 2}, {0.05, 1.5, 0.7}}};
  const std::string svg = line_chart_svg(series, options);
  BOOST_TEST(xml_problem(svg) == "");
  const auto [top, bottom] = plot_top_and_bottom(svg);
  const auto points = polyline_points(start_tags(svg, "<polyline class=\"line\"")[0]);
  BOOST_TEST(std::abs(points[0].second - bottom) < 0.01);  // y = y_min on the bottom edge
  BOOST_TEST(std::abs(points[1].second - top) < 0.01);     // y = y_max on the top edge
  for (const double tick : text_numbers(svg, "y-ticks")) {
    BOOST_TEST(tick >= 0.05);
    BOOST_TEST(tick <= 1.5);
  }
  // only one end given: the other comes from the data; points outside the given range are clipped
  LineChartOptions from_zero;
  from_zero.y_min = 0;
  const std::vector<double> ticks = text_numbers(line_chart_svg(step_times(), from_zero), "y-ticks");
  BOOST_TEST(ticks.front() == 0);
  BOOST_TEST(ticks.back() >= 0.190);
  LineChartOptions narrow;
  narrow.y_max = 0.05;
  const std::string clipped = line_chart_svg(step_times(), narrow);
  BOOST_TEST(xml_problem(clipped) == "");
  BOOST_TEST(count(clipped, "clip-path=\"url(#line-chart-plot-area)\"") == 3u);
  BOOST_TEST(text_numbers(clipped, "y-ticks").back() <= 0.05);
}

// y_span_min: a narrow range of values is drawn on an axis at least that tall, widened about the values' middle and
// moved within [y_floor, y_ceiling] (a score near 1 on an axis that ends at 1), never cutting off a value.
BOOST_AUTO_TEST_CASE(line_chart_widens_a_narrow_y_range_within_its_bounds) {
  const std::vector<Series> near_one = {{"validation exact_match", {1, 2, 3}, {0.985, 0.9855, 0.986}}};
  const std::vector<double> zoomed = text_numbers(line_chart_svg(near_one), "y-ticks");
  BOOST_TEST(zoomed.back() - zoomed.front() < 0.002);  // without: the thousandth fills the plot
  LineChartOptions score;
  score.y_floor = 0;
  score.y_ceiling = 1;
  score.y_span_min = 0.1;
  const std::vector<double> ticks = text_numbers(line_chart_svg(near_one, score), "y-ticks");
  BOOST_TEST(ticks.front() == 0.9, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(ticks.back() == 1.0, boost::test_tools::tolerance(1e-9));
  // in the middle of the range: widened on both sides, rounded out to ticks
  const std::vector<double> middle = text_numbers(line_chart_svg({{"s", {1, 2}, {0.5, 0.501}}}, score), "y-ticks");
  BOOST_TEST(middle.back() - middle.front() >= 0.1 - 1e-9);
  BOOST_TEST(middle.front() < 0.5);
  BOOST_TEST(middle.back() > 0.501);
  // near the floor: from 0
  const std::vector<double> low = text_numbers(line_chart_svg({{"s", {1, 2}, {0.001, 0.002}}}, score), "y-ticks");
  BOOST_TEST(low.front() == 0);
  BOOST_TEST(low.back() == 0.1, boost::test_tools::tolerance(1e-9));
  // a range wider than the span is left as it is; a value beyond the ceiling still lies on the axis
  BOOST_TEST(text_numbers(line_chart_svg(step_times(), score), "y-ticks") ==
             text_numbers(line_chart_svg(step_times()), "y-ticks"));
  const std::vector<double> beyond = text_numbers(line_chart_svg({{"s", {1, 2}, {1.04, 1.05}}}, score), "y-ticks");
  BOOST_TEST(beyond.back() >= 1.05);
  // a span wider than the bounds: the axis is cut to them, ticked as an axis given 0..1 is
  LineChartOptions too_wide = score;
  too_wide.y_span_min = 2;
  LineChartOptions zero_to_one;
  zero_to_one.y_min = 0;
  zero_to_one.y_max = 1;
  BOOST_TEST(text_numbers(line_chart_svg({{"s", {1, 2}, {0.5, 0.501}}}, too_wide), "y-ticks") ==
             text_numbers(line_chart_svg({{"s", {1, 2}, {0.5, 0.501}}}, zero_to_one), "y-ticks"));
  // values outside the bounds: widened about their middle, not stretched towards the bounds
  const std::vector<double> outside = text_numbers(line_chart_svg({{"s", {1, 2}, {1.5, 1.501}}}, score), "y-ticks");
  BOOST_TEST(outside.back() - outside.front() <= 0.2);
  BOOST_TEST(outside.front() <= 1.5);
  // a given end turns the widening off: the other end comes from the data alone
  LineChartOptions given = score;
  given.y_min = 0.45;
  const std::vector<double> from_min = text_numbers(line_chart_svg({{"s", {1, 2}, {0.5, 0.501}}}, given), "y-ticks");
  BOOST_TEST(from_min.back() <= 0.52);
  given.y_min = NAN;
  given.y_max = 0;  // below every value: an axis from -0.05 to 0, nothing moved to the floor
  BOOST_TEST(xml_problem(line_chart_svg({{"s", {1}, {0.5}}}, given)) == "");
  const std::string below = line_chart_svg({{"s", {1}, {0.5}}}, given);
  BOOST_TEST(below.find("nan") == std::string::npos);
  BOOST_TEST(below.find("inf") == std::string::npos);
  // unbounded: widened about the middle alone
  LineChartOptions free;
  free.y_span_min = 10;
  const std::vector<double> wide = text_numbers(line_chart_svg({{"s", {1, 2}, {100, 101}}}, free), "y-ticks");
  BOOST_TEST(wide.front() <= 95.5);
  BOOST_TEST(wide.back() >= 105.5);
}

BOOST_AUTO_TEST_CASE(line_chart_errors_name_the_problem) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  BOOST_CHECK_EXCEPTION(line_chart_svg({}), std::invalid_argument, message_has({"line_chart_svg", "no series"}));
  BOOST_CHECK_EXCEPTION(line_chart_svg({{"ok", {1}, {1}}, {"ragged", {1, 2, 3}, {1, 2}}}), std::invalid_argument,
                        message_has({"line_chart_svg", "'ragged'", "3 x values", "2 y values"}));
  BOOST_CHECK_EXCEPTION(line_chart_svg({{"nothing", {}, {}}}), std::invalid_argument,
                        message_has({"'nothing'", "empty"}));
  BOOST_CHECK_EXCEPTION(line_chart_svg({{"bad", {1, 2, 3}, {1, nan, 3}}}), std::invalid_argument,
                        message_has({"'bad'", "y[1]", "nan", "finite"}));
  BOOST_CHECK_EXCEPTION(line_chart_svg({{"worse", {1, -inf}, {1, 2}}}), std::invalid_argument,
                        message_has({"'worse'", "x[1]", "-inf", "finite"}));
  LineChartOptions upside_down;
  upside_down.y_min = 2;
  upside_down.y_max = 1;
  BOOST_CHECK_EXCEPTION(line_chart_svg(step_times(), upside_down), std::invalid_argument,
                        message_has({"y_min (2)", "y_max (1)"}));
  LineChartOptions infinite;
  infinite.y_max = inf;
  BOOST_CHECK_EXCEPTION(line_chart_svg(step_times(), infinite), std::invalid_argument,
                        message_has({"y_min and y_max", "finite", "inf"}));
  LineChartOptions bounds;
  bounds.y_floor = 1;
  bounds.y_ceiling = 0;
  BOOST_CHECK_EXCEPTION(line_chart_svg(step_times(), bounds), std::invalid_argument,
                        message_has({"y_floor (1)", "y_ceiling (0)"}));
  bounds.y_floor = -inf;
  BOOST_CHECK_EXCEPTION(line_chart_svg(step_times(), bounds), std::invalid_argument,
                        message_has({"y_floor and y_ceiling", "finite", "-inf"}));
  for (const double span : {-1.0, nan, inf}) {
    LineChartOptions bad_span;
    bad_span.y_span_min = span;
    BOOST_CHECK_EXCEPTION(line_chart_svg(step_times(), bad_span), std::invalid_argument,
                          message_has({"y_span_min", "finite number >= 0"}));
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(image_attention)

BOOST_AUTO_TEST_CASE(one_panel_per_token_with_the_attention_where_the_map_puts_it) {
  Tensor<float> image(Shape{2, 3});
  image.at({0, 1}) = 1.0f;  // one white pixel; the other five are black and drawn by the panel's background
  image.at({1, 2}) = 0.5f;
  const std::vector<std::vector<double>> maps = {{0, 0, 0, 0, 0, 1.0}, {0.5, 0.25, 0, 0, 0, 0.001}};
  ImageAttentionOptions options;
  options.title = "\"7 <1>\"";
  const std::string svg = image_attention_svg(image, {"7", "<eos>"}, maps, options);
  BOOST_TEST(xml_problem(svg) == "");
  BOOST_TEST(start_tags(svg, "<g class=\"panel\"").size() == 2u);
  // every panel draws the two inked pixels, white and mid-grey
  BOOST_TEST(start_tags(svg, "<rect x=\"").size() >= 2u * 2u);
  BOOST_TEST(svg.find("fill=\"#808080\"") != std::string::npos);
  // the attention: panel 1 one square at full strength; panel 2 two squares (0.5 → 0.8, 0.25 → 0.4) and nothing for
  // the weight below 2% of the largest
  const auto squares = start_tags(svg, "<rect x=\"");
  std::vector<std::string> opacities;
  for (const std::string& tag : squares) {
    if (tag.find("fill-opacity") != std::string::npos) opacities.push_back(attribute(tag, "fill-opacity"));
  }
  BOOST_TEST((opacities == std::vector<std::string>{"0.800", "0.800", "0.400"}));
  BOOST_TEST(svg.find("&quot;7 &lt;1&gt;&quot;") != std::string::npos);
  // the same input gives the same bytes
  BOOST_TEST(svg == image_attention_svg(image, {"7", "<eos>"}, maps, options));
}

BOOST_AUTO_TEST_CASE(bad_maps_are_rejected) {
  const Tensor<float> image(Shape{2, 2});
  const double nan = std::nan("");
  BOOST_CHECK_EXCEPTION(image_attention_svg(image, {"a"}, {}), std::invalid_argument,
                        message_has({"image_attention_svg", "0 attention maps for 1 tokens"}));
  BOOST_CHECK_EXCEPTION(image_attention_svg(image, {"a"}, {{1, 0, 0}}), std::invalid_argument,
                        message_has({"map 0 has 3 weights", "2×2"}));
  BOOST_CHECK_EXCEPTION(image_attention_svg(image, {"a"}, {{1, 0, nan, 0}}), std::invalid_argument,
                        message_has({"map 0", "nan"}));
  BOOST_CHECK_EXCEPTION(image_attention_svg(image, {"a"}, {{1, 0, -1, 0}}), std::invalid_argument,
                        message_has({"map 0", "-1.000"}));
  ImageAttentionOptions bad;
  bad.pixel_size = 0;
  BOOST_CHECK_EXCEPTION(image_attention_svg(image, {"a"}, {{1, 0, 0, 0}}, bad), std::invalid_argument,
                        message_has({"pixel_size"}));
}

BOOST_AUTO_TEST_SUITE_END()
