// The SVG attention heatmap and the line chart of plot/svg.hpp. The pictures are laid out from
// estimated text widths (code points × a fixed fraction of the font size, since no font metrics are at hand), numbers
// are formatted with std::to_chars (locale-independent, exact), and the heatmap's colours come from a 9-anchor viridis
// table interpolated linearly, the same anchors as the colour bar's gradient stops, so the bar shows exactly the map
// the cells use.
#include "plot/svg.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace attend::plot {
namespace {

constexpr char32_t replacement_character = 0xFFFD;

// ---------------------------------------------------------------------------------------------------------------------
// UTF-8 and text

// The code point that starts at text[pos] and how many bytes it takes, as utf8proc reads it. A byte that does not start
// a valid, shortest-form sequence of a scalar value (no surrogates, at most U+10FFFF) decodes to U+FFFD and takes that
// one byte.
std::pair<char32_t, std::size_t> decode_utf8(const std::string& text, std::size_t pos) {
  utf8proc_int32_t code = -1;
  const utf8proc_ssize_t length = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + pos),
                                                   static_cast<utf8proc_ssize_t>(text.size() - pos), &code);
  if (length <= 0 || code < 0) return {replacement_character, 1};
  return {static_cast<char32_t>(code), static_cast<std::size_t>(length)};
}

void append_utf8(std::string& out, char32_t code) {
  utf8proc_uint8_t bytes[4];
  const utf8proc_ssize_t length = utf8proc_encode_char(static_cast<utf8proc_int32_t>(code), bytes);
  out.append(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(length));
}

// XML 1.0's Char production: tab, newline, carriage return, and the scalar values from U+0020 except U+FFFE, U+FFFF.
bool allowed_in_xml(char32_t code) {
  return code == 0x9 || code == 0xA || code == 0xD || (code >= 0x20 && code <= 0xD7FF) ||
         (code >= 0xE000 && code <= 0xFFFD) || (code >= 0x10000 && code <= 0x10FFFF);
}

// East Asian wide and fullwidth characters, drawn about one em wide instead of about half an em.
bool is_wide(char32_t code) {
  return (code >= 0x1100 && code <= 0x115F) || (code >= 0x2E80 && code <= 0xA4CF) ||
         (code >= 0xAC00 && code <= 0xD7A3) || (code >= 0xF900 && code <= 0xFAFF) ||
         (code >= 0xFE30 && code <= 0xFE4F) || (code >= 0xFF00 && code <= 0xFF60) ||
         (code >= 0xFFE0 && code <= 0xFFE6) || (code >= 0x1F300 && code <= 0x1FAFF) ||
         (code >= 0x20000 && code <= 0x3FFFD);
}

// Estimated drawn width in px of UTF-8 `text` at `font_size`: 0.6 em per code point (a generous sans-serif average,
// so labels rather get too much room than overlap), 1 em for wide characters.
double text_width(const std::string& text, double font_size) {
  double ems = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const auto [code, length] = decode_utf8(text, pos);
    ems += is_wide(code) ? 1.0 : 0.6;
    pos += length;
  }
  return ems * font_size;
}

// A token as its label shows it: whitespace drawn visibly (space ␣, tab ⇥, newline ↵, carriage return ␍), so a
// character-level source stays readable, and the empty token as ∅. Not yet escaped.
std::string visible_token(const std::string& token) {
  if (token.empty()) return "\u2205";
  std::string shown;
  for (const char c : token) {
    shown += c == ' '    ? "\u2423"
             : c == '\t' ? "\u21E5"
             : c == '\n' ? "\u21B5"
             : c == '\r' ? "\u240D"
                         : std::string(1, c);
  }
  return shown;
}

// ---------------------------------------------------------------------------------------------------------------------
// numbers

// `value` with exactly `decimals` digits after the point, e.g. fixed(0.7314, 3) = "0.731"; never "-0.000".
std::string fixed(double value, int decimals) {
  std::array<char, 64> buffer{};
  const auto result =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed, decimals);
  if (result.ec != std::errc()) throw std::logic_error("attention_svg: cannot format a number");
  std::string text(buffer.data(), result.ptr);
  // a negative value that rounds to zero prints as "-0.000": drop the sign
  if (text.front() == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text;
}

// A coordinate or length in px: two decimals at most, trailing zeros dropped ("22", "11.5", "7.33").
std::string px(double value) {
  std::string text = fixed(value, 2);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}

// ---------------------------------------------------------------------------------------------------------------------
// colours

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

std::string hex_colour(const std::array<int, 3>& rgb) {
  constexpr char digits[] = "0123456789abcdef";
  std::string text = "#";
  for (const int channel : rgb) {
    text += digits[channel / 16];
    text += digits[channel % 16];
  }
  return text;
}

// The colour of weight t: clamped to [0, 1], then linear interpolation between the two neighbouring anchors.
std::string colour_of(double t) {
  t = std::clamp(t, 0.0, 1.0);
  const double position = t * static_cast<double>(viridis.size() - 1);  // in [0, 8]
  const std::size_t below = std::min(static_cast<std::size_t>(position), viridis.size() - 2);
  const double fraction = position - static_cast<double>(below);
  std::array<int, 3> rgb{};
  for (std::size_t c = 0; c < 3; ++c) {
    const double low = viridis[below][c];
    const double high = viridis[below + 1][c];
    rgb[c] = static_cast<int>(std::lround(low + fraction * (high - low)));
  }
  return hex_colour(rgb);
}

// ---------------------------------------------------------------------------------------------------------------------
// checks

[[noreturn]] void invalid(const std::string& message) { throw std::invalid_argument("attention_svg: " + message); }

// weights must have shape (output tokens, source tokens) and finite entries.
void check_weights(const std::vector<std::string>& source_tokens, const std::vector<std::string>& output_tokens,
                   const std::vector<std::vector<double>>& weights) {
  const std::string expected = "weights must have shape (" + std::to_string(output_tokens.size()) + "," +
                               std::to_string(source_tokens.size()) + ") (output tokens, source tokens)";
  if (weights.size() != output_tokens.size()) {
    invalid(expected + ", but it has " + std::to_string(weights.size()) + " rows");
  }
  for (std::size_t j = 0; j < weights.size(); ++j) {
    if (weights[j].size() != source_tokens.size()) {
      invalid(expected + ", but row " + std::to_string(j) + " has " + std::to_string(weights[j].size()) + " entries");
    }
    for (std::size_t i = 0; i < weights[j].size(); ++i) {
      const double w = weights[j][i];
      if (std::isfinite(w)) continue;
      const std::string value = std::isnan(w) ? "nan" : w > 0 ? "inf" : "-inf";
      invalid("weights[" + std::to_string(j) + "][" + std::to_string(i) + "] (output '" + output_tokens[j] +
              "', source '" + source_tokens[i] + "') is " + value + "; every weight must be finite");
    }
  }
}

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

void append_titles(std::string& svg, const Titles& t) {
  if (!t.title.empty()) {
    svg += "<text class=\"title\" x=\"" + px(t.title_centre) + "\" y=\"" + px(t.title_baseline) + "\" font-size=\"" +
           px(t.title_font) + "\" font-weight=\"bold\" text-anchor=\"middle\">" + xml_escape(t.title) + "</text>\n";
  }
  if (!t.x_label.empty()) {
    svg += "<text class=\"axis-title\" x=\"" + px(t.x_title_centre) + "\" y=\"" + px(t.x_title_baseline) +
           "\" font-size=\"" + px(t.axis_font) + "\" text-anchor=\"middle\">" + xml_escape(t.x_label) + "</text>\n";
  }
  if (!t.y_label.empty()) {
    svg += "<text class=\"axis-title\" transform=\"translate(" + px(t.y_title_baseline) + "," + px(t.y_title_centre) +
           ") rotate(-90)\" font-size=\"" + px(t.axis_font) + "\" text-anchor=\"middle\">" + xml_escape(t.y_label) +
           "</text>\n";
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------------
// the public functions

std::string xml_escape(const std::string& text) {
  // the characters written as references: markup, and the whitespace an attribute value would turn into spaces
  static constexpr std::array<std::pair<char32_t, const char*>, 8> references = {{
      {'&', "&amp;"},
      {'<', "&lt;"},
      {'>', "&gt;"},
      {'"', "&quot;"},
      {'\'', "&apos;"},
      {'\t', "&#9;"},
      {'\n', "&#10;"},
      {'\r', "&#13;"},
  }};
  std::string escaped;
  escaped.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const auto [code, length] = decode_utf8(text, pos);
    const auto reference = std::find_if(references.begin(), references.end(),
                                        [code = code](const auto& entry) { return entry.first == code; });
    if (reference != references.end()) {
      escaped += reference->second;
    } else {
      append_utf8(escaped, allowed_in_xml(code) ? code : replacement_character);
    }
    pos += length;
  }
  return escaped;
}

std::string attention_svg(const std::vector<std::string>& source_tokens, const std::vector<std::string>& output_tokens,
                          const std::vector<std::vector<double>>& weights, const HeatmapOptions& options) {
  check_weights(source_tokens, output_tokens, weights);
  const double cell = options.cell_size;
  if (!std::isfinite(cell) || cell <= 0) {
    invalid("cell_size must be a finite number > 0, got " +
            (std::isfinite(cell) ? fixed(cell, 3) : std::to_string(cell)));
  }
  const std::size_t rows = output_tokens.size();
  const std::size_t columns = source_tokens.size();

  // font sizes (px): token labels scale with the cells, the rest is fixed
  const double label_font = std::clamp(0.55 * cell, 8.0, 14.0);
  const double tick_font = 11;
  const double axis_font = 13;
  const double title_font = 16;
  const double margin = 12;
  const double label_gap = 5;  // between a token label and the grid

  // token labels as drawn, and the widest of each kind
  std::vector<std::string> source_labels;
  std::vector<std::string> output_labels;
  double source_label_width = 0;
  double output_label_width = 0;
  for (const auto& token : source_tokens) {
    source_labels.push_back(visible_token(token));
    source_label_width = std::max(source_label_width, text_width(source_labels.back(), label_font));
  }
  for (const auto& token : output_tokens) {
    output_labels.push_back(visible_token(token));
    output_label_width = std::max(output_label_width, text_width(output_labels.back(), label_font));
  }
  // source labels stand upright when all fit across their columns (characters), else they are turned by -90° (words)
  const bool upright = source_label_width <= cell - 2;

  // vertical layout, top down: title, x axis title, source labels, grid
  double y = margin;
  const double title_baseline = y + title_font;
  if (!options.title.empty()) y += 1.5 * title_font;
  const double x_title_baseline = y + axis_font;
  if (!options.x_label.empty()) y += 1.5 * axis_font;
  y += (upright ? label_font : source_label_width) + label_gap;
  const double grid_top = y;
  const double grid_height = static_cast<double>(rows) * cell;

  // horizontal layout, left to right: y axis title (turned), output labels, grid, colour bar with its tick labels
  double x = margin;
  const double y_title_baseline = x + axis_font;  // the turned title's glyphs lie left of its baseline
  if (!options.y_label.empty()) x += 1.5 * axis_font;
  x += output_label_width + label_gap;
  const double grid_left = x;
  const double grid_width = static_cast<double>(columns) * cell;
  const double bar_left = grid_left + grid_width + 14;
  const double bar_width = 12;
  const double bar_height = std::max(grid_height, 100.0);  // tall enough for three tick labels even for one row
  const double tick_length = 4;
  const double tick_label_left = bar_left + bar_width + tick_length + 3;

  // picture size: what the grid and the colour bar need, widened/heightened for long titles
  double width = tick_label_left + text_width("0.5", tick_font) + margin;
  double height = std::max(grid_top + grid_height, grid_top + bar_height + 0.5 * tick_font) + margin;
  width = std::max(width, text_width(options.title, title_font) + 2 * margin);
  // axis titles centred on the grid, but moved inwards (and the picture grown) when longer than the picture allows
  const double x_title_width = text_width(options.x_label, axis_font);
  const double x_title_centre = std::max(grid_left + 0.5 * grid_width, margin + 0.5 * x_title_width);
  width = std::max(width, x_title_centre + 0.5 * x_title_width + margin);
  const double y_title_width = text_width(options.y_label, axis_font);
  const double y_title_centre = std::max(grid_top + 0.5 * grid_height, margin + 0.5 * y_title_width);
  height = std::max(height, y_title_centre + 0.5 * y_title_width + margin);

  std::string svg;
  svg.reserve(512 + rows * columns * 160);
  const std::string w = px(width);
  const std::string h = px(height);
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h + "\" font-family=\"sans-serif\" fill=\"#222222\">\n";
  svg +=
      "<title>" + xml_escape(options.title.empty() ? std::string("attention weights") : options.title) + "</title>\n";
  // the colour bar's gradient: the map's anchors as stops, value 0 at the bottom
  svg += "<defs>\n<linearGradient id=\"attention-colour-bar\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
  for (std::size_t k = 0; k < viridis.size(); ++k) {
    const double offset = static_cast<double>(k) / static_cast<double>(viridis.size() - 1);
    svg += "<stop offset=\"" + fixed(offset, 3) + "\" stop-color=\"" + hex_colour(viridis[k]) + "\"/>\n";
  }
  svg += "</linearGradient>\n</defs>\n";
  svg += "<rect class=\"background\" x=\"0\" y=\"0\" width=\"" + w + "\" height=\"" + h + "\" fill=\"#ffffff\"/>\n";

  append_titles(svg, {options.title, options.x_label, options.y_label, 0.5 * width, title_baseline, title_font,
                      x_title_centre, x_title_baseline, y_title_baseline, y_title_centre, axis_font});

  // source labels along the top; dy = 0.35em centres a glyph's x-height on the column's middle line
  svg += "<g class=\"source-labels\" font-size=\"" + px(label_font) + "\" text-anchor=\"" +
         (upright ? "middle" : "start") + "\">\n";
  for (std::size_t i = 0; i < columns; ++i) {
    const std::string centre = px(grid_left + (static_cast<double>(i) + 0.5) * cell);
    const std::string bottom = px(grid_top - label_gap);
    svg += upright ? "<text x=\"" + centre + "\" y=\"" + bottom + "\">"
                   : "<text transform=\"translate(" + centre + "," + bottom + ") rotate(-90)\" dy=\"0.35em\">";
    svg += xml_escape(source_labels[i]) + "</text>\n";
  }
  svg += "</g>\n";

  // output labels down the left, right-aligned against the grid
  svg += "<g class=\"output-labels\" font-size=\"" + px(label_font) + "\" text-anchor=\"end\">\n";
  for (std::size_t j = 0; j < rows; ++j) {
    svg += "<text x=\"" + px(grid_left - label_gap) + "\" y=\"" + px(grid_top + (static_cast<double>(j) + 0.5) * cell) +
           "\" dy=\"0.35em\">" + xml_escape(output_labels[j]) + "</text>\n";
  }
  svg += "</g>\n";

  // the cells: row j = output token j, column i = source token i; white borders thinner than 1/16 of a small cell
  svg += "<g class=\"cells\" stroke=\"#ffffff\" stroke-width=\"" + px(std::min(1.0, cell / 16)) + "\">\n";
  for (std::size_t j = 0; j < rows; ++j) {
    for (std::size_t i = 0; i < columns; ++i) {
      svg += "<rect class=\"cell\" x=\"" + px(grid_left + static_cast<double>(i) * cell) + "\" y=\"" +
             px(grid_top + static_cast<double>(j) * cell) + "\" width=\"" + px(cell) + "\" height=\"" + px(cell) +
             "\" fill=\"" + colour_of(weights[j][i]) + "\"><title>output '" + xml_escape(output_tokens[j]) +
             "' \u2190 source '" + xml_escape(source_tokens[i]) + "': " + fixed(weights[j][i], 3) + "</title></rect>\n";
    }
  }
  svg += "</g>\n";

  // the colour bar, its ticks at 0, 0.5 and 1 and their labels
  svg += "<g class=\"colour-bar\" font-size=\"" + px(tick_font) + "\">\n";
  svg += "<rect x=\"" + px(bar_left) + "\" y=\"" + px(grid_top) + "\" width=\"" + px(bar_width) + "\" height=\"" +
         px(bar_height) + "\" fill=\"url(#attention-colour-bar)\" stroke=\"#555555\" stroke-width=\"0.5\"/>\n";
  for (const double value : {0.0, 0.5, 1.0}) {
    const std::string tick_y = px(grid_top + (1 - value) * bar_height);
    svg += "<line x1=\"" + px(bar_left + bar_width) + "\" y1=\"" + tick_y + "\" x2=\"" +
           px(bar_left + bar_width + tick_length) + "\" y2=\"" + tick_y +
           "\" stroke=\"#555555\" stroke-width=\"1\"/>\n";
    svg +=
        "<text x=\"" + px(tick_label_left) + "\" y=\"" + tick_y + "\" dy=\"0.35em\">" + fixed(value, 1) + "</text>\n";
  }
  svg += "</g>\n";
  svg += "</svg>\n";
  return svg;
}

// ---------------------------------------------------------------------------------------------------------------------
// visual attention

std::string image_attention_svg(const Tensor<float>& image, const std::vector<std::string>& output_tokens,
                                const std::vector<std::vector<double>>& maps, const ImageAttentionOptions& options) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("image_attention_svg: " + what); };
  const double pixel = options.pixel_size;
  if (!std::isfinite(pixel) || pixel <= 0) fail("pixel_size must be a finite number > 0");
  if (maps.size() != output_tokens.size()) {
    fail(std::to_string(maps.size()) + " attention maps for " + std::to_string(output_tokens.size()) + " tokens");
  }
  if (image.shape().rank() != 2) fail("the image must be (height, width), not " + to_string(image.shape()));
  const std::size_t H = image.shape()[0], W = image.shape()[1];
  for (std::size_t t = 0; t < maps.size(); ++t) {
    if (maps[t].size() != H * W) {
      fail("map " + std::to_string(t) + " has " + std::to_string(maps[t].size()) + " weights for a " +
           std::to_string(H) + "×" + std::to_string(W) + " image");
    }
    for (double w : maps[t]) {
      if (!std::isfinite(w) || w < 0) fail("map " + std::to_string(t) + " has the weight " + fixed(w, 3));
    }
  }
  const double label_font = 14, title_font = 16, margin = 12, gap = 8;
  double label_width = 0;
  for (const std::string& token : output_tokens)
    label_width = std::max(label_width, text_width(visible_token(token), label_font));
  const double panel_left = margin + label_width + gap;
  const double panel_width = static_cast<double>(W) * pixel, panel_height = static_cast<double>(H) * pixel;
  const double top = options.title.empty() ? margin : margin + title_font + gap;
  const double width = panel_left + panel_width + margin;
  const double height = top + static_cast<double>(output_tokens.size()) * (panel_height + gap) - gap + margin;
  std::string svg;
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + px(width) + "\" height=\"" +
         px(height) + "\" viewBox=\"0 0 " + px(width) + " " + px(height) +
         "\" font-family=\"sans-serif\" fill=\"#222222\">\n";
  svg += "<title>" + xml_escape(options.title.empty() ? std::string("visual attention") : options.title) + "</title>\n";
  svg += "<rect class=\"background\" x=\"0\" y=\"0\" width=\"" + px(width) + "\" height=\"" + px(height) +
         "\" fill=\"#ffffff\"/>\n";
  if (!options.title.empty()) {
    svg += "<text class=\"title\" x=\"" + px(0.5 * width) + "\" y=\"" + px(margin + title_font * 0.8) +
           "\" font-size=\"" + px(title_font) + "\" text-anchor=\"middle\">" + xml_escape(options.title) + "</text>\n";
  }
  for (std::size_t t = 0; t < output_tokens.size(); ++t) {
    const double y0 = top + static_cast<double>(t) * (panel_height + gap);
    svg += "<g class=\"panel\">\n";
    svg += "<text x=\"" + px(panel_left - gap) + "\" y=\"" + px(y0 + 0.5 * panel_height) +
           "\" dy=\"0.35em\" font-size=\"" + px(label_font) + "\" text-anchor=\"end\">" +
           xml_escape(visible_token(output_tokens[t])) + "</text>\n";
    // the image: a black panel, then every pixel with ink as a grey square
    svg += "<rect x=\"" + px(panel_left) + "\" y=\"" + px(y0) + "\" width=\"" + px(panel_width) + "\" height=\"" +
           px(panel_height) + "\" fill=\"#000000\"/>\n";
    for (std::size_t r = 0; r < H; ++r) {
      for (std::size_t c = 0; c < W; ++c) {
        const double v = std::clamp(static_cast<double>(image.data()[r * W + c]), 0.0, 1.0);
        const int grey = static_cast<int>(std::lround(v * 255));
        if (grey == 0) continue;
        svg += "<rect x=\"" + px(panel_left + static_cast<double>(c) * pixel) + "\" y=\"" +
               px(y0 + static_cast<double>(r) * pixel) + "\" width=\"" + px(pixel) + "\" height=\"" + px(pixel) +
               "\" fill=\"" + hex_colour({grey, grey, grey}) + "\"/>\n";
      }
    }
    // the attention: orange squares, opacity 0.8 · weight / the panel's largest weight (below 2% of it: none)
    const double largest = *std::max_element(maps[t].begin(), maps[t].end());
    svg += "<g class=\"attention\" fill=\"#ff6a00\">\n";
    for (std::size_t k = 0; largest > 0 && k < H * W; ++k) {
      const double share = maps[t][k] / largest;
      if (share < 0.02) continue;
      svg += "<rect x=\"" + px(panel_left + static_cast<double>(k % W) * pixel) + "\" y=\"" +
             px(y0 + static_cast<double>(k / W) * pixel) + "\" width=\"" + px(pixel) + "\" height=\"" + px(pixel) +
             "\" fill-opacity=\"" + fixed(0.8 * share, 3) + "\"/>\n";
    }
    svg += "</g>\n</g>\n";
  }
  svg += "</svg>\n";
  return svg;
}

// ---------------------------------------------------------------------------------------------------------------------
// the line chart

namespace {

[[noreturn]] void invalid_chart(const std::string& message) {
  throw std::invalid_argument("line_chart_svg: " + message);
}

// A number as short as it reads back exactly ("8", "0.0123", "1e-07"): the tooltips' format.
std::string shortest(double value) {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  if (result.ec != std::errc()) throw std::logic_error("line_chart_svg: cannot format a number");
  return std::string(buffer.data(), result.ptr);
}

// A tick label: `decimals` digits after the point ("0.25", "120"), or six significant digits in scientific notation
// for the very large and the very small, which fixed notation would spell out digit by digit.
std::string tick_label(double value, int decimals) {
  if (decimals <= 12 && std::abs(value) < 1e15) return fixed(value, decimals);
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::general, 6);
  if (result.ec != std::errc()) throw std::logic_error("line_chart_svg: cannot format a number");
  return std::string(buffer.data(), result.ptr);
}

// Okabe & Ito's palette for colour-blind readers, in the order its colours are most distinct on white (its yellow,
// too pale for a thin line, comes last).
constexpr std::array<const char*, 8> okabe_ito = {"#0072b2", "#d55e00", "#009e73", "#e69f00",
                                                  "#cc79a7", "#56b4e9", "#000000", "#f0e442"};

// The axis of one coordinate: its ends, the tick step and how many decimals the tick labels need.
struct Axis {
  double low = 0, high = 1, step = 1;
  int decimals = 0;

  // The ticks: the multiples of step within [low, high], computed as k·step (no accumulated rounding).
  std::vector<double> ticks() const {
    std::vector<double> values;
    const double first = std::ceil(low / step - 1e-9);
    for (double k = first; k * step <= high + 1e-9 * step && values.size() < 100; ++k) values.push_back(k * step);
    return values;
  }
};

// A "nice" axis for the data range [data_low, data_high]: about five ticks, 1, 2 or 5 times a power of ten apart. An
// end that is NAN comes from the data and is moved out to the nearest tick; a given end is kept as it is.
Axis nice_axis(double data_low, double data_high, double given_low, double given_high) {
  double low = std::isnan(given_low) ? data_low : given_low;
  double high = std::isnan(given_high) ? data_high : given_high;
  if (high <= low) {  // one value (or an end given beyond the data): open up a range around it on the free side
    const double pad = low == 0 && high == 0 ? 1 : 0.1 * std::max(std::abs(low), std::abs(high));
    if (std::isnan(given_high)) {
      high = low + pad;
    } else {
      low = high - pad;
    }
    if (std::isnan(given_low) && std::isnan(given_high)) low -= pad;  // a lone value sits in the middle
  }
  if (!std::isfinite(high - low)) invalid_chart("the values span too wide a range to draw");
  const double raw_step = (high - low) / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw_step)));
  const double residual = raw_step / magnitude;
  Axis axis;
  axis.step = (residual <= 1 ? 1 : residual <= 2 ? 2 : residual <= 5 ? 5 : 10) * magnitude;
  axis.low = std::isnan(given_low) ? std::floor(low / axis.step + 1e-9) * axis.step : low;
  axis.high = std::isnan(given_high) ? std::ceil(high / axis.step - 1e-9) * axis.step : high;
  axis.decimals = std::max(0, -static_cast<int>(std::floor(std::log10(axis.step) + 1e-9)));
  return axis;
}

// The marker of series `index` centred at (x, y): a circle, square, diamond or triangle, in turn.
std::string marker(std::size_t index, double x, double y, const std::string& colour) {
  const double r = 3.5;
  const std::string style = "fill=\"" + colour + "\" stroke=\"#ffffff\" stroke-width=\"1\"";
  switch (index % 4) {
    case 0:
      return "<circle class=\"marker\" cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"" + px(r) + "\" " + style + ">";
    case 1:
      return "<rect class=\"marker\" x=\"" + px(x - r) + "\" y=\"" + px(y - r) + "\" width=\"" + px(2 * r) +
             "\" height=\"" + px(2 * r) + "\" " + style + ">";
    case 2:
      return "<polygon class=\"marker\" points=\"" + px(x) + "," + px(y - 1.3 * r) + " " + px(x + 1.3 * r) + "," +
             px(y) + " " + px(x) + "," + px(y + 1.3 * r) + " " + px(x - 1.3 * r) + "," + px(y) + "\" " + style + ">";
    default:
      return "<polygon class=\"marker\" points=\"" + px(x) + "," + px(y - 1.3 * r) + " " + px(x + 1.2 * r) + "," +
             px(y + 0.8 * r) + " " + px(x - 1.2 * r) + "," + px(y + 0.8 * r) + "\" " + style + ">";
  }
}

// The end tag that closes what marker() opened.
std::string marker_end(std::size_t index) {
  switch (index % 4) {
    case 0:
      return "</circle>";
    case 1:
      return "</rect>";
    default:
      return "</polygon>";
  }
}

}  // namespace

std::string line_chart_svg(const std::vector<Series>& series, const LineChartOptions& options) {
  if (series.empty()) invalid_chart("no series to draw");
  for (const double end : {options.y_min, options.y_max}) {
    if (std::isinf(end)) invalid_chart("y_min and y_max must be finite (or NAN: from the data), not " + shortest(end));
  }
  if (options.y_min >= options.y_max) {
    invalid_chart("y_min (" + shortest(options.y_min) + ") must be less than y_max (" + shortest(options.y_max) + ")");
  }
  double x_low = INFINITY, x_high = -INFINITY, y_low = INFINITY, y_high = -INFINITY;
  for (const Series& s : series) {
    if (s.x.size() != s.y.size()) {
      invalid_chart("series '" + s.name + "' has " + std::to_string(s.x.size()) + " x values but " +
                    std::to_string(s.y.size()) + " y values");
    }
    if (s.x.empty()) invalid_chart("series '" + s.name + "' is empty");
    for (std::size_t k = 0; k < s.x.size(); ++k) {
      for (const auto& [letter, value] : {std::pair<const char*, double>{"x", s.x[k]}, {"y", s.y[k]}}) {
        if (!std::isfinite(value)) {
          invalid_chart("series '" + s.name + "': " + letter + "[" + std::to_string(k) + "] is " + shortest(value) +
                        "; every value must be finite");
        }
      }
      x_low = std::min(x_low, s.x[k]);
      x_high = std::max(x_high, s.x[k]);
      y_low = std::min(y_low, s.y[k]);
      y_high = std::max(y_high, s.y[k]);
    }
  }
  const Axis x_axis = nice_axis(x_low, x_high, NAN, NAN);
  const Axis y_axis = nice_axis(y_low, y_high, options.y_min, options.y_max);
  const std::vector<double> x_ticks = x_axis.ticks();
  const std::vector<double> y_ticks = y_axis.ticks();
  std::vector<std::string> x_tick_labels, y_tick_labels;
  for (const double t : x_ticks) x_tick_labels.push_back(tick_label(t, x_axis.decimals));
  for (const double t : y_ticks) y_tick_labels.push_back(tick_label(t, y_axis.decimals));

  // font sizes and fixed lengths (px)
  const double tick_font = 11;
  const double legend_font = 12;
  const double axis_font = 13;
  const double title_font = 16;
  const double margin = 12;
  const double tick_length = 4;
  const double tick_gap = 3;  // between a tick and its label
  const double plot_width = 480;
  const double plot_height = 300;
  const double legend_line = 24;  // the sample of a series' line in the legend

  double y_tick_label_width = 0;
  for (const auto& label : y_tick_labels) {
    y_tick_label_width = std::max(y_tick_label_width, text_width(label, tick_font));
  }
  double legend_text_width = 0;
  for (const Series& s : series) legend_text_width = std::max(legend_text_width, text_width(s.name, legend_font));

  // vertical layout, top down: title, plot (half a tick label of room above), x tick labels, x axis title
  double y = margin;
  const double title_baseline = y + title_font;
  if (!options.title.empty()) y += 1.5 * title_font;
  const double plot_top = y + 0.5 * tick_font;
  const double plot_bottom = plot_top + plot_height;
  const double x_tick_baseline = plot_bottom + tick_length + tick_gap + tick_font;
  const double x_title_baseline = x_tick_baseline + 0.5 * axis_font + axis_font;
  const double legend_row = 1.5 * legend_font;
  double height = (options.x_label.empty() ? x_tick_baseline + 0.3 * tick_font : x_title_baseline + 0.3 * axis_font);
  height = std::max(height, plot_top + static_cast<double>(series.size()) * legend_row) + margin;

  // horizontal layout, left to right: y axis title (turned), y tick labels, plot, legend
  double x = margin;
  const double y_title_baseline = x + axis_font;  // the turned title's glyphs lie left of its baseline
  if (!options.y_label.empty()) x += 1.5 * axis_font;
  const double plot_left = x + y_tick_label_width + tick_gap + tick_length;
  const double plot_right = plot_left + plot_width;
  const double legend_left = plot_right + 0.5 * text_width(x_tick_labels.back(), tick_font) + 12;
  double width = legend_left + legend_line + 6 + legend_text_width + margin;
  width = std::max(width, text_width(options.title, title_font) + 2 * margin);
  const double x_title_width = text_width(options.x_label, axis_font);
  const double x_title_centre = std::max(0.5 * (plot_left + plot_right), margin + 0.5 * x_title_width);
  width = std::max(width, x_title_centre + 0.5 * x_title_width + margin);
  const double y_title_width = text_width(options.y_label, axis_font);
  const double y_title_centre = std::max(0.5 * (plot_top + plot_bottom), margin + 0.5 * y_title_width);
  height = std::max(height, y_title_centre + 0.5 * y_title_width + margin);

  // data → picture coordinates; a larger y is drawn higher
  const auto to_x = [&](double v) { return plot_left + (v - x_axis.low) / (x_axis.high - x_axis.low) * plot_width; };
  const auto to_y = [&](double v) { return plot_bottom - (v - y_axis.low) / (y_axis.high - y_axis.low) * plot_height; };

  std::string svg;
  const std::string w = px(width);
  const std::string h = px(height);
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h + "\" font-family=\"sans-serif\" fill=\"#222222\">\n";
  svg += "<title>" + xml_escape(options.title.empty() ? std::string("line chart") : options.title) + "</title>\n";
  const std::string plot_box = "x=\"" + px(plot_left) + "\" y=\"" + px(plot_top) + "\" width=\"" + px(plot_width) +
                               "\" height=\"" + px(plot_height) + "\"";
  // the series are clipped to the plot area grown by a marker's size, so markers on its edge are drawn whole
  const double bleed = 6;
  svg += "<defs>\n<clipPath id=\"line-chart-plot-area\">\n<rect x=\"" + px(plot_left - bleed) + "\" y=\"" +
         px(plot_top - bleed) + "\" width=\"" + px(plot_width + 2 * bleed) + "\" height=\"" +
         px(plot_height + 2 * bleed) + "\"/>\n</clipPath>\n</defs>\n";
  svg += "<rect class=\"background\" x=\"0\" y=\"0\" width=\"" + w + "\" height=\"" + h + "\" fill=\"#ffffff\"/>\n";

  append_titles(svg, {options.title, options.x_label, options.y_label, 0.5 * width, title_baseline, title_font,
                      x_title_centre, x_title_baseline, y_title_baseline, y_title_centre, axis_font});

  // grid lines at the ticks, then the plot area's frame over them
  svg += "<g class=\"grid\" stroke=\"#e5e5e5\" stroke-width=\"1\">\n";
  for (const double t : x_ticks) {
    svg += "<line x1=\"" + px(to_x(t)) + "\" y1=\"" + px(plot_top) + "\" x2=\"" + px(to_x(t)) + "\" y2=\"" +
           px(plot_bottom) + "\"/>\n";
  }
  for (const double t : y_ticks) {
    svg += "<line x1=\"" + px(plot_left) + "\" y1=\"" + px(to_y(t)) + "\" x2=\"" + px(plot_right) + "\" y2=\"" +
           px(to_y(t)) + "\"/>\n";
  }
  svg += "</g>\n";
  svg += "<rect class=\"plot-area\" " + plot_box + " fill=\"none\" stroke=\"#555555\" stroke-width=\"1\"/>\n";

  // ticks and their labels: below the plot for x, left of it for y
  svg += "<g class=\"x-ticks\" font-size=\"" + px(tick_font) + "\" text-anchor=\"middle\">\n";
  for (std::size_t k = 0; k < x_ticks.size(); ++k) {
    const std::string tick_x = px(to_x(x_ticks[k]));
    svg += "<line x1=\"" + tick_x + "\" y1=\"" + px(plot_bottom) + "\" x2=\"" + tick_x + "\" y2=\"" +
           px(plot_bottom + tick_length) + "\" stroke=\"#555555\" stroke-width=\"1\"/>\n";
    svg += "<text x=\"" + tick_x + "\" y=\"" + px(x_tick_baseline) + "\">" + x_tick_labels[k] + "</text>\n";
  }
  svg += "</g>\n";
  svg += "<g class=\"y-ticks\" font-size=\"" + px(tick_font) + "\" text-anchor=\"end\">\n";
  for (std::size_t k = 0; k < y_ticks.size(); ++k) {
    const std::string tick_y = px(to_y(y_ticks[k]));
    svg += "<line x1=\"" + px(plot_left - tick_length) + "\" y1=\"" + tick_y + "\" x2=\"" + px(plot_left) + "\" y2=\"" +
           tick_y + "\" stroke=\"#555555\" stroke-width=\"1\"/>\n";
    svg += "<text x=\"" + px(plot_left - tick_length - tick_gap) + "\" y=\"" + tick_y + "\" dy=\"0.35em\">" +
           y_tick_labels[k] + "</text>\n";
  }
  svg += "</g>\n";

  // one group per series: its line through the points in the order given, and a marker with a tooltip on each point
  for (std::size_t index = 0; index < series.size(); ++index) {
    const Series& s = series[index];
    const std::string colour = okabe_ito[index % okabe_ito.size()];
    svg += "<g class=\"series\" clip-path=\"url(#line-chart-plot-area)\">\n<polyline class=\"line\" points=\"";
    for (std::size_t k = 0; k < s.x.size(); ++k) {
      svg += (k > 0 ? " " : "") + px(to_x(s.x[k])) + "," + px(to_y(s.y[k]));
    }
    svg += "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\" stroke-linejoin=\"round\"/>\n";
    for (std::size_t k = 0; k < s.x.size(); ++k) {
      svg += marker(index, to_x(s.x[k]), to_y(s.y[k]), colour) + "<title>" + xml_escape(s.name) +
             ": x = " + shortest(s.x[k]) + ", y = " + shortest(s.y[k]) + "</title>" + marker_end(index) + "\n";
    }
    svg += "</g>\n";
  }

  // the legend: per series a short line with its marker, and its name
  svg += "<g class=\"legend\" font-size=\"" + px(legend_font) + "\">\n";
  for (std::size_t index = 0; index < series.size(); ++index) {
    const std::string colour = okabe_ito[index % okabe_ito.size()];
    const double row_y = plot_top + (static_cast<double>(index) + 0.5) * legend_row;
    svg += "<line x1=\"" + px(legend_left) + "\" y1=\"" + px(row_y) + "\" x2=\"" + px(legend_left + legend_line) +
           "\" y2=\"" + px(row_y) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
    svg += marker(index, legend_left + 0.5 * legend_line, row_y, colour) + marker_end(index) + "\n";
    svg += "<text x=\"" + px(legend_left + legend_line + 6) + "\" y=\"" + px(row_y) + "\" dy=\"0.35em\">" +
           xml_escape(series[index].name) + "</text>\n";
  }
  svg += "</g>\n";
  svg += "</svg>\n";
  return svg;
}

}  // namespace attend::plot
