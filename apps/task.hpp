// The tasks the `attend` program trains on, behind one small interface: how a task's data is made (or read), how a
// text becomes tokens and tokens text again, the vocabularies, and how outputs are scored. A task is described by a
// TaskSpec that is saved in the checkpoint's metadata, so `attend eval` rebuilds exactly the same held-out split.
//   dates  the date normalisation of docs/08-attention-decoder.md: generated, character tokens, exact match
//   pairs  translation of a sentence-pair file (docs/12-translation.md): word or character tokens, BLEU
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/pairs.hpp"
#include "models/vocabulary.hpp"

namespace attend::app {

// A usage or input error: the program prints its one-line message and exits with status 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TaskSpec {
  std::string name = "dates";
  std::uint64_t seed = 1;
  std::size_t train_size = 40000;      // pairs: 0 means every pair not held out
  std::size_t validation_size = 2000;  // pairs: distinct source sentences
  std::size_t test_size = 2000;
  std::size_t max_source_length = 64;  // longest input, in tokens, the program accepts
  // pairs only
  std::string data;                    // the sentence-pair file, as given
  std::string source = "1";            // the source: a language code of the file name (spa-eng.tsv: spa) or 1 or 2
  std::string target = "2";
  std::string source_tokens = "words"; // "words" or "characters"
  std::string target_tokens = "words";
  std::size_t max_words = 10;          // pairs with both sides at most this many words; 0: no limit
  std::size_t min_count = 2;           // vocabulary: tokens seen fewer times in training read as <unk>
  bool skip_bad_lines = false;
  std::string fingerprint;             // of the data file the model was trained on (set by training)
  std::size_t source_column = 0;       // 1 or 2 once resolved (set by training), so a renamed file still reads

  bool is_pairs() const { return name == "pairs"; }
  nlohmann::json to_json() const;
  static TaskSpec from_json(const nlohmann::json& json);  // throws InputError naming the field
};

// A held-out input with every output accepted for it (dates: one; pairs: all translations in the file).
struct Example {
  std::vector<std::string> source;
  std::vector<std::vector<std::string>> references;
};

struct TaskData {
  std::vector<models::TokenPair> train;
  std::vector<Example> validation, test;
  std::string fingerprint;  // pairs: of the file read
  std::size_t source_column = 0;  // pairs: the column the sources came from
  std::string summary;      // one line: what was read and how it was split
  // "validation" or "test", or "train" (each training pair as an example with its one target)
  std::vector<Example> held_out(const std::string& split) const;
};

// The data of a task, deterministic by spec.seed. Pairs: reads spec.data; when spec.fingerprint is set, the file must
// still be the one the model was trained on (InputError otherwise). Problems with the data are InputErrors.
TaskData make_task_data(const TaskSpec& spec);

// A text as the model's tokens (dates: its characters; pairs: text.hpp's tokenisation) and tokens as text.
std::vector<std::string> source_tokens(const TaskSpec& spec, const std::string& text);
std::string join_target(const TaskSpec& spec, const std::vector<std::string>& tokens);
// The vocabularies of a new model of the task.
models::Vocabulary make_source_vocabulary(const TaskSpec& spec, const TaskData& data);
models::Vocabulary make_target_vocabulary(const TaskSpec& spec, const TaskData& data);

// Token ids of a source text for a trained model; throws InputError for an empty or over-long input, and (dates) for
// a character the vocabulary does not know. Pairs: unknown words read as <unk>.
std::vector<std::int64_t> encode_source(const TaskSpec& spec, const models::Vocabulary& vocabulary,
                                        const std::string& text);

// How outputs (tokens) score against held-out examples: named values in print order; the first is the one training
// keeps the best model by (dates: exact_match; pairs: bleu, in percent).
using Scores = std::vector<std::pair<std::string, double>>;
Scores score_outputs(const TaskSpec& spec, const std::vector<std::vector<std::string>>& outputs,
                     const std::vector<Example>& examples);

}  // namespace attend::app
