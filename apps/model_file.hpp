// A trained model as the `attend` program keeps it: one safetensors checkpoint holding the weights, and in its metadata
// the model configuration, the task description and both vocabularies (so the file alone is enough to predict), plus
// where training stood. Also the batched decoding every command shares.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/task.hpp"
#include "models/search.hpp"
#include "models/seq2seq.hpp"
#include "models/vocabulary.hpp"
#include "nn/optim.hpp"

namespace attend::app {

struct ModelFile {
  TaskSpec task;
  models::Vocabulary source_vocabulary;
  models::Vocabulary target_vocabulary;
  std::unique_ptr<models::Seq2seq<float>> model;
  nlohmann::json training;  // progress when saved: epoch, step, validation scores
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

// The model's outputs (tokens, end token excluded) for the examples' sources, decoded with `search`.
std::vector<std::vector<std::string>> predict_examples(ModelFile& file, const std::vector<Example>& examples,
                                                       const models::SearchOptions& search);

// "bleu: 23.4" (BLEU and n-gram precisions in percent, one decimal) or "exact_match: 0.9950" (four decimals).
std::string format_score(const std::string& name, double value);

}  // namespace attend::app
