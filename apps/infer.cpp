// `attend eval` and `attend predict` (commands.hpp).
#include <cstdio>
#include <iostream>

#include "apps/commands.hpp"
#include "apps/model_file.hpp"
#include "data/image.hpp"
#include "data/text.hpp"
#include "plot/svg.hpp"

namespace attend::app {

namespace {

// FILE.svg for one picture; FILE-1.svg, FILE-2.svg, … for several.
std::string numbered(const std::string& path, std::size_t index, std::size_t count) {
  if (count == 1) return path;
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  const std::string stem = has_extension ? path.substr(0, dot) : path;
  return stem + "-" + std::to_string(index + 1) + (has_extension ? path.substr(dot) : "");
}

// The pictures, after every output line: `svg` for one, numbered after it for several.
void write_pictures(const std::string& svg, const std::vector<std::string>& pictures) {
  for (std::size_t k = 0; k < pictures.size(); ++k) {
    const std::string path = numbered(svg, k, pictures.size());
    plot::write_file_atomically(path, pictures[k]);
    std::cerr << "attend predict: wrote " << path << "\n";
  }
}

}  // namespace

int run_eval(const EvalOptions& options) {
  set_threads(options.threads);
  ModelFile file = load_model_file(options.model_path);
  if (!options.data.empty()) {
    if (!file.task.reads_file())
      throw InputError("--data: the model's task, " + file.task.name + ", reads no data file");
    file.task.data = options.data;
  }
  const std::vector<Example> examples = make_task_data(file.task).held_out(options.split, file.task);
  std::vector<std::vector<std::string>> outputs;
  const Scores scores = evaluate(file, examples, {options.beam, 0, 1.0}, &outputs);
  if (!options.output.empty()) {
    // one output per line, tokens joined by spaces, in the order of the split (as `attend data --write` lists it)
    std::string text;
    for (const auto& tokens : outputs) text += data::join_tokens(tokens) + "\n";
    plot::write_file_atomically(options.output, text);
  }
  std::printf("split: %s\ncount: %zu\n", options.split.c_str(), examples.size());
  for (const auto& [name, value] : scores) {
    std::printf("%s\n", format_score(name, value).c_str());
  }
  return 0;
}

namespace {

// `attend predict --image …` with a digits model: every image is read (at the model's size) before anything is
// decoded or written; one caption a line; the SVG shows each output token's attention over the image.
int predict_images(ModelFile& file, const PredictOptions& options) {
  models::Captioner<float>& model = *file.captioner;
  const models::CaptionerConfig& config = model.config();
  std::vector<data::Image> images;
  for (const std::string& path : options.images) {
    try {
      images.push_back(data::read_pgm(path, config.image_height, config.image_width));
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("--image ") + e.what());
    }
  }
  std::vector<const data::Image*> pointers;
  for (const data::Image& image : images) pointers.push_back(&image);
  const std::vector<models::Hypothesis> outputs = decode_images(model, pointers, {options.beam, 0, 1.0});
  std::vector<std::string> pictures;
  for (std::size_t k = 0; k < images.size(); ++k) {
    const std::vector<std::string> tokens = file.target_vocabulary.decode(outputs[k].tokens);
    std::cout << join_target(file.task, tokens) << "\n";
    if (options.svg.empty()) continue;
    // one panel per emitted token, the end token included
    std::vector<std::string> rows;
    for (std::int64_t id : outputs[k].tokens) rows.push_back(file.target_vocabulary.token(id));
    if (outputs[k].finished) rows.push_back("<eos>");
    std::vector<std::vector<double>> maps;
    for (std::size_t t = 0; t < rows.size(); ++t)
      maps.push_back(models::attention_map(config, outputs[k].attention[t]));
    plot::ImageAttentionOptions picture;
    picture.title = options.images[k] + " → " + join_target(file.task, tokens);
    pictures.push_back(plot::image_attention_svg(data::to_tensor(images[k]), rows, maps, picture));
  }
  std::cout << std::flush;
  write_pictures(options.svg, pictures);
  return 0;
}

}  // namespace

int run_predict(const PredictOptions& options) {
  set_threads(options.threads);
  ModelFile file = load_model_file(options.model_path);
  if (file.captioner) {
    if (options.images.empty()) {
      throw InputError("the model (task digits) captions images: give them with --image FILE.pgm, not as text");
    }
    return predict_images(file, options);
  }
  if (!options.images.empty()) {
    throw InputError("--image: the model (task " + file.task.name + ") reads text, not images");
  }
  std::vector<std::string> inputs = options.inputs;
  if (inputs.empty()) {
    for (std::string line; std::getline(std::cin, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      inputs.push_back(line);
    }
    if (inputs.empty()) throw InputError("no input: give texts on the command line or as lines on standard input");
  }
  if (!options.svg.empty() && file.model->config().decoder == models::DecoderKind::vanilla) {
    throw InputError("--svg: the vanilla decoder has no attention weights to draw");
  }
  // every input is checked before anything is decoded or written
  std::vector<std::vector<std::int64_t>> sources;
  for (const std::string& text : inputs) sources.push_back(encode_source(file.task, file.source_vocabulary, text));
  const auto outputs = decode_all(*file.model, sources, {options.beam, 0, 1.0});
  std::vector<std::string> pictures;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<std::string> tokens = file.target_vocabulary.decode(outputs[k].tokens);
    std::cout << join_target(file.task, tokens) << "\n";
    if (!options.svg.empty()) {
      // one row per emitted token, the end token included
      std::vector<std::string> rows;
      for (std::int64_t id : outputs[k].tokens) rows.push_back(file.target_vocabulary.token(id));
      if (outputs[k].finished) rows.push_back("<eos>");
      std::vector<std::vector<double>> weights;
      for (const auto& row : outputs[k].attention) weights.emplace_back(row.begin(), row.end());
      plot::HeatmapOptions heatmap;
      heatmap.title = "\"" + inputs[k] + "\" → " + join_target(file.task, tokens);
      pictures.push_back(plot::attention_svg(source_tokens(file.task, inputs[k]), rows, weights, heatmap));
    }
  }
  std::cout << std::flush;
  write_pictures(options.svg, pictures);
  return 0;
}

}  // namespace attend::app
