// The SVG writing every picture of plot/ shares (svg_parts.hpp): UTF-8 read by utf8proc, XML escaping, text widths
// estimated from code points (no font metrics are at hand), numbers formatted with std::to_chars (locale-independent,
// exact), the viridis colour map, the titles, and the frame every picture starts with.
#include "plot/svg.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "plot/svg_parts.hpp"

namespace attend::plot {

namespace detail {

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

// colours

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

std::string svg_start(double width, double height, const std::string& title) {
  const std::string w = px(width);
  const std::string h = px(height);
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h +
         "\" font-family=\"sans-serif\" fill=\"#222222\" xml:space=\"preserve\">\n<title>" + xml_escape(title) +
         "</title>\n";
}

std::string background(double width, double height) {
  return "<rect class=\"background\" x=\"0\" y=\"0\" width=\"" + px(width) + "\" height=\"" + px(height) +
         "\" fill=\"#ffffff\"/>\n";
}

}  // namespace detail

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
    const auto [code, length] = detail::decode_utf8(text, pos);
    const auto reference = std::find_if(references.begin(), references.end(),
                                        [code = code](const auto& entry) { return entry.first == code; });
    if (reference != references.end()) {
      escaped += reference->second;
    } else {
      detail::append_utf8(escaped, detail::allowed_in_xml(code) ? code : detail::replacement_character);
    }
    pos += length;
  }
  return escaped;
}

}  // namespace attend::plot
