// The attention heatmap the attention chapters draw (like Bahdanau et al.'s alignment figure and the keras-attention
// dates figure) as a standalone SVG 1.1 file built by plain string writing, no libraries: one cell per attention weight
// coloured with a viridis-like map (0 dark, 1 bright), source tokens across the top, output tokens down the left, a
// colour bar, axis titles and a tooltip per cell. The output is deterministic and locale-independent (same input, same
// bytes), so a figure in the docs changes only when the weights do. Also the atomic file write that saves it.
#pragma once

#include <string>
#include <vector>

namespace attend::models {

struct HeatmapOptions {
  std::string title;               // drawn above the grid when not empty
  std::string x_label = "source";  // axis titles; an empty one is left out
  std::string y_label = "output";
  double cell_size = 22;  // px per cell; must be finite and > 0
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

// Writes `contents` to `path` atomically (a temporary file in the same folder, flush to disk, rename), so a failure
// leaves any previous file untouched and no partial or temporary file. Throws std::runtime_error naming the path and
// the reason (strerror).
void write_file_atomically(const std::string& path, const std::string& contents);

// Text escaped for SVG/XML character data and attribute values (& < > " ' as entities; tab, newline and carriage
// return as character references). Bytes that are not valid UTF-8 and characters XML 1.0 forbids (other control
// characters, surrogates, U+FFFE, U+FFFF) become U+FFFD, so the result is always well-formed XML text.
std::string xml_escape(const std::string& text);

}  // namespace attend::models
