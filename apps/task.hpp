// The tasks the `attend` program trains on, behind one small interface: how a task's data is made (or read), how a
// text becomes tokens and tokens text again, and the vocabularies. A task is described by a TaskSpec that is saved in
// the checkpoint's metadata, so `attend eval` rebuilds exactly the same held-out split. Today: "dates" (the date
// normalisation of docs/08-attention-decoder.md); translation pairs follow in docs/12-translation.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/vocabulary.hpp"

namespace attend::app {

// A usage or input error: the program prints its one-line message and exits with status 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TaskSpec {
  std::string name = "dates";
  std::uint64_t seed = 1;
  std::size_t train_size = 40000;
  std::size_t validation_size = 2000;
  std::size_t test_size = 2000;
  std::size_t max_source_length = 64;  // longest input, in tokens, the program accepts

  nlohmann::json to_json() const;
  static TaskSpec from_json(const nlohmann::json& json);  // throws InputError naming the field
};

struct Pair {
  std::string source;
  std::string target;
};

struct TaskData {
  std::vector<Pair> train, validation, test;
  const std::vector<Pair>& split(const std::string& name) const;  // "train", "validation" or "test"
};

// The data of a task, deterministic by spec.seed.
TaskData make_task_data(const TaskSpec& spec);
// A text as the model's tokens (dates: its characters) and back (dates: the characters joined).
std::vector<std::string> source_tokens(const TaskSpec& spec, const std::string& text);
std::vector<std::string> target_tokens(const TaskSpec& spec, const std::string& text);
std::string join_target(const TaskSpec& spec, const std::vector<std::string>& tokens);
// The vocabularies of a new model of the task.
models::Vocabulary make_source_vocabulary(const TaskSpec& spec, const TaskData& data);
models::Vocabulary make_target_vocabulary(const TaskSpec& spec, const TaskData& data);

// Token ids of a source text for a trained model; throws InputError naming the text and the first token the
// vocabulary does not know, or an empty or over-long input.
std::vector<std::int64_t> encode_source(const TaskSpec& spec, const models::Vocabulary& vocabulary,
                                        const std::string& text);

}  // namespace attend::app
