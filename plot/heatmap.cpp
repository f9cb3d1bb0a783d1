// The attention heatmap of plot/svg.hpp (like Bahdanau et al.'s alignment figure and the keras-attention dates figure):
// one cell per attention weight coloured with viridis (0 dark, 1 bright), source tokens across the top, output tokens
// down the left, a colour bar whose gradient stops are the map's own anchors (so the bar shows exactly the colours the
// cells use) under the name of what it shows, axis titles and a tooltip per cell.
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

// Where everything goes (px): fonts, the token labels as drawn, the grid, the colour bar, the titles, the picture.
struct HeatmapLayout {
  double cell = 0;
  double label_font = 0, tick_font = 11, axis_font = 13, title_font = 16, margin = 12;
  double label_gap = 5;  // between a token label and the grid
  std::vector<std::string> source_labels, output_labels;
  bool upright = true;  // source labels upright (characters) or turned by -90° (words)
  double title_baseline = 0, x_title_baseline = 0, grid_top = 0, grid_height = 0;
  double y_title_baseline = 0, grid_left = 0, grid_width = 0;
  double bar_left = 0, bar_width = 12, bar_height = 0, tick_length = 4, tick_label_left = 0;
  double value_label_raise = 0;  // how much higher than label_gap above the bar its label stands
  double width = 0, height = 0, x_title_centre = 0, y_title_centre = 0;
};

HeatmapLayout layout_of(const std::vector<std::string>& source_tokens, const std::vector<std::string>& output_tokens,
                        const HeatmapOptions& options) {
  HeatmapLayout L;
  const double cell = L.cell = options.cell_size;
  // token labels scale with the cells, the rest is fixed
  L.label_font = std::clamp(0.55 * cell, 8.0, 14.0);
  // token labels as drawn, and the widest of each kind
  double source_label_width = 0;
  double output_label_width = 0;
  for (const auto& token : source_tokens) {
    L.source_labels.push_back(visible_token(token));
    source_label_width = std::max(source_label_width, text_width(L.source_labels.back(), L.label_font));
  }
  for (const auto& token : output_tokens) {
    L.output_labels.push_back(visible_token(token));
    output_label_width = std::max(output_label_width, text_width(L.output_labels.back(), L.label_font));
  }
  // source labels stand upright when all fit across their columns (characters), else they are turned by -90° (words)
  L.upright = source_label_width <= cell - 2;

  // vertical layout, top down: title, x axis title, source labels, grid
  double y = L.margin;
  L.title_baseline = y + L.title_font;
  if (!options.title.empty()) y += 1.5 * L.title_font;
  L.x_title_baseline = y + L.axis_font;
  if (!options.x_label.empty()) y += 1.5 * L.axis_font;
  y += (L.upright ? L.label_font : source_label_width) + L.label_gap;
  // room above the grid for the colour bar's label, which stands on the bar's top; one wide enough to reach over the
  // tick labels' column (the default α is not) stands half a tick label higher, clear of "1.0"
  const double bar_to_tick_labels = L.bar_width + L.tick_length + 3;
  if (text_width(options.value_label, L.axis_font) > bar_to_tick_labels) L.value_label_raise = 0.5 * L.tick_font;
  if (!options.value_label.empty()) {
    y = std::max(y, L.margin + L.axis_font + L.label_gap + L.value_label_raise);
  }
  L.grid_top = y;
  L.grid_height = static_cast<double>(output_tokens.size()) * cell;

  // horizontal layout, left to right: y axis title (turned), output labels, grid, colour bar with its tick labels
  double x = L.margin;
  L.y_title_baseline = x + L.axis_font;  // the turned title's glyphs lie left of its baseline
  if (!options.y_label.empty()) x += 1.5 * L.axis_font;
  x += output_label_width + L.label_gap;
  L.grid_left = x;
  L.grid_width = static_cast<double>(source_tokens.size()) * cell;
  L.bar_left = L.grid_left + L.grid_width + 14;
  L.bar_height = std::max(L.grid_height, 100.0);  // tall enough for three tick labels even for one row
  L.tick_label_left = L.bar_left + L.bar_width + L.tick_length + 3;

  // picture size: what the grid and the colour bar need, widened/heightened for long titles
  L.width = L.tick_label_left + text_width("0.5", L.tick_font) + L.margin;
  L.width = std::max(L.width, L.bar_left + text_width(options.value_label, L.axis_font) + L.margin);
  L.height = std::max(L.grid_top + L.grid_height, L.grid_top + L.bar_height + 0.5 * L.tick_font) + L.margin;
  L.width = std::max(L.width, text_width(options.title, L.title_font) + 2 * L.margin);
  // axis titles centred on the grid, but moved inwards (and the picture grown) when longer than the picture allows
  const double x_title_width = text_width(options.x_label, L.axis_font);
  L.x_title_centre = std::max(L.grid_left + 0.5 * L.grid_width, L.margin + 0.5 * x_title_width);
  L.width = std::max(L.width, L.x_title_centre + 0.5 * x_title_width + L.margin);
  const double y_title_width = text_width(options.y_label, L.axis_font);
  L.y_title_centre = std::max(L.grid_top + 0.5 * L.grid_height, L.margin + 0.5 * y_title_width);
  L.height = std::max(L.height, L.y_title_centre + 0.5 * y_title_width + L.margin);
  return L;
}

// The colour bar's gradient: the map's anchors as stops, value 0 at the bottom.
std::string colour_bar_gradient() {
  std::string svg = "<defs>\n<linearGradient id=\"attention-colour-bar\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
  for (std::size_t k = 0; k < viridis.size(); ++k) {
    const double offset = static_cast<double>(k) / static_cast<double>(viridis.size() - 1);
    svg += "<stop offset=\"" + fixed(offset, 3) + "\" stop-color=\"" + hex_colour(viridis[k]) + "\"/>\n";
  }
  return svg + "</linearGradient>\n</defs>\n";
}

// Source labels along the top (dy = 0.35em centres a glyph's x-height on the column's middle line), output labels
// down the left, right-aligned against the grid.
void append_labels(std::string& svg, const HeatmapLayout& L) {
  svg += "<g class=\"source-labels\" font-size=\"" + px(L.label_font) + "\" text-anchor=\"" +
         (L.upright ? "middle" : "start") + "\">\n";
  for (std::size_t i = 0; i < L.source_labels.size(); ++i) {
    const std::string centre = px(L.grid_left + (static_cast<double>(i) + 0.5) * L.cell);
    const std::string bottom = px(L.grid_top - L.label_gap);
    svg += L.upright ? "<text x=\"" + centre + "\" y=\"" + bottom + "\">"
                     : "<text transform=\"translate(" + centre + "," + bottom + ") rotate(-90)\" dy=\"0.35em\">";
    svg += xml_escape(L.source_labels[i]) + "</text>\n";
  }
  svg += "</g>\n";
  svg += "<g class=\"output-labels\" font-size=\"" + px(L.label_font) + "\" text-anchor=\"end\">\n";
  for (std::size_t j = 0; j < L.output_labels.size(); ++j) {
    svg += "<text x=\"" + px(L.grid_left - L.label_gap) + "\" y=\"" +
           px(L.grid_top + (static_cast<double>(j) + 0.5) * L.cell) + "\" dy=\"0.35em\">" +
           xml_escape(L.output_labels[j]) + "</text>\n";
  }
  svg += "</g>\n";
}

// The cells: row j = output token j, column i = source token i; white borders thinner than 1/16 of a small cell.
void append_cells(std::string& svg, const HeatmapLayout& L, const std::vector<std::string>& source_tokens,
                  const std::vector<std::string>& output_tokens, const std::vector<std::vector<double>>& weights) {
  const double cell = L.cell;
  svg += "<g class=\"cells\" stroke=\"#ffffff\" stroke-width=\"" + px(std::min(1.0, cell / 16)) + "\">\n";
  for (std::size_t j = 0; j < output_tokens.size(); ++j) {
    for (std::size_t i = 0; i < source_tokens.size(); ++i) {
      svg += "<rect class=\"cell\" x=\"" + px(L.grid_left + static_cast<double>(i) * cell) + "\" y=\"" +
             px(L.grid_top + static_cast<double>(j) * cell) + "\" width=\"" + px(cell) + "\" height=\"" + px(cell) +
             "\" fill=\"" + colour_of(weights[j][i]) + "\"><title>output '" + xml_escape(output_tokens[j]) +
             "' \u2190 source '" + xml_escape(source_tokens[i]) + "': " + fixed(weights[j][i], 3) + "</title></rect>\n";
    }
  }
  svg += "</g>\n";
}

// The colour bar, its ticks at 0, 0.5 and 1 and their labels, and above it what it shows (`label`, in italics: α).
void append_colour_bar(std::string& svg, const HeatmapLayout& L, const std::string& label) {
  svg += "<g class=\"colour-bar\" font-size=\"" + px(L.tick_font) + "\">\n";
  if (!label.empty()) {
    svg += "<text class=\"value-label\" x=\"" + px(L.bar_left) + "\" y=\"" +
           px(L.grid_top - L.label_gap - L.value_label_raise) + "\" font-size=\"" + px(L.axis_font) +
           "\" font-style=\"italic\">" + xml_escape(label) + "</text>\n";
  }
  svg += "<rect x=\"" + px(L.bar_left) + "\" y=\"" + px(L.grid_top) + "\" width=\"" + px(L.bar_width) + "\" height=\"" +
         px(L.bar_height) + "\" fill=\"url(#attention-colour-bar)\" stroke=\"#555555\" stroke-width=\"0.5\"/>\n";
  for (const double value : {0.0, 0.5, 1.0}) {
    const std::string tick_y = px(L.grid_top + (1 - value) * L.bar_height);
    svg += "<line x1=\"" + px(L.bar_left + L.bar_width) + "\" y1=\"" + tick_y + "\" x2=\"" +
           px(L.bar_left + L.bar_width + L.tick_length) + "\" y2=\"" + tick_y +
           "\" stroke=\"#555555\" stroke-width=\"1\"/>\n";
    svg +=
        "<text x=\"" + px(L.tick_label_left) + "\" y=\"" + tick_y + "\" dy=\"0.35em\">" + fixed(value, 1) + "</text>\n";
  }
  svg += "</g>\n";
}

}  // namespace

std::string attention_svg(const std::vector<std::string>& source_tokens, const std::vector<std::string>& output_tokens,
                          const std::vector<std::vector<double>>& weights, const HeatmapOptions& options) {
  check_weights(source_tokens, output_tokens, weights);
  const double cell = options.cell_size;
  if (!std::isfinite(cell) || cell <= 0) {
    invalid("cell_size must be a finite number > 0, got " +
            (std::isfinite(cell) ? fixed(cell, 3) : std::to_string(cell)));
  }
  const HeatmapLayout L = layout_of(source_tokens, output_tokens, options);
  std::string svg;
  svg.reserve(512 + output_tokens.size() * source_tokens.size() * 160);
  svg += svg_start(L.width, L.height, options.title.empty() ? std::string("attention weights") : options.title);
  svg += colour_bar_gradient();
  svg += background(L.width, L.height);
  append_titles(svg, {options.title, options.x_label, options.y_label, 0.5 * L.width, L.title_baseline, L.title_font,
                      L.x_title_centre, L.x_title_baseline, L.y_title_baseline, L.y_title_centre, L.axis_font});
  append_labels(svg, L);
  append_cells(svg, L, source_tokens, output_tokens, weights);
  append_colour_bar(svg, L, options.value_label);
  svg += "</svg>\n";
  return svg;
}

}  // namespace attend::plot
