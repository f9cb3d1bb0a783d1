// The line chart of plot/svg.hpp, the course's curves (time per step against sentence length, loss against epoch):
// "nice" axes with ticks at 1, 2 or 5 times a power of ten, light grid lines, per series a polyline with a marker and a
// tooltip on every point in its own Okabe–Ito colour and marker shape, and a legend.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "plot/svg.hpp"
#include "plot/svg_parts.hpp"

namespace attend::plot {

namespace {

using namespace detail;

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

// Whether the data's y range lies within options.y_floor..y_ceiling (an end that is NAN bounds nothing): only then do
// the bounds shape the axis, so that a value outside them never stretches it.
bool within_bounds(double data_low, double data_high, const LineChartOptions& options) {
  return !(data_low < options.y_floor) && !(data_high > options.y_ceiling);
}

// The data's y range [data_low, data_high] widened about its middle to span at least options.y_span_min, the widening
// moved (and, if it must, cut) to lie within options.y_floor..y_ceiling when the data do; never narrower than the data.
std::pair<double, double> widened(double data_low, double data_high, const LineChartOptions& options) {
  const double span = options.y_span_min;
  if (data_high - data_low >= span) return {data_low, data_high};
  const double middle = 0.5 * (data_low + data_high);
  double low = middle - 0.5 * span;
  double high = middle + 0.5 * span;
  if (!within_bounds(data_low, data_high, options)) return {low, high};
  if (low < options.y_floor) {  // false when y_floor is NAN
    high += options.y_floor - low;
    low = options.y_floor;
  }
  if (high > options.y_ceiling) {
    low -= high - options.y_ceiling;
    high = options.y_ceiling;
    if (low < options.y_floor) low = options.y_floor;  // the span is wider than the bounds: cut to them
  }
  return {std::min(low, data_low), std::max(high, data_high)};
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

// The data's range; throws std::invalid_argument naming the problem (no series, an empty one, x and y of different
// sizes, a value that is not finite, bad y_min/y_max or y_floor/y_ceiling, a y_span_min that is negative or not
// finite).
struct Range {
  double x_low = INFINITY, x_high = -INFINITY, y_low = INFINITY, y_high = -INFINITY;
};

Range checked_range(const std::vector<Series>& series, const LineChartOptions& options) {
  if (series.empty()) invalid_chart("no series to draw");
  for (const double end : {options.y_min, options.y_max}) {
    if (std::isinf(end)) invalid_chart("y_min and y_max must be finite (or NAN: from the data), not " + shortest(end));
  }
  if (options.y_min >= options.y_max) {
    invalid_chart("y_min (" + shortest(options.y_min) + ") must be less than y_max (" + shortest(options.y_max) + ")");
  }
  for (const double end : {options.y_floor, options.y_ceiling}) {
    if (std::isinf(end)) {
      invalid_chart("y_floor and y_ceiling must be finite (or NAN: unbounded), not " + shortest(end));
    }
  }
  if (options.y_floor >= options.y_ceiling) {
    invalid_chart("y_floor (" + shortest(options.y_floor) + ") must be less than y_ceiling (" +
                  shortest(options.y_ceiling) + ")");
  }
  if (!(options.y_span_min >= 0) || std::isinf(options.y_span_min)) {
    invalid_chart("y_span_min must be a finite number >= 0, not " + shortest(options.y_span_min));
  }
  Range r;
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
      r.x_low = std::min(r.x_low, s.x[k]);
      r.x_high = std::max(r.x_high, s.x[k]);
      r.y_low = std::min(r.y_low, s.y[k]);
      r.y_high = std::max(r.y_high, s.y[k]);
    }
  }
  return r;
}

// Where everything goes (px): the axes and their tick labels, fonts and fixed lengths, the plot area, the legend,
// the titles and the picture's size.
struct ChartLayout {
  Axis x_axis, y_axis;
  std::vector<double> x_ticks, y_ticks;
  std::vector<std::string> x_tick_labels, y_tick_labels;
  double tick_font = 11, legend_font = 12, axis_font = 13, title_font = 16, margin = 12;
  double tick_length = 4, tick_gap = 3;  // tick_gap: between a tick and its label
  double plot_width = 480, plot_height = 300;
  double legend_line = 24;  // the sample of a series' line in the legend
  double title_baseline = 0, plot_top = 0, plot_bottom = 0, x_tick_baseline = 0, x_title_baseline = 0, legend_row = 0;
  double y_title_baseline = 0, plot_left = 0, plot_right = 0, legend_left = 0;
  double width = 0, height = 0, x_title_centre = 0, y_title_centre = 0;

  // data → picture coordinates; a larger y is drawn higher
  double to_x(double v) const { return plot_left + (v - x_axis.low) / (x_axis.high - x_axis.low) * plot_width; }
  double to_y(double v) const { return plot_bottom - (v - y_axis.low) / (y_axis.high - y_axis.low) * plot_height; }
};

ChartLayout layout_of(const std::vector<Series>& series, const LineChartOptions& options, const Range& range) {
  ChartLayout L;
  L.x_axis = nice_axis(range.x_low, range.x_high, NAN, NAN);
  // a given end turns the widening and the bounds off: the axis then keeps what it was given, the rest from the data
  const bool from_data = std::isnan(options.y_min) && std::isnan(options.y_max);
  const auto [y_low, y_high] =
      from_data ? widened(range.y_low, range.y_high, options) : std::pair{range.y_low, range.y_high};
  L.y_axis = nice_axis(y_low, y_high, options.y_min, options.y_max);
  // rounded out to the ticks, the axis stays within the values' possible range (when the data do)
  if (from_data && within_bounds(range.y_low, range.y_high, options)) {
    if (L.y_axis.low < options.y_floor) L.y_axis.low = options.y_floor;
    if (L.y_axis.high > options.y_ceiling) L.y_axis.high = options.y_ceiling;
  }
  L.x_ticks = L.x_axis.ticks();
  L.y_ticks = L.y_axis.ticks();
  for (const double t : L.x_ticks) L.x_tick_labels.push_back(tick_label(t, L.x_axis.decimals));
  for (const double t : L.y_ticks) L.y_tick_labels.push_back(tick_label(t, L.y_axis.decimals));
  double y_tick_label_width = 0;
  for (const auto& label : L.y_tick_labels) {
    y_tick_label_width = std::max(y_tick_label_width, text_width(label, L.tick_font));
  }
  double legend_text_width = 0;
  for (const Series& s : series) legend_text_width = std::max(legend_text_width, text_width(s.name, L.legend_font));

  // vertical layout, top down: title, plot (half a tick label of room above), x tick labels, x axis title
  double y = L.margin;
  L.title_baseline = y + L.title_font;
  if (!options.title.empty()) y += 1.5 * L.title_font;
  L.plot_top = y + 0.5 * L.tick_font;
  L.plot_bottom = L.plot_top + L.plot_height;
  L.x_tick_baseline = L.plot_bottom + L.tick_length + L.tick_gap + L.tick_font;
  L.x_title_baseline = L.x_tick_baseline + 0.5 * L.axis_font + L.axis_font;
  L.legend_row = 1.5 * L.legend_font;
  L.height = (options.x_label.empty() ? L.x_tick_baseline + 0.3 * L.tick_font : L.x_title_baseline + 0.3 * L.axis_font);
  L.height = std::max(L.height, L.plot_top + static_cast<double>(series.size()) * L.legend_row) + L.margin;

  // horizontal layout, left to right: y axis title (turned), y tick labels, plot, legend
  double x = L.margin;
  L.y_title_baseline = x + L.axis_font;  // the turned title's glyphs lie left of its baseline
  if (!options.y_label.empty()) x += 1.5 * L.axis_font;
  L.plot_left = x + y_tick_label_width + L.tick_gap + L.tick_length;
  L.plot_right = L.plot_left + L.plot_width;
  L.legend_left = L.plot_right + 0.5 * text_width(L.x_tick_labels.back(), L.tick_font) + 12;
  L.width = L.legend_left + L.legend_line + 6 + legend_text_width + L.margin;
  L.width = std::max(L.width, text_width(options.title, L.title_font) + 2 * L.margin);
  const double x_title_width = text_width(options.x_label, L.axis_font);
  L.x_title_centre = std::max(0.5 * (L.plot_left + L.plot_right), L.margin + 0.5 * x_title_width);
  L.width = std::max(L.width, L.x_title_centre + 0.5 * x_title_width + L.margin);
  const double y_title_width = text_width(options.y_label, L.axis_font);
  L.y_title_centre = std::max(0.5 * (L.plot_top + L.plot_bottom), L.margin + 0.5 * y_title_width);
  L.height = std::max(L.height, L.y_title_centre + 0.5 * y_title_width + L.margin);
  return L;
}

// The series are clipped to the plot area grown by a marker's size, so markers on its edge are drawn whole. `id` names
// the clip path, unique within the picture.
std::string plot_area_clip(const ChartLayout& L, const std::string& id) {
  const double bleed = 6;
  return "<defs>\n<clipPath id=\"" + id + "\">\n<rect x=\"" + px(L.plot_left - bleed) + "\" y=\"" +
         px(L.plot_top - bleed) + "\" width=\"" + px(L.plot_width + 2 * bleed) + "\" height=\"" +
         px(L.plot_height + 2 * bleed) + "\"/>\n</clipPath>\n</defs>\n";
}

// Grid lines at the ticks, then the plot area's frame over them.
void append_grid(std::string& svg, const ChartLayout& L) {
  svg += "<g class=\"grid\" stroke=\"#e5e5e5\" stroke-width=\"1\">\n";
  for (const double t : L.x_ticks) {
    svg += "<line x1=\"" + px(L.to_x(t)) + "\" y1=\"" + px(L.plot_top) + "\" x2=\"" + px(L.to_x(t)) + "\" y2=\"" +
           px(L.plot_bottom) + "\"/>\n";
  }
  for (const double t : L.y_ticks) {
    svg += "<line x1=\"" + px(L.plot_left) + "\" y1=\"" + px(L.to_y(t)) + "\" x2=\"" + px(L.plot_right) + "\" y2=\"" +
           px(L.to_y(t)) + "\"/>\n";
  }
  svg += "</g>\n";
  svg += "<rect class=\"plot-area\" x=\"" + px(L.plot_left) + "\" y=\"" + px(L.plot_top) + "\" width=\"" +
         px(L.plot_width) + "\" height=\"" + px(L.plot_height) +
         "\" fill=\"none\" stroke=\"#555555\" stroke-width=\"1\"/>\n";
}

// Ticks and their labels: below the plot for x, left of it for y.
void append_ticks(std::string& svg, const ChartLayout& L) {
  svg += "<g class=\"x-ticks\" font-size=\"" + px(L.tick_font) + "\" text-anchor=\"middle\">\n";
  for (std::size_t k = 0; k < L.x_ticks.size(); ++k) {
    const std::string tick_x = px(L.to_x(L.x_ticks[k]));
    svg += "<line x1=\"" + tick_x + "\" y1=\"" + px(L.plot_bottom) + "\" x2=\"" + tick_x + "\" y2=\"" +
           px(L.plot_bottom + L.tick_length) + "\" stroke=\"#555555\" stroke-width=\"1\"/>\n";
    svg += "<text x=\"" + tick_x + "\" y=\"" + px(L.x_tick_baseline) + "\">" + L.x_tick_labels[k] + "</text>\n";
  }
  svg += "</g>\n";
  svg += "<g class=\"y-ticks\" font-size=\"" + px(L.tick_font) + "\" text-anchor=\"end\">\n";
  for (std::size_t k = 0; k < L.y_ticks.size(); ++k) {
    const std::string tick_y = px(L.to_y(L.y_ticks[k]));
    svg += "<line x1=\"" + px(L.plot_left - L.tick_length) + "\" y1=\"" + tick_y + "\" x2=\"" + px(L.plot_left) +
           "\" y2=\"" + tick_y + "\" stroke=\"#555555\" stroke-width=\"1\"/>\n";
    svg += "<text x=\"" + px(L.plot_left - L.tick_length - L.tick_gap) + "\" y=\"" + tick_y + "\" dy=\"0.35em\">" +
           L.y_tick_labels[k] + "</text>\n";
  }
  svg += "</g>\n";
}

// One group per series: its line through the points in the order given, and a marker with a tooltip on each point.
void append_series(std::string& svg, const ChartLayout& L, const std::vector<Series>& series,
                   const std::string& clip_id) {
  for (std::size_t index = 0; index < series.size(); ++index) {
    const Series& s = series[index];
    const std::string colour = okabe_ito[index % okabe_ito.size()];
    svg += "<g class=\"series\" clip-path=\"url(#" + clip_id + ")\">\n<polyline class=\"line\" points=\"";
    for (std::size_t k = 0; k < s.x.size(); ++k) {
      svg += (k > 0 ? " " : "") + px(L.to_x(s.x[k])) + "," + px(L.to_y(s.y[k]));
    }
    svg += "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\" stroke-linejoin=\"round\"/>\n";
    for (std::size_t k = 0; k < s.x.size(); ++k) {
      svg += marker(index, L.to_x(s.x[k]), L.to_y(s.y[k]), colour) + "<title>" + xml_escape(s.name) +
             ": x = " + shortest(s.x[k]) + ", y = " + shortest(s.y[k]) + "</title>" + marker_end(index) + "\n";
    }
    svg += "</g>\n";
  }
}

// The legend: per series a short line with its marker, and its name.
void append_legend(std::string& svg, const ChartLayout& L, const std::vector<Series>& series) {
  svg += "<g class=\"legend\" font-size=\"" + px(L.legend_font) + "\">\n";
  for (std::size_t index = 0; index < series.size(); ++index) {
    const std::string colour = okabe_ito[index % okabe_ito.size()];
    const double row_y = L.plot_top + (static_cast<double>(index) + 0.5) * L.legend_row;
    svg += "<line x1=\"" + px(L.legend_left) + "\" y1=\"" + px(row_y) + "\" x2=\"" + px(L.legend_left + L.legend_line) +
           "\" y2=\"" + px(row_y) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
    svg += marker(index, L.legend_left + 0.5 * L.legend_line, row_y, colour) + marker_end(index) + "\n";
    svg += "<text x=\"" + px(L.legend_left + L.legend_line + 6) + "\" y=\"" + px(row_y) + "\" dy=\"0.35em\">" +
           xml_escape(series[index].name) + "</text>\n";
  }
  svg += "</g>\n";
}

// One chart's drawing, in the coordinates of its own layout, its series clipped by the clip path `clip_id`.
void append_chart(std::string& svg, const ChartLayout& L, const LineChart& chart, const std::string& clip_id) {
  svg += plot_area_clip(L, clip_id);
  svg += background(L.width, L.height);
  const LineChartOptions& o = chart.options;
  append_titles(svg, {o.title, o.x_label, o.y_label, 0.5 * L.width, L.title_baseline, L.title_font, L.x_title_centre,
                      L.x_title_baseline, L.y_title_baseline, L.y_title_centre, L.axis_font});
  append_grid(svg, L);
  append_ticks(svg, L);
  append_series(svg, L, chart.series, clip_id);
  append_legend(svg, L, chart.series);
}

}  // namespace

std::string line_chart_svg(const std::vector<Series>& series, const LineChartOptions& options) {
  const ChartLayout L = layout_of(series, options, checked_range(series, options));
  std::string svg = svg_start(L.width, L.height, options.title.empty() ? std::string("line chart") : options.title);
  append_chart(svg, L, {series, options}, "line-chart-plot-area");
  svg += "</svg>\n";
  return svg;
}

std::string line_charts_svg(const std::vector<LineChart>& charts, const std::string& title) {
  if (charts.empty()) throw std::invalid_argument("line_charts_svg: no charts");
  std::vector<ChartLayout> layouts;
  double width = 0, height = 0;
  for (std::size_t k = 0; k < charts.size(); ++k) {
    try {
      layouts.push_back(
          layout_of(charts[k].series, charts[k].options, checked_range(charts[k].series, charts[k].options)));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("line_charts_svg: chart " + std::to_string(k + 1) + ": " + e.what());
    }
    width = std::max(width, layouts.back().width);
    height += layouts.back().height;
  }
  std::string svg = svg_start(width, height, title.empty() ? std::string("line charts") : title);
  svg += background(width, height);
  double top = 0;
  for (std::size_t k = 0; k < charts.size(); ++k) {
    svg += "<g class=\"chart\" transform=\"translate(0," + px(top) + ")\">\n";
    append_chart(svg, layouts[k], charts[k], "line-chart-plot-area-" + std::to_string(k + 1));
    svg += "</g>\n";
    top += layouts[k].height;
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace attend::plot
