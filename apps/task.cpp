// The Task interface's shared parts (task.hpp): the common settings as JSON, held-out splits, the text defaults.
#include "apps/task.hpp"

#include <filesystem>

#include "data/data_sets.hpp"
#include "data/locate.hpp"
#include "models/batch.hpp"

namespace attend::app {

// The program is where vocabularies (data/) meet models (models/): both number the four special tokens the same way.
static_assert(data::Vocabulary::pad_id == models::pad_id && data::Vocabulary::sos_id == models::sos_id &&
                  data::Vocabulary::eos_id == models::eos_id && data::Vocabulary::unk_id == models::unk_id,
              "data::Vocabulary's special ids must be the ids the models reserve (models/batch.hpp)");

std::vector<CLI::Option*> Task::add_flags(CLI::App&) { return {}; }

void Task::finish(const GivenFlags&) {}

nlohmann::json Task::to_json() const {
  nlohmann::json json = {{"name", name_},
                         {"seed", settings.seed},
                         {"train_size", settings.train_size},
                         {"validation_size", settings.validation_size},
                         {"test_size", settings.test_size},
                         {"max_source_length", settings.max_source_length}};
  own_to_json(json);
  return json;
}

void Task::from_json(const nlohmann::json& json) {
  settings.seed = task_field<std::uint64_t>(json, "seed");
  settings.train_size = task_field<std::size_t>(json, "train_size");
  settings.validation_size = task_field<std::size_t>(json, "validation_size");
  settings.test_size = task_field<std::size_t>(json, "test_size");
  settings.max_source_length = task_field<std::size_t>(json, "max_source_length");
  own_from_json(json);
}

void Task::own_to_json(nlohmann::json&) const {}

void Task::own_from_json(const nlohmann::json&) {}

void Task::remember(const TaskData& data) { fingerprint_ = data.fingerprint; }

std::vector<Example> Task::held_out(const TaskData& data, const std::string& split) const {
  if (split == "validation") return data.validation;
  if (split == "test") return data.test;
  if (split == "train") return training_examples(data);
  throw InputError("unknown split \"" + split + "\" (expected train, validation or test)");
}

TrainingBatch shard_of(const TrainingBatch& batch, std::size_t begin, std::size_t end) {
  if (begin >= end || end > batch.rows()) {
    throw std::logic_error("shard_of: rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                           ") of a batch of " + std::to_string(batch.rows()));
  }
  const auto slice = [&](const auto& rows) {
    using Rows = std::decay_t<decltype(rows)>;
    if (rows.empty()) return Rows();
    return Rows(rows.begin() + static_cast<std::ptrdiff_t>(begin), rows.begin() + static_cast<std::ptrdiff_t>(end));
  };
  TrainingBatch shard;
  shard.sources = slice(batch.sources);
  shard.images = slice(batch.images);
  shard.targets = slice(batch.targets);
  for (const auto& target : shard.targets) shard.tokens += target.size() + 1;  // the end token
  // a shard of a shard is still a part of the first batch
  shard.whole_rows = batch.whole_rows ? batch.whole_rows : batch.rows();
  shard.whole_tokens = batch.whole_rows ? batch.whole_tokens : batch.tokens;
  return shard;
}

std::pair<std::size_t, std::size_t> Task::image_size() const {
  throw std::logic_error("task " + name_ + " has no images");
}

std::string Task::join_source(const std::vector<std::string>& tokens) const { return joined(tokens); }

std::vector<std::string> Task::source_tokens(const std::string&) const {
  throw std::logic_error("task " + name_ + " reads no text");
}

std::vector<std::int64_t> Task::encode_source(const data::Vocabulary&, const std::string&) const {
  throw std::logic_error("task " + name_ + " reads no text");
}

std::unique_ptr<Task> task_from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw InputError("task description: not a JSON object");
  std::unique_ptr<Task> task = make_task(task_field<std::string>(json, "name"));
  task->from_json(json);
  return task;
}

std::vector<std::string> characters_of(const std::string& text) {
  try {
    return data::utf8_characters(text);
  } catch (const std::invalid_argument& e) {
    throw InputError("input " + quoted_input(text) + ": " + e.what());
  }
}

std::string quoted_input(const std::string& text) {
  constexpr std::size_t whole = 60, shown = 40;
  if (text.size() <= whole) return "\"" + shown_text(text) + "\"";
  std::size_t end = shown;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // not inside a character
  return "\"" + shown_text(text.substr(0, end)) + "…\"";
}

std::string shown_text(const std::string& text) {
  std::string shown;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      shown += "\\n";
    } else if (c == '\r') {
      shown += "\\r";
    } else if (c == '\t') {
      shown += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      const char* hex = "0123456789abcdef";
      shown += std::string("\\u00") + hex[byte >> 4] + hex[byte & 15];
    } else {
      shown += c;
    }
  }
  return shown;
}

void check_fingerprint(const std::string& path, const std::string& remembered, const std::string& fingerprint) {
  if (!remembered.empty() && remembered != fingerprint) {
    throw InputError(path + ": not the file the model was trained on (its fingerprint is " + fingerprint +
                     ", the model's " + remembered + "); give the original with --data");
  }
}

std::string Task::output_note(const std::string&, const std::vector<std::string>&) const { return ""; }

std::string Task::data_path(const std::string& default_set) const {
  const std::string value = settings.data.empty() ? default_set : settings.data;
  try {
    return data::data_argument_path(value, settings.data_dir);
  } catch (const data::DataNotFound& e) {
    throw InputError("--data " + value + ": " + e.what());
  }
}

std::string Task::data_shown(const std::string& path, const std::string& default_set) const {
  const std::string value = settings.data.empty() ? default_set : settings.data;
  return value == path ? path : value + " (" + path + ")";
}

std::string kept_path(const std::string& path) {
  // a data set's name is kept as it is: found again by name where the model is used (unless a file of that name was
  // read instead, as data_argument_path does; a folder of that name is no data file)
  if (path.empty() || (data::find_data_set(path) != nullptr && !std::filesystem::is_regular_file(path))) return path;
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

std::string naming_data_flag(const std::string& message) {
  if (message.find(": cannot open") == std::string::npos) return message;
  return message + "; give the data file's place with --data FILE";
}

std::string vocabulary_file(const data::Vocabulary& vocabulary) {
  std::string text;
  for (const auto& token : vocabulary.tokens()) text += token + "\n";
  return text;
}

std::string joined(const std::vector<std::string>& tokens) {
  std::string text;
  for (const auto& t : tokens) text += t;
  return text;
}

}  // namespace attend::app
