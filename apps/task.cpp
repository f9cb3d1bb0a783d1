// The tasks of the `attend` program (task.hpp).
#include "apps/task.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "data/bleu.hpp"
#include "data/dates.hpp"
#include "data/text.hpp"
#include "data/vocabulary.hpp"
#include "models/batch.hpp"

namespace attend::app {

// The program is where vocabularies (data/) meet models (models/): both number the four special tokens the same way.
static_assert(data::Vocabulary::pad_id == models::pad_id && data::Vocabulary::sos_id == models::sos_id &&
                  data::Vocabulary::eos_id == models::eos_id && data::Vocabulary::unk_id == models::unk_id,
              "data::Vocabulary's special ids must be the ids the models reserve (models/batch.hpp)");

namespace {

void check_known(const std::string& name) {
  if (name != "dates" && name != "pairs" && name != "digits") {
    throw InputError("unknown task \"" + name + "\" (expected dates, pairs or digits)");
  }
}

template <class V>
V field(const nlohmann::json& json, const char* name) {
  try {
    return json.at(name).get<V>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(std::string("task description: missing or malformed field \"") + name + "\"");
  }
}

data::Tokenization tokenization(const std::string& name, const char* side) {
  try {
    return data::tokenization_from_string(name);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string(side) + " " + e.what());
  }
}

std::vector<std::string> characters_of(const std::string& text) {
  try {
    return data::utf8_characters(text);
  } catch (const std::invalid_argument& e) {
    throw InputError("input \"" + text + "\": " + e.what());
  }
}

std::string joined(const std::vector<std::string>& tokens) {
  std::string text;
  for (const auto& t : tokens) text += t;
  return text;
}

// A model's data file must still be the one it was trained on (spec.fingerprint empty: a new model, any file).
void check_fingerprint(const TaskSpec& spec, const std::string& fingerprint) {
  if (!spec.fingerprint.empty() && spec.fingerprint != fingerprint) {
    throw InputError(spec.data + ": not the file the model was trained on (its fingerprint is " + fingerprint +
                     ", the model's " + spec.fingerprint + "); give the original with --data");
  }
}

TaskData dates_data(const TaskSpec& spec) {
  data::dates::Splits splits;
  try {
    splits = data::dates::make_splits(spec.seed, spec.train_size, spec.validation_size, spec.test_size);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  TaskData data;
  for (const auto& e : splits.train) data.train.push_back({characters_of(e.source), characters_of(e.target)});
  for (const auto& e : splits.validation)
    data.validation.push_back({characters_of(e.source), {characters_of(e.target)}});
  for (const auto& e : splits.test) data.test.push_back({characters_of(e.source), {characters_of(e.target)}});
  data.summary = "generated dates, " + std::to_string(data.train.size()) + " training / " +
                 std::to_string(data.validation.size()) + " validation / " + std::to_string(data.test.size()) +
                 " test, disjoint by date";
  return data;
}

TaskData pairs_data(const TaskSpec& spec) {
  if (spec.data.empty()) throw InputError("task pairs needs a sentence-pair file: --data FILE");
  try {
    data::PairReadOptions read;
    read.source_column = spec.source_column;
    if (read.source_column == 0) {
      read.source_column = data::pair_column(spec.data, spec.source);
      const std::size_t target_column = data::pair_column(spec.data, spec.target);
      if (target_column == read.source_column) {
        throw InputError("--source " + spec.source + " and --target " + spec.target + " name the same column of " +
                         spec.data);
      }
    }
    read.skip_bad_lines = spec.skip_bad_lines;
    const data::PairFile file = data::read_pair_file(spec.data, read);
    check_fingerprint(spec, file.fingerprint);
    data::TranslationSplitOptions split;
    split.seed = spec.seed;
    split.train_size = spec.train_size;
    split.validation_size = spec.validation_size;
    split.test_size = spec.test_size;
    split.max_words = spec.max_words;
    split.source_tokenization = tokenization(spec.source_tokens, "--source-tokens");
    split.target_tokenization = tokenization(spec.target_tokens, "--target-tokens");
    data::TranslationData translation = data::make_translation_data(file, split);
    TaskData data;
    data.train = std::move(translation.train);
    for (auto& e : translation.validation) data.validation.push_back({std::move(e.source), std::move(e.references)});
    for (auto& e : translation.test) data.test.push_back({std::move(e.source), std::move(e.references)});
    data.fingerprint = file.fingerprint;
    data.source_column = read.source_column;
    data.summary = spec.data + ": " + std::to_string(file.pairs.size()) + " pairs" +
                   (file.skipped ? " (" + std::to_string(file.skipped) + " bad lines skipped)" : "") + ", " +
                   std::to_string(translation.kept_pairs) + " with at most " +
                   (spec.max_words ? std::to_string(spec.max_words) : std::string("any number of")) + " words, " +
                   std::to_string(translation.distinct_sources) + " distinct sources; " +
                   std::to_string(data.train.size()) + " training pairs, " + std::to_string(data.validation.size()) +
                   " validation and " + std::to_string(data.test.size()) + " test sentences";
    return data;
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    const bool bad_line = message.find(": not valid UTF-8") != std::string::npos ||
                          message.find(": no TAB") != std::string::npos ||
                          message.find(": an empty sentence") != std::string::npos;
    throw InputError(message + (bad_line ? " (--skip-bad-lines skips and counts such lines)" : ""));
  }
}

// splitmix64's finaliser: well-spread seeds from (seed, epoch, position)
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::vector<std::string> digit_tokens(const std::vector<int>& digits) {
  std::vector<std::string> tokens;
  for (const int d : digits) tokens.push_back(std::to_string(d));
  return tokens;
}

std::vector<Example> digit_examples(const std::vector<data::Composed>& images) {
  std::vector<Example> examples;
  for (const data::Composed& c : images) examples.push_back({{}, {digit_tokens(c.digits)}, c.image});
  return examples;
}

TaskData digits_data(const TaskSpec& spec) {
  if (spec.data.empty())
    throw InputError("task digits needs the digits file: --data FILE (digits.csv or digits.csv.gz)");
  try {
    spec.composer(true).validate();
    const data::DigitImages digits = data::load_digits(spec.data);
    check_fingerprint(spec, digits.fingerprint);
    data::DigitSplit split = data::split_digits(digits, spec.validation_digits, spec.test_digits, spec.seed);
    TaskData data;
    data.validation = digit_examples(
        data::compose_many(split.validation, spec.composer(false), spec.validation_size, mix(spec.seed ^ 0x76616c)));
    data.test = digit_examples(
        data::compose_many(split.test, spec.composer(false), spec.test_size, mix(spec.seed ^ 0x74657374)));
    data.train_digits = std::move(split.train);
    data.fingerprint = digits.fingerprint;
    const data::ComposerOptions canvas = spec.composer(false);
    char noise[32];
    std::snprintf(noise, sizeof noise, "%g", spec.noise);
    data.summary =
        spec.data + ": " + std::to_string(digits.size()) + " digits; " + std::to_string(data.train_digits.size()) +
        " training, " + std::to_string(spec.validation_digits) + " validation and " + std::to_string(spec.test_digits) +
        " test digits; images of " + std::to_string(spec.min_digits) + "–" + std::to_string(spec.max_digits) +
        " digits (" + std::to_string(canvas.height) + "×" + std::to_string(canvas.width) +
        "): " + std::to_string(spec.train_size) + " a training epoch (composed afresh, noise " + noise + "), " +
        std::to_string(data.validation.size()) + " validation, " + std::to_string(data.test.size()) + " test";
    return data;
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
}

}  // namespace

data::ComposerOptions TaskSpec::composer(bool training) const {
  data::ComposerOptions options;
  options.min_digits = min_digits;
  options.max_digits = max_digits;
  options.min_gap = min_gap;
  options.max_gap = max_gap;
  options.noise = training ? noise : 0.0;
  return options;
}

std::vector<data::Composed> training_images(const TaskSpec& spec, const data::DigitImages& pool, std::size_t epoch,
                                            std::size_t first, std::size_t count) {
  const data::ComposerOptions options = spec.composer(true);
  std::vector<data::Composed> images;
  for (std::size_t k = first; k < first + count; ++k) {
    Rng rng(mix(mix(mix(spec.seed) ^ epoch) ^ k));
    images.push_back(data::compose(pool, options, rng));
  }
  return images;
}

nlohmann::json TaskSpec::to_json() const {
  nlohmann::json json = {{"name", name},
                         {"seed", seed},
                         {"train_size", train_size},
                         {"validation_size", validation_size},
                         {"test_size", test_size},
                         {"max_source_length", max_source_length}};
  if (is_pairs()) {
    json.update({{"data", data},
                 {"source", source},
                 {"target", target},
                 {"source_tokens", source_tokens},
                 {"target_tokens", target_tokens},
                 {"max_words", max_words},
                 {"min_count", min_count},
                 {"skip_bad_lines", skip_bad_lines},
                 {"fingerprint", fingerprint},
                 {"source_column", source_column}});
  }
  if (is_digits()) {
    json.update({{"data", data},
                 {"fingerprint", fingerprint},
                 {"validation_digits", validation_digits},
                 {"test_digits", test_digits},
                 {"min_digits", min_digits},
                 {"max_digits", max_digits},
                 {"min_gap", min_gap},
                 {"max_gap", max_gap},
                 {"noise", noise}});
  }
  return json;
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
  if (spec.is_pairs()) {
    spec.data = field<std::string>(json, "data");
    spec.source = field<std::string>(json, "source");
    spec.target = field<std::string>(json, "target");
    spec.source_tokens = field<std::string>(json, "source_tokens");
    spec.target_tokens = field<std::string>(json, "target_tokens");
    tokenization(spec.source_tokens, "source_tokens");
    tokenization(spec.target_tokens, "target_tokens");
    spec.max_words = field<std::size_t>(json, "max_words");
    spec.min_count = field<std::size_t>(json, "min_count");
    spec.skip_bad_lines = field<bool>(json, "skip_bad_lines");
    spec.fingerprint = field<std::string>(json, "fingerprint");
    // absent from files written before it was kept: the column is then found from the file name again
    spec.source_column = json.contains("source_column") ? field<std::size_t>(json, "source_column") : 0;
    if (spec.source_column > 2) throw InputError("task description: source_column must be 1 or 2");
  }
  if (spec.is_digits()) {
    spec.data = field<std::string>(json, "data");
    spec.fingerprint = field<std::string>(json, "fingerprint");
    spec.validation_digits = field<std::size_t>(json, "validation_digits");
    spec.test_digits = field<std::size_t>(json, "test_digits");
    spec.min_digits = field<std::size_t>(json, "min_digits");
    spec.max_digits = field<std::size_t>(json, "max_digits");
    spec.min_gap = field<std::size_t>(json, "min_gap");
    spec.max_gap = field<std::size_t>(json, "max_gap");
    spec.noise = field<double>(json, "noise");
    try {
      spec.composer(true).validate();
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("task description: ") + e.what());
    }
  }
  return spec;
}

std::vector<Example> TaskData::held_out(const std::string& split, const TaskSpec& spec) const {
  if (split == "validation") return validation;
  if (split == "test") return test;
  if (split == "train" && spec.is_digits()) {
    return digit_examples(training_images(spec, train_digits, 1, 0, spec.train_size));
  }
  if (split == "train") {
    std::vector<Example> examples;
    for (const auto& p : train) examples.push_back({p.source, {p.target}});
    return examples;
  }
  throw InputError("unknown split \"" + split + "\" (expected train, validation or test)");
}

TaskData make_task_data(const TaskSpec& spec) {
  check_known(spec.name);
  if (spec.is_digits()) return digits_data(spec);
  return spec.is_pairs() ? pairs_data(spec) : dates_data(spec);
}

std::vector<std::string> source_tokens(const TaskSpec& spec, const std::string& text) {
  if (spec.is_digits()) throw InputError("a digits model reads images, not text: give them with --image FILE.pgm");
  if (!spec.is_pairs()) return characters_of(text);
  try {
    return data::tokenize(text, tokenization(spec.source_tokens, "--source-tokens"));
  } catch (const std::invalid_argument& e) {
    throw InputError("input \"" + text + "\": " + e.what());
  }
}

std::string join_target(const TaskSpec& spec, const std::vector<std::string>& tokens) {
  if (spec.is_digits()) return data::join_tokens(tokens);
  if (!spec.is_pairs()) return joined(tokens);
  return data::detokenize(tokens, tokenization(spec.target_tokens, "--target-tokens"));
}

data::Vocabulary make_source_vocabulary(const TaskSpec& spec, const TaskData& data) {
  data::Vocabulary vocabulary;
  if (spec.is_digits()) return vocabulary;  // images: no source tokens
  if (spec.is_pairs()) {
    std::vector<std::vector<std::string>> sentences;
    for (const auto& p : data.train) sentences.push_back(p.source);
    return data::build_vocabulary(sentences, spec.min_count);
  }
  // every character a date can be written with, so that any generated date (not only the training ones) is readable
  for (const auto& c : data::dates::source_alphabet()) vocabulary.add(c);
  return vocabulary;
}

data::Vocabulary make_target_vocabulary(const TaskSpec& spec, const TaskData& data) {
  data::Vocabulary vocabulary;
  if (spec.is_pairs()) {
    std::vector<std::vector<std::string>> sentences;
    for (const auto& p : data.train) sentences.push_back(p.target);
    return data::build_vocabulary(sentences, spec.min_count);
  }
  if (spec.is_digits()) return data::digit_vocabulary();
  for (const auto& c : data::dates::target_alphabet()) vocabulary.add(c);
  return vocabulary;
}

std::vector<std::int64_t> encode_source(const TaskSpec& spec, const data::Vocabulary& vocabulary,
                                        const std::string& text) {
  const std::vector<std::string> tokens = source_tokens(spec, text);
  if (tokens.empty()) throw InputError("empty input: nothing to read");
  if (tokens.size() > spec.max_source_length) {
    throw InputError("input \"" + text + "\" is " + std::to_string(tokens.size()) +
                     (spec.is_pairs() ? " tokens" : " characters") + " long; the model reads at most " +
                     std::to_string(spec.max_source_length));
  }
  if (spec.is_pairs()) return vocabulary.encode(tokens);  // unknown words read as <unk>
  std::vector<std::int64_t> ids;
  for (const auto& token : tokens) {
    if (!vocabulary.contains(token)) {
      throw InputError("input \"" + text + "\": the character \"" + token + "\" was never seen in training");
    }
    ids.push_back(vocabulary.id(token));
  }
  return ids;
}

Scores score_outputs(const TaskSpec& spec, const std::vector<std::vector<std::string>>& outputs,
                     const std::vector<Example>& examples) {
  if (outputs.size() != examples.size()) throw std::logic_error("score_outputs: outputs and examples differ in number");
  if (spec.is_pairs()) {
    // exact match: the output equals one of the references
    double exact = 0;
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const auto& references = examples[k].references;
      exact += std::find(references.begin(), references.end(), outputs[k]) != references.end() ? 1 : 0;
    }
    exact = outputs.empty() ? 0.0 : exact / static_cast<double>(outputs.size());
    std::vector<std::vector<std::vector<std::string>>> references;
    for (const auto& e : examples) references.push_back(e.references);
    const data::BleuScore bleu = data::corpus_bleu(outputs, references);
    Scores scores = {{"bleu", 100 * bleu.bleu}, {"exact_match", exact}};
    for (std::size_t n = 0; n < bleu.precisions.size(); ++n) {
      scores.emplace_back("precision_" + std::to_string(n + 1), 100 * bleu.precisions[n]);
    }
    scores.emplace_back("brevity_penalty", bleu.brevity_penalty);
    scores.emplace_back("length_ratio", bleu.reference_length ? static_cast<double>(bleu.hypothesis_length) /
                                                                    static_cast<double>(bleu.reference_length)
                                                              : 0.0);
    return scores;
  }
  if (spec.is_digits()) {
    double exact = 0, right = 0, total = 0;
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const std::vector<std::string>& reference = examples[k].references.front();
      exact += outputs[k] == reference ? 1 : 0;
      for (std::size_t t = 0; t < reference.size(); ++t)
        right += t < outputs[k].size() && outputs[k][t] == reference[t];
      total += static_cast<double>(reference.size());
    }
    const double n = static_cast<double>(std::max<std::size_t>(outputs.size(), 1));
    return {{"exact_match", exact / n}, {"digit_accuracy", total > 0 ? right / total : 0.0}};
  }
  std::vector<std::string> predictions, targets;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    predictions.push_back(joined(outputs[k]));
    targets.push_back(joined(examples[k].references.front()));
  }
  const data::dates::Scores dates = data::dates::score(predictions, targets);
  return {{"exact_match", dates.exact_match}, {"year", dates.year}, {"month", dates.month}, {"day", dates.day}};
}

}  // namespace attend::app
