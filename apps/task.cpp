// The tasks of the `attend` program (task.hpp).
#include "apps/task.hpp"

#include <stdexcept>

#include "models/dates.hpp"

namespace attend::app {

namespace {

void check_known(const std::string& name) {
  if (name != "dates") throw InputError("unknown task \"" + name + "\" (expected dates)");
}

template <class V>
V field(const nlohmann::json& json, const char* name) {
  try {
    return json.at(name).get<V>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(std::string("task description: missing or malformed field \"") + name + "\"");
  }
}

std::vector<Pair> pairs_of(const std::vector<models::dates::Example>& examples) {
  std::vector<Pair> pairs;
  pairs.reserve(examples.size());
  for (const auto& e : examples) pairs.push_back({e.source, e.target});
  return pairs;
}

}  // namespace

nlohmann::json TaskSpec::to_json() const {
  return {{"name", name},
          {"seed", seed},
          {"train_size", train_size},
          {"validation_size", validation_size},
          {"test_size", test_size},
          {"max_source_length", max_source_length}};
}

TaskSpec TaskSpec::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw InputError("task description: not a JSON object");
  TaskSpec spec;
  spec.name = field<std::string>(json, "name");
  check_known(spec.name);
  spec.seed = field<std::uint64_t>(json, "seed");
  spec.train_size = field<std::size_t>(json, "train_size");
  spec.validation_size = field<std::size_t>(json, "validation_size");
  spec.test_size = field<std::size_t>(json, "test_size");
  spec.max_source_length = field<std::size_t>(json, "max_source_length");
  return spec;
}

const std::vector<Pair>& TaskData::split(const std::string& name) const {
  if (name == "train") return train;
  if (name == "validation") return validation;
  if (name == "test") return test;
  throw InputError("unknown split \"" + name + "\" (expected train, validation or test)");
}

TaskData make_task_data(const TaskSpec& spec) {
  check_known(spec.name);
  models::dates::Splits splits;
  try {
    splits = models::dates::make_splits(spec.seed, spec.train_size, spec.validation_size, spec.test_size);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  return TaskData{pairs_of(splits.train), pairs_of(splits.validation), pairs_of(splits.test)};
}

std::vector<std::string> source_tokens(const TaskSpec&, const std::string& text) {
  try {
    return models::utf8_characters(text);
  } catch (const std::invalid_argument& e) {
    throw InputError("input \"" + text + "\": " + e.what());
  }
}

std::vector<std::string> target_tokens(const TaskSpec& spec, const std::string& text) {
  return source_tokens(spec, text);
}

std::string join_target(const TaskSpec&, const std::vector<std::string>& tokens) {
  std::string text;
  for (const auto& t : tokens) text += t;
  return text;
}

models::Vocabulary make_source_vocabulary(const TaskSpec&, const TaskData&) {
  // every character a date can be written with, so that any generated date (not only the training ones) is readable
  models::Vocabulary vocabulary;
  for (const auto& c : models::dates::source_alphabet()) vocabulary.add(c);
  return vocabulary;
}

models::Vocabulary make_target_vocabulary(const TaskSpec&, const TaskData&) {
  models::Vocabulary vocabulary;
  for (const auto& c : models::dates::target_alphabet()) vocabulary.add(c);
  return vocabulary;
}

std::vector<std::int64_t> encode_source(const TaskSpec& spec, const models::Vocabulary& vocabulary,
                                        const std::string& text) {
  const std::vector<std::string> tokens = source_tokens(spec, text);
  if (tokens.empty()) throw InputError("empty input: nothing to read");
  if (tokens.size() > spec.max_source_length) {
    throw InputError("input \"" + text + "\" is " + std::to_string(tokens.size()) + " characters long; the model reads at most " +
                     std::to_string(spec.max_source_length));
  }
  std::vector<std::int64_t> ids;
  for (const auto& token : tokens) {
    if (!vocabulary.contains(token)) {
      throw InputError("input \"" + text + "\": the character \"" + token + "\" was never seen in training");
    }
    ids.push_back(vocabulary.id(token));
  }
  return ids;
}

}  // namespace attend::app
