// A trained model as the `attend` program keeps it: one safetensors checkpoint holding the weights, and in its metadata
// the model configuration, the task description and both vocabularies (so the file alone is enough to predict), plus
// where training stood. A text task's model is a Seq2seq (format "attend-seq2seq"); the digits task's a Captioner
// (format "attend-captioner", no source vocabulary). Also the batched decoding and scoring every command shares.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/task.hpp"
#include "data/vocabulary.hpp"
#include "models/captioner.hpp"
#include "models/search.hpp"
#include "models/seq2seq.hpp"
#include "nn/optim.hpp"

namespace attend::app {

struct ModelFile {
  TaskSpec task;
  data::Vocabulary source_vocabulary;
  data::Vocabulary target_vocabulary;
  std::unique_ptr<models::Seq2seq<float>> model;        // text tasks (dates, pairs)
  std::unique_ptr<models::Captioner<float>> captioner;  // the digits task
  nlohmann::json training;                              // progress when saved: epoch, step, validation scores

  // The model, whichever it is.
  nn::Module<float>& module() const;
};

// Writes the model (and the optimizer's state, if given) atomically: a failure leaves a previous file intact.
void save_model_file(const std::string& path, const ModelFile& file, const nn::Optimizer<float>* optimizer = nullptr);
// Reads a model written by save_model_file. Throws InputError naming the file and the problem (missing, not a
// checkpoint, not an attend model, weights that do not fit the saved configuration).
ModelFile load_model_file(const std::string& path);

// Throws InputError unless `path` can be written: not empty, not a directory, in an existing writable folder.
void check_output_path(const std::string& path, const char* flag);

// Decodes sources (token ids) in batches of batch_size with the given search; the model is put in evaluation mode.
std::vector<models::Hypothesis> decode_all(models::Seq2seq<float>& model,
                                           const std::vector<std::vector<std::int64_t>>& sources,
                                           const models::SearchOptions& search, std::size_t batch_size = 256);

// Decodes images (each the model's size) in batches of batch_size; the model is put in evaluation mode.
std::vector<models::Hypothesis> decode_images(models::Captioner<float>& model,
                                              const std::vector<const data::Image*>& images,
                                              const models::SearchOptions& search, std::size_t batch_size = 256);

// The examples decoded with `search` (text: their sources; digits: their images) and scored: score_outputs' scores,
// and for a captioner also left_to_right, the fraction of examples whose attention moves from left to right
// (captioner.hpp's moves_left_to_right). `outputs`, when given, receives the outputs (tokens,
// end token excluded).
Scores evaluate(ModelFile& file, const std::vector<Example>& examples, const models::SearchOptions& search,
                std::vector<std::vector<std::string>>* outputs = nullptr);

// "bleu: 23.4" (BLEU and n-gram precisions in percent, one decimal) or "exact_match: 0.9950" (four decimals).
std::string format_score(const std::string& name, double value);

}  // namespace attend::app
