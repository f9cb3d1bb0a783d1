// Saving, loading and batched decoding of the `attend` program's models (model_file.hpp).
#include "apps/model_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "nn/checkpoint.hpp"

namespace attend::app {

namespace {

constexpr const char* format_name = "attend-seq2seq";
constexpr const char* captioner_format_name = "attend-captioner";
constexpr int format_version = 1;

// Every weight of the model is a tensor of the file, so a configuration that asks for more weights than the file holds
// is damaged: refused here, before building the model would allocate (and initialise) what it asks for, which a few
// edited digits can make gigabytes, or a million layers. `products` are the element counts of some of the model's
// weights (a × b each); `tensors` a lower bound on the number of tensors it has.
void check_sizes_fit(const std::string& path, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& products,
                     std::uint64_t tensors) {
  const std::vector<nn::CheckpointTensor> listed = nn::list_checkpoint(path);
  std::uint64_t bytes = 0;  // of all tensors together: more than their elements
  for (const auto& t : listed) bytes += t.end - t.begin;
  bool fits = tensors <= listed.size();
  for (const auto& [a, b] : products) {
    std::uint64_t product = 0;
    fits = fits && !__builtin_mul_overflow(a, b, &product) && product <= bytes;
  }
  if (!fits)
    throw InputError("model file " + path + ": the model configuration asks for more weights than the file holds");
}

// Seq2seq: the embeddings (V × E), one recurrent weight (H × H), the attention's (A × H), a tensor or more per layer.
void check_sizes_fit(const std::string& path, const models::Seq2seqConfig& c) {
  check_sizes_fit(path,
                  {{c.source_vocab_size, c.embedding_dim},
                   {c.target_vocab_size, c.embedding_dim},
                   {c.hidden_size, c.hidden_size},
                   {c.attention_size, c.hidden_size}},
                  c.num_layers);
}

// Captioner: the image (H × W: its patches or pooled grid), the projection of a patch or feature (A × ph·pw,
// A × 2C), the hidden layer (K × ph·pw, A × K), the recurrent weight (H × H), the attention's (A' × H), the
// embedding (V × E); the position embeddings (L × A) once the grid's size is known to be sane.
void check_sizes_fit(const std::string& path, const models::CaptionerConfig& c) {
  const std::uint64_t patch = c.patch_height * c.patch_width;
  check_sizes_fit(path,
                  {{c.image_height, c.image_width},
                   {c.annotation_size, patch},
                   {c.patch_hidden, patch},
                   {c.annotation_size, c.patch_hidden},
                   {c.annotation_size, 2 * c.channels},
                   {c.hidden_size, c.hidden_size},
                   {c.attention_size, c.hidden_size},
                   {c.vocab_size, c.embedding_dim}},
                  1);
  check_sizes_fit(path, {{c.grid_rows() * c.grid_columns(), c.annotation_size}}, 1);
}

}  // namespace

nn::Module<float>& ModelFile::module() const {
  if (captioner) return *captioner;
  if (!model) throw std::logic_error("ModelFile: no model");
  return *model;
}

void save_model_file(const std::string& path, const ModelFile& file, const nn::Optimizer<float>* optimizer) {
  nlohmann::json metadata = {
      {"format", file.captioner ? captioner_format_name : format_name},
      {"version", format_version},
      {"task", file.task.to_json()},
      {"model", file.captioner ? file.captioner->config().to_json() : file.model->config().to_json()},
      {"source_vocabulary", file.source_vocabulary.to_json()},
      {"target_vocabulary", file.target_vocabulary.to_json()},
      {"training", file.training}};
  nn::NamedTensors<float> extra;
  if (optimizer) extra = optimizer->state();
  nn::save_checkpoint(path, file.module().parameters(), metadata, extra);
}

ModelFile load_model_file(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) throw InputError("model file " + path + ": no such file");
  if (S_ISDIR(info.st_mode)) throw InputError("model file " + path + ": is a directory");
  ModelFile file;
  try {
    const nlohmann::json metadata = nn::read_checkpoint_metadata(path);
    const std::string format = metadata.is_object() ? metadata.value("format", "") : "";
    if (format != format_name && format != captioner_format_name) {
      throw InputError("model file " + path + ": a checkpoint, but not a model saved by `attend train`");
    }
    if (metadata.value("version", 0) != format_version) {
      throw InputError("model file " + path + ": format version " + metadata.at("version").dump() +
                       ", this program reads version " + std::to_string(format_version));
    }
    file.task = TaskSpec::from_json(metadata.at("task"));
    file.source_vocabulary = data::Vocabulary::from_json(metadata.at("source_vocabulary"));
    file.target_vocabulary = data::Vocabulary::from_json(metadata.at("target_vocabulary"));
    file.training = metadata.value("training", nlohmann::json::object());
    if ((format == captioner_format_name) != file.task.is_digits()) {
      throw InputError("model file " + path + ": a " + format + " model cannot be of the task " + file.task.name);
    }
    if (format == captioner_format_name) {
      const auto config = models::CaptionerConfig::from_json(metadata.at("model"));
      if (config.vocab_size != file.target_vocabulary.size()) {
        throw InputError("model file " + path + ": the vocabulary size does not match the model configuration");
      }
      check_sizes_fit(path, config);
      file.captioner = std::make_unique<models::Captioner<float>>(config);
    } else {
      const auto config = models::Seq2seqConfig::from_json(metadata.at("model"));
      if (config.source_vocab_size != file.source_vocabulary.size() ||
          config.target_vocab_size != file.target_vocabulary.size()) {
        throw InputError("model file " + path + ": the vocabulary sizes do not match the model configuration");
      }
      check_sizes_fit(path, config);
      file.model = std::make_unique<models::Seq2seq<float>>(config);
    }
    // the optimizer's state is only needed to go on training
    nn::load_checkpoint(path, file.module().parameters(), {}, {"optimizer."});
  } catch (const std::exception& e) {
    const std::string what = e.what();
    // checkpoint errors already name the file
    throw InputError(what.find(path) == std::string::npos ? "model file " + path + ": " + what : what);
  }
  return file;
}

void check_output_path(const std::string& path, const char* flag) {
  if (path.empty()) throw InputError(std::string(flag) + ": an empty path");
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    throw InputError(std::string(flag) + " " + path + ": is a directory");
  }
  const std::size_t slash = path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw InputError(std::string(flag) + " " + path + ": the folder " + folder + " does not exist");
  }
  // access(W_OK) is not enough: it says yes to root everywhere, even where no file can be made (/proc, /sys, a full
  // quota); so make (and remove) a file there, as the save itself will
  std::string probe = folder + "/.attend-write-test-XXXXXX";
  const int fd = mkstemp(probe.data());
  if (fd < 0) throw InputError(std::string(flag) + " " + path + ": the folder " + folder + " is not writable");
  close(fd);
  unlink(probe.c_str());
}

std::vector<models::Hypothesis> decode_all(models::Seq2seq<float>& model,
                                           const std::vector<std::vector<std::int64_t>>& sources,
                                           const models::SearchOptions& search, std::size_t batch_size) {
  model.eval();
  // sources of similar length go together, so a batch carries little padding; results return in input order
  std::vector<std::size_t> order(sources.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sources[a].size() < sources[b].size(); });
  std::vector<models::Hypothesis> result(sources.size());
  for (std::size_t start = 0; start < order.size(); start += batch_size) {
    const std::size_t end = std::min(order.size(), start + batch_size);
    std::vector<std::vector<std::int64_t>> chunk;
    for (std::size_t k = start; k < end; ++k) chunk.push_back(sources[order[k]]);
    const models::Batch batch = models::make_batch(chunk);
    std::vector<models::Hypothesis> decoded = models::decode(model, batch.source, batch.source_lengths, search);
    for (std::size_t k = start; k < end; ++k) result[order[k]] = std::move(decoded[k - start]);
  }
  return result;
}

std::vector<models::Hypothesis> decode_images(models::Captioner<float>& model,
                                              const std::vector<const data::Image*>& images,
                                              const models::SearchOptions& search, std::size_t batch_size) {
  model.eval();
  std::vector<models::Hypothesis> result;
  for (std::size_t start = 0; start < images.size(); start += batch_size) {
    const std::size_t end = std::min(images.size(), start + batch_size);
    const std::vector<const data::Image*> chunk(images.begin() + static_cast<std::ptrdiff_t>(start),
                                                images.begin() + static_cast<std::ptrdiff_t>(end));
    const models::ImageBatch<float> batch = models::make_image_batch<float>(chunk, {}, model.config());
    for (models::Hypothesis& h : models::decode(model, batch.images, search)) result.push_back(std::move(h));
  }
  return result;
}

Scores evaluate(ModelFile& file, const std::vector<Example>& examples, const models::SearchOptions& search,
                std::vector<std::vector<std::string>>* outputs) {
  std::vector<models::Hypothesis> hypotheses;
  if (file.captioner) {
    std::vector<const data::Image*> images;
    for (const Example& e : examples) images.push_back(&e.image);
    hypotheses = decode_images(*file.captioner, images, search);
  } else {
    std::vector<std::vector<std::int64_t>> sources;
    for (const Example& e : examples) sources.push_back(file.source_vocabulary.encode(e.source));
    hypotheses = decode_all(*file.model, sources, search);
  }
  std::vector<std::vector<std::string>> tokens;
  for (const auto& h : hypotheses) tokens.push_back(file.target_vocabulary.decode(h.tokens));
  Scores scores = score_outputs(file.task, tokens, examples);
  if (file.captioner) {
    double moving = 0;
    for (const auto& h : hypotheses) moving += models::moves_left_to_right(file.captioner->config(), h) ? 1 : 0;
    scores.emplace_back("left_to_right", hypotheses.empty() ? 0.0 : moving / static_cast<double>(hypotheses.size()));
  }
  if (outputs) *outputs = std::move(tokens);
  return scores;
}

std::string format_score(const std::string& name, double value) {
  const bool percent = name == "bleu" || name.rfind("precision_", 0) == 0;
  char text[64];
  std::snprintf(text, sizeof text, percent ? "%.1f" : "%.4f", value);
  return name + ": " + text;
}

}  // namespace attend::app
