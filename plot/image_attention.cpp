// Visual attention over an image (plot/svg.hpp's image_attention_svg): per output token a panel with the grey-scale
// image and where that token looked laid over it in orange, its label to the left.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "plot/svg.hpp"
#include "plot/svg_parts.hpp"

namespace attend::plot {

namespace {

using namespace detail;

// Throws std::invalid_argument naming the problem: a bad pixel size, maps and tokens of different counts, an image
// that is not (height, width), a map of the wrong size, a weight that is negative or not finite.
void check_maps(const Tensor<float>& image, const std::vector<std::string>& output_tokens,
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
}

// Where a panel goes (px): its left and top edge, the size of an image pixel, the label's font and gap.
struct Panel {
  double left, top, pixel, label_font, gap;
};

// One output token's panel: its label, the image (a black panel, then every pixel with ink as a grey square), and the
// attention as orange squares, opacity 0.8 · weight / the panel's largest weight (below 2% of it: none).
void append_panel(std::string& svg, const Tensor<float>& image, const std::string& label,
                  const std::vector<double>& map, const Panel& p) {
  const std::size_t H = image.shape()[0], W = image.shape()[1];
  const double pixel = p.pixel, panel_left = p.left, y0 = p.top, gap = p.gap, label_font = p.label_font;
  const double panel_width = static_cast<double>(W) * pixel, panel_height = static_cast<double>(H) * pixel;
  svg += "<g class=\"panel\">\n";
  svg += "<text x=\"" + px(panel_left - gap) + "\" y=\"" + px(y0 + 0.5 * panel_height) +
         "\" dy=\"0.35em\" font-size=\"" + px(label_font) + "\" text-anchor=\"end\">" + xml_escape(label) + "</text>\n";
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
  const double largest = *std::max_element(map.begin(), map.end());
  svg += "<g class=\"attention\" fill=\"#ff6a00\">\n";
  for (std::size_t k = 0; largest > 0 && k < H * W; ++k) {
    const double share = map[k] / largest;
    if (share < 0.02) continue;
    svg += "<rect x=\"" + px(panel_left + static_cast<double>(k % W) * pixel) + "\" y=\"" +
           px(y0 + static_cast<double>(k / W) * pixel) + "\" width=\"" + px(pixel) + "\" height=\"" + px(pixel) +
           "\" fill-opacity=\"" + fixed(0.8 * share, 3) + "\"/>\n";
  }
  svg += "</g>\n</g>\n";
}

}  // namespace

std::string image_attention_svg(const Tensor<float>& image, const std::vector<std::string>& output_tokens,
                                const std::vector<std::vector<double>>& maps, const ImageAttentionOptions& options) {
  check_maps(image, output_tokens, maps, options);
  const std::size_t H = image.shape()[0], W = image.shape()[1];
  const double pixel = options.pixel_size;
  const double label_font = 14, title_font = 16, margin = 12, gap = 8;
  double label_width = 0;
  for (const std::string& token : output_tokens)
    label_width = std::max(label_width, text_width(visible_token(token), label_font));
  const double panel_left = margin + label_width + gap;
  const double panel_width = static_cast<double>(W) * pixel, panel_height = static_cast<double>(H) * pixel;
  const double top = options.title.empty() ? margin : margin + title_font + gap;
  const double width = panel_left + panel_width + margin;
  const double height = top + static_cast<double>(output_tokens.size()) * (panel_height + gap) - gap + margin;
  std::string svg = svg_start(width, height, options.title.empty() ? std::string("visual attention") : options.title);
  svg += background(width, height);
  if (!options.title.empty()) {
    svg += "<text class=\"title\" x=\"" + px(0.5 * width) + "\" y=\"" + px(margin + title_font * 0.8) +
           "\" font-size=\"" + px(title_font) + "\" text-anchor=\"middle\">" + xml_escape(options.title) + "</text>\n";
  }
  for (std::size_t t = 0; t < output_tokens.size(); ++t) {
    append_panel(svg, image, visible_token(output_tokens[t]), maps[t],
                 {panel_left, top + static_cast<double>(t) * (panel_height + gap), pixel, label_font, gap});
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace attend::plot
