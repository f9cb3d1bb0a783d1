// The tasks the `attend` program trains on, behind one small interface: how a task's data is made (or read), how a
// text becomes tokens and tokens text again, the vocabularies, and how outputs are scored. A task is described by a
// TaskSpec that is saved in the checkpoint's metadata, so `attend eval` rebuilds exactly the same held-out split.
//   dates  the date normalisation of docs/08-attention-decoder.md: generated, character tokens, exact match
//   pairs  translation of a sentence-pair file (docs/12-translation.md): word or character tokens, BLEU
//   digits captions of images of handwritten digit strings (docs/13-visual-attention.md): the digits file split by
//          seed into training, validation and test digits; validation and test images composed once by seed, training
//          images composed afresh for every batch (seeded by the epoch and the position, so --resume is exact);
//          exact match, digit accuracy, and how often the attention moves left to right
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "data/digits.hpp"
#include "data/image.hpp"
#include "data/pairs.hpp"
#include "data/vocabulary.hpp"

namespace attend::app {

// A usage or input error: the program prints its one-line message and exits with status 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TaskSpec {
  std::string name = "dates";
  std::uint64_t seed = 1;
  std::size_t train_size = 40000;      // pairs: 0 means every pair not held out; digits: images a training epoch
  std::size_t validation_size = 2000;  // pairs: distinct source sentences; digits: composed images
  std::size_t test_size = 2000;
  std::size_t max_source_length = 64;  // longest input, in tokens, the program accepts
  std::string data;                    // pairs: the sentence-pair file; digits: the digits file (as given)
  // pairs only
  std::string source = "1";  // the source: a language code of the file name (spa-eng.tsv: spa) or 1 or 2
  std::string target = "2";
  std::string source_tokens = "words";  // "words" or "characters"
  std::string target_tokens = "words";
  std::size_t max_words = 10;  // pairs with both sides at most this many words; 0: no limit
  std::size_t min_count = 2;   // vocabulary: tokens seen fewer times in training read as <unk>
  bool skip_bad_lines = false;
  std::string fingerprint;        // of the data file the model was trained on (set by training)
  std::size_t source_column = 0;  // 1 or 2 once resolved (set by training), so a renamed file still reads
  // digits only (fingerprint too)
  std::size_t validation_digits = 100;         // single digit images held out for the validation images
  std::size_t test_digits = 200;               // and for the test images; the rest are the training digits
  std::size_t min_digits = 3, max_digits = 6;  // digits an image
  std::size_t min_gap = 1, max_gap = 3;        // empty columns between neighbouring digits
  double noise = 0.05;                         // Gaussian pixel noise of the training images (held-out: none)

  bool is_pairs() const { return name == "pairs"; }
  bool is_digits() const { return name == "digits"; }
  bool reads_file() const { return is_pairs() || is_digits(); }
  // The composer of this task's images (digits): training images get the noise, held-out ones none.
  data::ComposerOptions composer(bool training) const;
  nlohmann::json to_json() const;
  static TaskSpec from_json(const nlohmann::json& json);  // throws InputError naming the field
};

// A held-out input with every output accepted for it (dates: one; pairs: all translations in the file; digits: the
// caption's digits as tokens).
struct Example {
  std::vector<std::string> source;  // digits: empty
  std::vector<std::vector<std::string>> references;
  data::Image image{};  // digits: the composed image
};

struct TaskData {
  std::vector<data::TokenPair> train;  // dates, pairs
  data::DigitImages train_digits;      // digits: the pool the training images are composed from
  std::vector<Example> validation, test;
  std::string fingerprint;        // pairs: of the file read
  std::size_t source_column = 0;  // pairs: the column the sources came from
  std::string summary;            // one line: what was read and how it was split
  // "validation" or "test", or "train" (each training pair as an example with its one target; digits: the images of
  // the first training epoch)
  std::vector<Example> held_out(const std::string& split, const TaskSpec& spec) const;
};

// Digits: the training images at positions first … first + count − 1 of an epoch (from 1). Image k of epoch e is
// composed from its own generator, seeded by (spec.seed, e, k): the same at every run, whatever came before.
std::vector<data::Composed> training_images(const TaskSpec& spec, const data::DigitImages& pool, std::size_t epoch,
                                            std::size_t first, std::size_t count);

// The data of a task, deterministic by spec.seed. Pairs: reads spec.data; when spec.fingerprint is set, the file must
// still be the one the model was trained on (InputError otherwise). Problems with the data are InputErrors.
TaskData make_task_data(const TaskSpec& spec);

// A text as the model's tokens (dates: its characters; pairs: text.hpp's tokenisation) and tokens as text (digits:
// joined by spaces, "3 0 7 1").
std::vector<std::string> source_tokens(const TaskSpec& spec, const std::string& text);
std::string join_target(const TaskSpec& spec, const std::vector<std::string>& tokens);
// The vocabularies of a new model of the task.
data::Vocabulary make_source_vocabulary(const TaskSpec& spec, const TaskData& data);
data::Vocabulary make_target_vocabulary(const TaskSpec& spec, const TaskData& data);

// Token ids of a source text for a trained model; throws InputError for an empty or over-long input, and (dates) for
// a character the vocabulary does not know. Pairs: unknown words read as <unk>.
std::vector<std::int64_t> encode_source(const TaskSpec& spec, const data::Vocabulary& vocabulary,
                                        const std::string& text);

// How outputs (tokens) score against held-out examples: named values in print order; the first is the one training
// keeps the best model by (dates, digits: exact_match; pairs: bleu, in percent). Digits: exact_match and
// digit_accuracy (the reference digits the output has right at their position, over all reference digits); the
// attention's left_to_right is added by model_file.hpp's evaluate, which has the weights.
using Scores = std::vector<std::pair<std::string, double>>;
Scores score_outputs(const TaskSpec& spec, const std::vector<std::vector<std::string>>& outputs,
                     const std::vector<Example>& examples);

}  // namespace attend::app
