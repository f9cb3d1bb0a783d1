// `attend eval` and `attend predict` (commands.hpp).
#include <chrono>
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

// The pictures, after every output line: `svg` for one input, numbered by input after it for several (pictures[k]
// belongs to input numbers[k] of `count`).
void write_pictures(const std::string& svg, const std::vector<std::string>& pictures,
                    const std::vector<std::size_t>& numbers, std::size_t count) {
  for (std::size_t k = 0; k < pictures.size(); ++k) {
    const std::string path = numbered(svg, numbers[k], count);
    plot::write_file_atomically(path, pictures[k]);
    std::cerr << "attend predict: wrote " << path << "\n";
  }
}

// Where input k (from 0) came from, for a message about it: "line 3" (standard input), "argument 3" (the command
// line) or "image 3" (--image).
std::string input_place(const PredictOptions& options, std::size_t k) {
  const char* kind = !options.images.empty() ? "image" : options.inputs.empty() ? "line" : "argument";
  return kind + (" " + std::to_string(k + 1));
}

// A score as printed by --scores: four decimals.
std::string score_text(double score) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", score);
  return text;
}

// What `attend predict` was given, read and checked before anything is decoded or written: the inputs as the model
// reads them, each one's label in the picture's title, and what the picture shows of it.
struct Inputs {
  ModelInputs model;
  std::vector<std::string> labels;
  std::vector<PictureInput> pictures;
  std::vector<data::Image> images;  // image models: the images read
};

// Texts from the command line or standard input (one a line).
std::vector<std::string> read_texts(const ModelFile& file, const PredictOptions& options) {
  if (!options.images.empty()) {
    throw InputError("--image: the model (task " + file.task->name() + ") reads text, not images");
  }
  std::vector<std::string> texts = options.inputs;
  if (texts.empty()) {
    for (std::string line; std::getline(std::cin, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      texts.push_back(line);
    }
    if (texts.empty()) throw InputError("no input: give texts on the command line or as lines on standard input");
  }
  return texts;
}

// The texts encoded by the task, and the numbers (from 0) of those it could read. One text the task cannot read (a
// character never seen in training, too long, …) does not stop the others: its error is written, one line naming
// its place ("line 3", from standard input; "argument 3", from the command line), and the others are decoded. A single
// text's error is thrown as it is.
std::vector<std::size_t> encode_texts(const ModelFile& file, const PredictOptions& options,
                                      const std::vector<std::string>& texts, Inputs& inputs) {
  std::vector<std::size_t> read;
  for (std::size_t k = 0; k < texts.size(); ++k) {
    try {
      inputs.model.sources.push_back(file.task->encode_source(file.source_vocabulary, texts[k]));
      inputs.pictures.push_back(
          {options.svg.empty() ? std::vector<std::string>{} : file.task->source_tokens(texts[k])});
    } catch (const InputError& e) {
      if (texts.size() == 1) throw;
      std::cerr << "attend: error: " << input_place(options, k) << ": " << e.what() << "\n";
      continue;
    }
    inputs.labels.push_back("\"" + texts[k] + "\"");
    read.push_back(k);
  }
  return read;
}

// PGM images (--image), each at the model's size, and the numbers (from 0) of those that could be read. As with texts,
// one image that cannot be read (no such file, not a PGM file, another size, …) gets its own error line naming its
// place ("image 2") and the others are decoded; a single image's error is thrown as it is.
std::vector<std::size_t> read_images(const ModelFile& file, const PredictOptions& options, Inputs& inputs) {
  if (options.images.empty()) {
    throw InputError("the model (task " + file.task->name() +
                     ") captions images: give them with --image FILE.pgm, not as text");
  }
  const auto [height, width] = file.task->image_size();
  std::vector<std::size_t> read;
  for (std::size_t k = 0; k < options.images.size(); ++k) {
    try {
      inputs.images.push_back(data::read_pgm(options.images[k], height, width));
    } catch (const std::invalid_argument& e) {
      if (options.images.size() == 1) throw InputError(std::string("--image ") + e.what());
      std::cerr << "attend: error: " << input_place(options, k) << ": --image " << e.what() << "\n";
      continue;
    }
    inputs.labels.push_back(options.images[k]);
    read.push_back(k);
  }
  // pointers into inputs.images once it no longer grows
  for (const data::Image& image : inputs.images) {
    inputs.model.images.push_back(&image);
    inputs.pictures.push_back({{}, &image});
  }
  return read;
}

}  // namespace

int run_eval(const EvalOptions& options) {
  set_threads(options.threads);
  ModelFile file = load_model_file(options.model_path);
  use_decoding_precision(options.precision, {&file}, "eval");
  if (!options.data.empty()) {
    if (!file.task->reads_file())
      throw InputError("--data: the model's task, " + file.task->name() + ", reads no data file");
    file.task->settings.data = options.data;
  }
  file.task->settings.data_dir = options.data_dir;
  const std::vector<Example> examples = file.task->held_out(*file.task->make_data(), options.split);
  std::vector<std::vector<std::string>> outputs;
  const auto start = std::chrono::steady_clock::now();
  models::SearchOptions search{options.beam, 0, 1.0};
  search.scores = false;  // eval scores the outputs, not their probabilities
  search.threads = options.threads;
  search.products = file.products.get();
  const Scores scores = evaluate(file, examples, search, &outputs);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  // decoding and scoring (scoring is a small part): the figure bench/compare_decode reads
  std::printf("time: %.2f s, %.0f sentences/s\n", seconds, static_cast<double>(examples.size()) / seconds);
  if (const std::string report = file.products ? file.products->report() : ""; !report.empty()) {
    std::cerr << "attend eval: products in " << options.precision << ": " << report << "\n";
  }
  return 0;
}

// Every input is read and checked before anything is decoded or written; one output a line (an empty line for an input
// that could not be read, whose error names it: status 2 then, after the others' outputs); the SVG shows each output
// token's attention over the input.
int run_predict(const PredictOptions& options) {
  set_threads(options.threads);
  ModelFile file = load_model_file(options.model_path);
  use_decoding_precision(options.precision, {&file}, "predict");
  Inputs inputs;
  const bool images = file.task->input() == InputKind::image;
  const std::vector<std::string> texts = images ? std::vector<std::string>{} : read_texts(file, options);
  if (!options.svg.empty()) {
    file.model->check_picture();
    file.model->choose_attention(options.layer, options.head);
  }
  // the inputs' numbers (from 0) that are decoded
  const std::vector<std::size_t> read =
      images ? read_images(file, options, inputs) : encode_texts(file, options, texts, inputs);
  if (read.empty()) return 2;  // every input's error written
  const std::size_t count = images ? options.images.size() : texts.size();
  if (!options.svg.empty()) {
    std::vector<std::string> paths;
    for (std::size_t k : read) paths.push_back(numbered(options.svg, k, count));
    check_not_replacing("--svg", options.svg, paths, options.force);
  }
  models::SearchOptions search{options.beam, 0, 1.0};
  search.threads = options.threads;
  search.products = file.products.get();
  const std::vector<models::Hypothesis> outputs = file.model->decode(inputs.model, search);
  std::vector<std::string> pictures;
  for (std::size_t k = 0, shown = 0; k < outputs.size(); ++k) {
    for (; shown < read[k]; ++shown) std::cout << "\n";  // the inputs that could not be read
    ++shown;
    const std::vector<std::string> tokens = file.target_vocabulary.decode(outputs[k].tokens);
    const std::string text = file.task->join_target(tokens);
    std::cout << text;
    if (options.scores) std::cout << "\t" << score_text(outputs[k].score);
    std::cout << "\n";
    const std::string note = file.task->output_note(images ? "" : texts[read[k]], tokens);
    if (!note.empty())
      std::cerr << "attend predict: " << input_place(options, read[k]) << ": " << text << " is " << note << "\n";
    if (options.svg.empty()) continue;
    // one row per emitted token, the end token included
    std::vector<std::string> rows;
    for (std::int64_t id : outputs[k].tokens) rows.push_back(file.target_vocabulary.token(id));
    if (outputs[k].finished) rows.push_back("<eos>");
    const std::string title = inputs.labels[k] + " → " + text;
    pictures.push_back(file.model->picture(inputs.pictures[k], rows, outputs[k], title));
  }
  for (std::size_t shown = read.back() + 1; shown < count; ++shown) std::cout << "\n";
  std::cout << std::flush;
  write_pictures(options.svg, pictures, options.svg.empty() ? std::vector<std::size_t>{} : read, count);
  return read.size() == count ? 0 : 2;
}

}  // namespace attend::app
