// The attention heatmap the attention chapters draw (like Bahdanau et al.'s alignment figure and the keras-attention
// dates figure) as a standalone SVG 1.1 file built by plain string writing, no libraries: one cell per attention weight
// coloured with a viridis-like map (0 dark, 1 bright), source tokens across the top, output tokens down the left, a
// colour bar labelled with what it shows (α), axis titles and a tooltip per cell; and the line chart the course draws
// its curves with (time per step against sentence length, loss against epoch). Both are deterministic and
// locale-independent (same input, same bytes), so a figure in the docs changes only when the data do. Also the atomic
// file write that saves them.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "autograd/tensor.hpp"
#include "io/atomic_file.hpp"

namespace attend::plot {

struct HeatmapOptions {
  std::string title;               // drawn above the grid when not empty
  std::string x_label = "source";  // axis titles; an empty one is left out
  std::string y_label = "output";
  std::string value_label = "\u03b1";  // above the colour bar, what the colours show (α); an empty one is left out
  double cell_size = 22;               // px per cell; must be finite and > 0
};

// weights[j][i]: the attention weight of output token j on source token i (attention.hpp's α for source position i at
// decoder step j), in [0, 1]; a value outside is drawn in the colour of the nearer end, its tooltip shows the value.
// Rows: output tokens (down), columns: source tokens (across). A label shows whitespace visibly (' ' as ␣, '\t' as ⇥,
// '\n' as ↵, '\r' as ␍) and the empty token as ∅; tooltips show the token itself. Empty token lists are allowed and
// give a picture with an empty grid (weights then has no rows, or only empty rows).
// Throws std::invalid_argument naming the sizes when weights is not output_tokens.size() × source_tokens.size(), naming
// the entry and its tokens when a weight is not finite, and naming the value when options.cell_size is not a finite
// number > 0.
std::string attention_svg(const std::vector<std::string>& source_tokens, const std::vector<std::string>& output_tokens,
                          const std::vector<std::vector<double>>& weights, const HeatmapOptions& options = {});

struct ImageAttentionOptions {
  std::string title;      // drawn above the panels when not empty
  double pixel_size = 6;  // px per image pixel; must be finite and > 0
};

// Visual attention: one panel per output token, each the grey-scale image (height, width; intensities in [0, 1], 1
// drawn white on black; data::to_tensor makes it of a data::Image) with that token's attention laid over it in orange,
// its opacity proportional to the weight (each panel scaled to its own largest weight), and the token to the left of
// the panel. maps[t] holds height·width weights ≥ 0, row by row: where token t looked (captioner.hpp's attention_map
// spreads α_t over the pixels of each grid position). Throws std::invalid_argument naming the problem: maps and tokens
// of different counts, a map of the wrong size, a weight that is negative or not finite, a bad pixel_size.
std::string image_attention_svg(const Tensor<float>& image, const std::vector<std::string>& output_tokens,
                                const std::vector<std::vector<double>>& maps,
                                const ImageAttentionOptions& options = {});

// One curve of a line chart: the points (x[k], y[k]) joined in the order given, and its name in the legend.
struct Series {
  std::string name;
  std::vector<double> x, y;
};

struct LineChartOptions {
  std::string title, x_label, y_label;  // title above the plot, axis titles; an empty one is left out
  double y_min = NAN, y_max = NAN;      // the y axis's ends; NAN: from the data, widened to the nearest tick
  // An axis from the data (neither y_min nor y_max given) spans at least y_span_min: a narrower range is widened
  // about its middle, so that a change of a thousandth is not drawn as a cliff. When the data lie within
  // [y_floor, y_ceiling] (NAN: unbounded), the range the values can take (a score's 0 and 1), the axis does too:
  // the widening is moved inside, and the ends rounded out to ticks stop there.
  double y_span_min = 0;
  double y_floor = NAN, y_ceiling = NAN;
};

// An SVG 1.1 line chart: a plot area with light grid lines at "nice" ticks (steps of 1, 2 or 5 times a power of ten)
// labelled on both axes, the axis titles and the title, and per series a polyline with a marker on every point (a
// tooltip shows the point) in its own colour and marker shape from the Okabe–Ito palette (distinguishable with the
// common colour-vision deficiencies; the shapes tell the series apart in grey), and a legend with the series names to
// the right of the plot. The x axis always spans the data, widened to the nearest ticks; the y axis too (first widened
// to options.y_span_min within y_floor..y_ceiling) unless options.y_min or y_max is given, and then ends exactly there
// (what lies beyond is cut off just outside the frame), its other end from the data. Throws std::invalid_argument
// naming the problem when there are no series, when a series is empty or its x and y sizes differ (naming the series),
// when a value is not finite (naming the series and the index), when y_min/y_max or y_floor/y_ceiling are infinite or
// the first not less than the second, or when y_span_min is negative or not finite.
std::string line_chart_svg(const std::vector<Series>& series, const LineChartOptions& options = {});

// Several line charts in one picture, one below the other, each as line_chart_svg draws it alone (its own axes, titles
// and legend), under the picture's `title` (its <title>, what a viewer shows as the name). For curves on different
// scales that belong together: a training's loss and its validation score. Throws std::invalid_argument when there
// are no charts, or naming the chart (1, 2, …) and the problem as line_chart_svg does.
struct LineChart {
  std::vector<Series> series;
  LineChartOptions options;
};
std::string line_charts_svg(const std::vector<LineChart>& charts, const std::string& title);

// Writes `contents` to `path` atomically (a temporary file in the same folder, flush to disk, rename), so a failure
// leaves any previous file untouched and no partial or temporary file. Throws std::runtime_error naming the path and
// the reason (strerror). The one implementation is io/atomic_file.hpp, which checkpoints use too.
using attend::write_file_atomically;

// Text escaped for SVG/XML character data and attribute values (& < > " ' as entities; tab, newline and carriage
// return as character references). Bytes that are not valid UTF-8 and characters XML 1.0 forbids (other control
// characters, surrogates, U+FFFE, U+FFFF) become U+FFFD, so the result is always well-formed XML text.
std::string xml_escape(const std::string& text);

}  // namespace attend::plot
