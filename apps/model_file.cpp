// Saving, loading and scoring the `attend` program's models (model_file.hpp).
#include "apps/model_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "nn/checkpoint.hpp"

namespace attend::app {

namespace {

constexpr int format_version = 1;

}  // namespace

void use_decoding_precision(const std::string& precision, const std::vector<ModelFile*>& files, const char* command) {
  if (const std::string why = find_precision(precision)->unavailable(); !why.empty()) {
    throw InputError("--precision " + precision + ": " + why);
  }
  for (ModelFile* file : files) {
    try {
      file->products = make_products(precision, matrices_of(file->model->module().parameters()));
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("--precision ") + precision + ": " + e.what());
    }
    if (const std::string kept = file->products->kept(); !kept.empty()) {
      std::cerr << "attend " << command << ": products in " << precision << ": " << kept << "\n";
    }
  }
}

ModelFile new_model_file(const Task& task, const ModelKind& kind, const TaskData& data) {
  ModelFile file;
  file.task = task_from_json(task.to_json());
  file.task->remember(data);
  file.source_vocabulary = task.source_vocabulary(data);
  file.target_vocabulary = task.target_vocabulary(data);
  try {
    file.model = kind.build(*file.task, file.source_vocabulary, file.target_vocabulary);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  return file;
}

void save_model_file(const std::string& path, const ModelFile& file, const nn::Optimizer<float>* optimizer) {
  nlohmann::json metadata = {{"format", file.model->format()},
                             {"version", format_version},
                             {"task", file.task->to_json()},
                             {"model", file.model->config_json()},
                             {"source_vocabulary", file.source_vocabulary.to_json()},
                             {"target_vocabulary", file.target_vocabulary.to_json()},
                             {"training", file.training}};
  nn::NamedTensors<float> extra;
  if (optimizer) extra = optimizer->state();
  nn::save_checkpoint(path, file.model->module().parameters(), metadata, extra);
}

ModelFile load_model_file(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) throw InputError("model file " + path + ": no such file");
  if (S_ISDIR(info.st_mode)) throw InputError("model file " + path + ": is a directory");
  ModelFile file;
  try {
    const nlohmann::json metadata = nn::read_checkpoint_metadata(path);
    const std::string format = metadata.is_object() ? metadata.value("format", "") : "";
    const std::unique_ptr<ModelKind> kind = model_kind_of_format(format);
    if (!kind) throw InputError("model file " + path + ": a checkpoint, but not a model saved by `attend train`");
    if (metadata.value("version", 0) != format_version) {
      throw InputError("model file " + path + ": format version " + metadata.at("version").dump() +
                       ", this program reads version " + std::to_string(format_version));
    }
    file.task = task_from_json(metadata.at("task"));
    file.source_vocabulary = data::Vocabulary::from_json(metadata.at("source_vocabulary"));
    file.target_vocabulary = data::Vocabulary::from_json(metadata.at("target_vocabulary"));
    file.training = metadata.value("training", nlohmann::json::object());
    if (kind->input() != file.task->input()) {
      throw InputError("model file " + path + ": a " + format + " model cannot be of the task " + file.task->name());
    }
    file.model = kind->load(path, metadata.at("model"), file.source_vocabulary, file.target_vocabulary);
    // the optimizer's state is only needed to go on training
    nn::load_checkpoint(path, file.model->module().parameters(), {}, {"optimizer."});
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

bool file_exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0;
}

void check_not_replacing(const char* flag, const std::string& value, const std::vector<std::string>& paths,
                         bool force) {
  if (force) return;
  for (const std::string& path : paths) {
    if (file_exists(path)) {
      throw InputError(std::string(flag) + " " + value + ": " + (path == value ? "" : path + " ") +
                       "exists; give --force to replace it, or another " + flag);
    }
  }
}

ModelInputs model_inputs(const ModelFile& file, const std::vector<Example>& examples) {
  ModelInputs inputs;
  for (const Example& e : examples) {
    if (file.task->input() == InputKind::image) {
      inputs.images.push_back(&e.image);
    } else {
      inputs.sources.push_back(file.source_vocabulary.encode(e.source));
    }
  }
  return inputs;
}

Scores evaluate(ModelFile& file, const std::vector<Example>& examples, const models::SearchOptions& search,
                std::vector<std::vector<std::string>>* outputs) {
  const std::vector<models::Hypothesis> hypotheses = file.model->decode(model_inputs(file, examples), search);
  std::vector<std::vector<std::string>> tokens;
  for (const auto& h : hypotheses) tokens.push_back(file.target_vocabulary.decode(h.tokens));
  if (tokens.size() != examples.size()) throw std::logic_error("evaluate: outputs and examples differ in number");
  Scores scores = file.task->score(tokens, examples);
  file.model->add_scores(hypotheses, scores);
  if (outputs) *outputs = std::move(tokens);
  return scores;
}

bool is_percent_score(const std::string& name) { return name == "bleu" || name.rfind("precision_", 0) == 0; }

std::string format_score(const std::string& name, double value) {
  char text[64];
  std::snprintf(text, sizeof text, is_percent_score(name) ? "%.1f" : "%.4f", value);
  return name + ": " + text;
}

}  // namespace attend::app
