// The tasks the `attend` program trains on, behind one interface. A task owns its flags, its data (generated or read,
// split by seed), its vocabularies, how a text becomes tokens and tokens text again, how a training batch is made and
// how outputs are scored; the program's commands talk to this interface and never ask which task it is. A task
// describes itself as JSON in the checkpoint's metadata, so `attend eval` rebuilds exactly the same held-out split.
// The tasks are one file each in apps/tasks/, registered in apps/tasks/registry.cpp (docs/reference/attend.md describes
// them).
// Adding one: docs/reference/adding-a-task.md.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "autograd/tensor.hpp"
#include "data/image.hpp"
#include "data/vocabulary.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace attend::app {

// A usage or input error: the program prints its one-line message and exits with status 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a model reads of an example: a text (token ids) or an image. A task gives one kind, a model kind reads one.
enum class InputKind { text, image };

// The settings every task has (flags --seed, --train-size, --valid-size, --test-size, --max-length, --data).
struct TaskSettings {
  std::uint64_t seed = 1;              // the data split, the initial weights and the batch order
  std::size_t train_size = 40000;      // the task's own meaning and default (TaskDefaults)
  std::size_t validation_size = 2000;  // examples (default: TaskDefaults)
  std::size_t test_size = 2000;
  std::size_t max_source_length = 64;  // longest input, in tokens, the program accepts (text tasks)
  std::string data;                    // the data file, as given (tasks that read one): a path or a data set's name
  std::string data_dir;                // --data-dir: searched first for a data set's files (data/locate.hpp)
};

// The common flags whose default or use depends on the task, as given on the command line (empty: not given).
struct GivenFlags {
  std::optional<std::size_t> train_size, validation_size, max_length;
  std::optional<std::string> data;
};

// A task's defaults of the common flags it gives a meaning of its own, and how --help states them (empty: the number).
struct TaskDefaults {
  std::size_t train_size = 40000;
  std::size_t validation_size = 2000;
  std::size_t batch_size = 64;
  std::string train_size_help;       // "every pair not held out"
  std::string validation_size_help;  // "1000 images"
};

// A held-out input with every output accepted for it (one, or every translation a file gives a sentence; for an image
// its caption as tokens).
struct Example {
  std::vector<std::string> source;  // text tasks
  std::vector<std::vector<std::string>> references;
  data::Image image{};  // image tasks
};

// A task's data once made: the held-out splits, a summary line, and the training material, which each task keeps in
// its own subclass (texts, a pool of images).
struct TaskData {
  virtual ~TaskData() = default;
  std::vector<Example> validation, test;
  std::string summary;      // one line: what was read and how it was split
  std::string fingerprint;  // of the data file read (tasks that read one)
};

// One training batch as the model reads it: token ids of the sources (text) or images, and the targets' token ids.
struct TrainingBatch {
  std::vector<std::vector<std::int64_t>> sources;
  std::vector<data::Image> images;
  std::vector<std::vector<std::int64_t>> targets;
  std::size_t tokens = 0;  // target tokens, end tokens included (for tokens/s)
  // A shard of a larger batch (shard_of): that batch's rows and tokens; 0 for a whole batch. A model's loss is a mean
  // over the target tokens; a term that is a mean over rows instead is scaled by (rows / whole_rows) / (tokens /
  // whole_tokens), so that the shards' losses weighted by their tokens add up to the whole batch's.
  std::size_t whole_rows = 0, whole_tokens = 0;
  std::size_t rows() const { return targets.size(); }
};

// Rows [begin, end) of a batch, as a shard of it (nn::BatchParallel: one a thread).
TrainingBatch shard_of(const TrainingBatch& batch, std::size_t begin, std::size_t end);

// The batches of a training run: how many an epoch has, their order, and each batch's examples.
class Batches {
 public:
  virtual ~Batches() = default;
  virtual std::size_t steps_per_epoch() const = 0;
  // The example indices of each batch of one epoch, in order; may draw from rng (the saved batch-order generator).
  virtual std::vector<std::vector<std::size_t>> epoch_order(Rng& rng) const = 0;
  // The batch of `indices` in epoch `epoch` (from 1).
  virtual TrainingBatch batch(std::size_t epoch, const std::vector<std::size_t>& indices) const = 0;
};

// How outputs score: named values in print order; the first is the one training keeps the best model by.
using Scores = std::vector<std::pair<std::string, double>>;

class Task {
 public:
  explicit Task(std::string name) : name_(std::move(name)) {}
  virtual ~Task() = default;
  const std::string& name() const { return name_; }
  // A few words for `--task`'s help: "generated", "a sentence-pair file".
  virtual std::string description() const = 0;
  TaskSettings settings;

  // ---- flags ----
  // Adds the task's own flags to `command` (train and data) and returns them: given with another task, each is
  // refused ("--FLAG is only for --task T").
  virtual std::vector<CLI::Option*> add_flags(CLI::App& command);
  // The defaults of --train-size, --valid-size and --batch for this task.
  virtual TaskDefaults defaults() const { return {}; }
  // After parsing, when this task was chosen, its settings set (given, else defaults()): the checks (InputError).
  virtual void finish(const GivenFlags& given);

  // ---- description, saved in model files ----
  // The settings and the task's own fields, and what training learnt of its data (a file's fingerprint).
  nlohmann::json to_json() const;
  // Reads what to_json wrote. Throws InputError naming a missing or malformed field.
  void from_json(const nlohmann::json& json);
  // The data file the task reads, for --data's help ("the sentence-pair file (TSV)"); empty: it reads none.
  virtual std::string data_help() const { return ""; }
  // Whether the task reads a data file (`attend eval --data` may point to it after a move).
  bool reads_file() const { return !data_help().empty(); }
  // The data file to read: --data's value (or `default_set` when not given) as data/locate.hpp's
  // data_argument_path finds it; InputError naming the file, the folders searched and the fetch command.
  std::string data_path(const std::string& default_set = "") const;
  // How a summary names the data file at `path` (data_path's answer): the path as given, or "NAME (PATH)" for a set.
  std::string data_shown(const std::string& path, const std::string& default_set = "") const;
  // How `attend eval` scores it, for the help ("BLEU"); empty: not said.
  virtual std::string scores_help() const { return ""; }

  // ---- data ----
  // The data, deterministic by settings.seed. A task trained on a file checks that the file is still that one.
  // Problems with the data are InputErrors.
  virtual std::unique_ptr<TaskData> make_data() const = 0;
  // Keeps what a model must know of the data it is trained on (the file's fingerprint), for to_json.
  virtual void remember(const TaskData& data);
  // The split "validation" or "test", or "train" (each training example with its target).
  std::vector<Example> held_out(const TaskData& data, const std::string& split) const;
  // The vocabularies of a new model of the task.
  virtual data::Vocabulary source_vocabulary(const TaskData& data) const = 0;
  virtual data::Vocabulary target_vocabulary(const TaskData& data) const = 0;
  // The training's summary line: the examples of each split and the vocabularies' sizes ("…; vocabularies a → b; ").
  virtual std::string training_summary(const TaskData& data, const data::Vocabulary& source,
                                       const data::Vocabulary& target) const = 0;

  // ---- what a model reads and writes ----
  virtual InputKind input() const = 0;
  // The languages a translation task reads and writes, as its flags name them (--source spa --target eng: "spa",
  // "eng"); empty for a task of no languages (or a sentence-pair file whose columns have no names: --source 1).
  virtual std::pair<std::string, std::string> languages() const { return {}; }
  // Image tasks: the size of the images (height, width).
  virtual std::pair<std::size_t, std::size_t> image_size() const;
  // A text as the model's tokens (InputError for text an image task cannot read) and token ids for a trained model:
  // InputError for an empty or over-long input, or a token the task cannot read.
  virtual std::vector<std::string> source_tokens(const std::string& text) const;
  virtual std::vector<std::int64_t> encode_source(const data::Vocabulary& vocabulary, const std::string& text) const;
  // Output tokens as text.
  virtual std::string join_target(const std::vector<std::string>& tokens) const = 0;
  // A text input's tokens as a text that reads as them again (source_tokens of it gives them back): how a held-out
  // example is offered to a user (attend serve's GET /v1/examples). By default the tokens are characters, joined.
  virtual std::string join_source(const std::vector<std::string>& tokens) const;
  // What a reader of an output should be told about it, given the input text it answers (empty for an image): that it
  // is no valid value of its kind, or that the input cannot mean it. Completes "OUTPUT is …"; empty: nothing.
  virtual std::string output_note(const std::string& input, const std::vector<std::string>& tokens) const;
  virtual Scores score(const std::vector<std::vector<std::string>>& outputs,
                       const std::vector<Example>& examples) const = 0;
  virtual std::unique_ptr<Batches> batches(const TaskData& data, const data::Vocabulary& source,
                                           const data::Vocabulary& target, std::size_t batch_size) const = 0;

  // ---- `attend data` ----
  // The summary's second line, and (--write) the data as files in `folder` (ends with '/'); returns what was written.
  virtual std::string vocabulary_summary(const data::Vocabulary& source, const data::Vocabulary& target) const = 0;
  virtual std::string write_data(const std::string& folder, const TaskData& data, const data::Vocabulary& source,
                                 const data::Vocabulary& target) const = 0;

 protected:
  virtual void own_to_json(nlohmann::json& json) const;
  virtual void own_from_json(const nlohmann::json& json);
  virtual std::vector<Example> training_examples(const TaskData& data) const = 0;
  std::string fingerprint_;  // of the data file the model was trained on (empty: a new model, any file)

 private:
  std::string name_;
};

// ---- the registry (apps/tasks/registry.cpp: one line a task) ----
std::vector<std::string> task_names();
// A new task of that name with its defaults; InputError "unknown task …" naming the known ones.
std::unique_ptr<Task> make_task(const std::string& name);
// A task as a model file describes it (the JSON of Task::to_json).
std::unique_ptr<Task> task_from_json(const nlohmann::json& json);

// ---- helpers the tasks share ----
// A JSON field of a task description; InputError naming it when missing or malformed.
template <class V>
V task_field(const nlohmann::json& json, const char* name) {
  try {
    return json.at(name).get<V>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(std::string("task description: missing or malformed field \"") + name + "\"");
  }
}
// The characters of a text; InputError naming the text when it is not UTF-8.
std::vector<std::string> characters_of(const std::string& text);
// An input as an error message names it: in quotes, whole up to 60 bytes; a longer one as its first 40 bytes (not
// cutting a UTF-8 character) and "…", so that a 500-character input does not fill the terminal. Control characters
// are shown escaped (shown_text).
std::string quoted_input(const std::string& text);
// A text with its control characters escaped, so that a message stays one line and whole: \n, \r, \t, and \u00XX
// for the others (a NUL would end the message; attend serve's clients can send one).
std::string shown_text(const std::string& text);
// A model's data file must still be the one it was trained on (`remembered` empty: a new model, any file).
void check_fingerprint(const std::string& path, const std::string& remembered, const std::string& fingerprint);
// The data file's path as a model file keeps it: absolute, so that `attend eval` finds it from any folder.
std::string kept_path(const std::string& path);
// A data file's error, with the flag that gives the file's place when the file cannot be opened.
std::string naming_data_flag(const std::string& message);
// A vocabulary as a file: one token per line, line k (from 0) holding the token of id k.
std::string vocabulary_file(const data::Vocabulary& vocabulary);
// Tokens joined without separator (character tokens).
std::string joined(const std::vector<std::string>& tokens);

}  // namespace attend::app
