// A trained model as the `attend` program keeps it: one safetensors checkpoint holding the weights, and in its metadata
// the model kind's format ("attend-" and the kind's name) and configuration, the task's description and both
// vocabularies (so the file alone is enough to predict), plus where training stood. Also the scoring every command
// shares.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/model.hpp"
#include "apps/task.hpp"
#include "data/vocabulary.hpp"
#include "nn/optim.hpp"
#include "precision/precision.hpp"

namespace attend::app {

struct ModelFile {
  std::unique_ptr<Task> task;
  data::Vocabulary source_vocabulary;  // empty for image tasks
  data::Vocabulary target_vocabulary;
  std::unique_ptr<Model> model;
  nlohmann::json training;  // progress when saved: epoch, step, validation scores, the training state
  // What the model decodes with (use_decoding_precision; nullptr: float32), put in models::SearchOptions::products.
  std::unique_ptr<Products> products;
};

// A new model file for a task whose data was just made: the task (remembering its data), its vocabularies and a
// model of `kind` with its initial weights.
ModelFile new_model_file(const Task& task, const ModelKind& kind, const TaskData& data);

// Writes the model (and the optimizer's state, if given) atomically: a failure leaves a previous file intact.
void save_model_file(const std::string& path, const ModelFile& file, const nn::Optimizer<float>* optimizer = nullptr);
// Reads a model written by save_model_file. Throws InputError naming the file and the problem (missing, not a
// checkpoint, not an attend model, weights that do not fit the saved configuration).
ModelFile load_model_file(const std::string& path);

// The products each model of `files` decodes with, in `precision` (precision/precision.hpp), put in its
// ModelFile::products — for int8, its weight matrices quantized per output channel — and, when they keep anything
// (int8's copies), a line on standard error saying what. Throws InputError ("--precision int8: this CPU has no VNNI …")
// when this process cannot run `precision`, and for a weight the precision cannot take.
void use_decoding_precision(const std::string& precision, const std::vector<ModelFile*>& files, const char* command);

// Throws InputError unless `path` can be written: not empty, not a directory, in an existing writable folder.
void check_output_path(const std::string& path, const char* flag);
// Whether anything (a file, a folder, a link) is at `path`.
bool file_exists(const std::string& path);
// Throws InputError when one of `paths` (the files that `flag value` writes) exists and `force` is not given: no
// command silently replaces a user's file ("--svg a.svg: a-2.svg exists; give --force to replace it, or another
// --svg").
void check_not_replacing(const char* flag, const std::string& value, const std::vector<std::string>& paths, bool force);

// The examples as the model reads them (text: their sources' token ids; images: the images).
ModelInputs model_inputs(const ModelFile& file, const std::vector<Example>& examples);

// The examples decoded with `search` and scored: the task's scores and the model's (Model::add_scores).
// `outputs`, when given, receives the outputs (tokens, end token excluded).
Scores evaluate(ModelFile& file, const std::vector<Example>& examples, const models::SearchOptions& search,
                std::vector<std::vector<std::string>>* outputs = nullptr);

// Whether the score `name` is in percent (BLEU and its n-gram precisions: 0 to 100) rather than a fraction (0 to 1).
bool is_percent_score(const std::string& name);

// "bleu: 23.4" (a score in percent, one decimal) or "exact_match: 0.9950" (a fraction, four decimals).
std::string format_score(const std::string& name, double value);

}  // namespace attend::app
