// The SVG writing every picture of plot/ shares (svg.cpp): for heatmap.cpp, image_attention.cpp and line_chart.cpp,
// not part of the library's interface.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <utility>

namespace attend::plot::detail {

constexpr char32_t replacement_character = 0xFFFD;

// The code point that starts at text[pos] and how many bytes it takes (utf8proc); a byte that does not start a valid
// sequence decodes to U+FFFD and takes that one byte.
std::pair<char32_t, std::size_t> decode_utf8(const std::string& text, std::size_t pos);
void append_utf8(std::string& out, char32_t code);
// XML 1.0's Char production.
bool allowed_in_xml(char32_t code);
// Estimated drawn width in px of UTF-8 `text` at `font_size` (0.6 em per code point, 1 em for wide characters).
double text_width(const std::string& text, double font_size);
// A token as its label shows it: whitespace drawn visibly, the empty token as ∅. Not yet escaped.
std::string visible_token(const std::string& token);

// `value` with exactly `decimals` digits after the point; never "-0.000".
std::string fixed(double value, int decimals);
// A coordinate or length in px: two decimals at most, trailing zeros dropped ("22", "11.5", "7.33").
std::string px(double value);

// matplotlib's viridis at 0, 1/8, …, 1: perceptually uniform, dark blue-violet (0) to bright yellow (1), and readable
// in grey and by people with the common colour-vision deficiencies.
constexpr std::array<std::array<int, 3>, 9> viridis = {{
    {0x44, 0x01, 0x54},
    {0x47, 0x2c, 0x7a},
    {0x3b, 0x51, 0x8b},
    {0x2c, 0x71, 0x8e},
    {0x21, 0x90, 0x8d},
    {0x27, 0xad, 0x81},
    {0x5c, 0xc8, 0x63},
    {0xaa, 0xdc, 0x32},
    {0xfd, 0xe7, 0x25},
}};

// "#rrggbb"
std::string hex_colour(const std::array<int, 3>& rgb);
// The colour of weight t: clamped to [0, 1], then linear interpolation between the two neighbouring anchors.
std::string colour_of(double t);

// Where the title and the two axis titles of a picture go, and what they say (an empty text is left out).
struct Titles {
  const std::string& title;
  const std::string& x_label;
  const std::string& y_label;
  double title_centre, title_baseline, title_font;
  double x_title_centre, x_title_baseline;
  double y_title_baseline, y_title_centre;  // the y title is turned -90 degrees: its baseline is an x coordinate
  double axis_font;
};

void append_titles(std::string& svg, const Titles& t);

// The picture's opening: the <svg> element (width × height px, sans-serif, white space drawn as written —
// xml:space="preserve" — so a title's double space shows) and its <title>.
std::string svg_start(double width, double height, const std::string& title);
// A white rectangle over the whole picture.
std::string background(double width, double height);

}  // namespace attend::plot::detail
