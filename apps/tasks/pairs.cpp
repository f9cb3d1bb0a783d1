// The pairs task (task.hpp): translation of a sentence-pair file (Tatoeba's TSV), docs/12-translation.md. The file is
// read, normalised and tokenised (words or characters, data/text.hpp), pairs of at most --max-words words a side are
// kept and split by distinct source sentence (data/pairs.hpp); rarer tokens read as <unk>; scored by corpus BLEU.
// A model remembers the file's fingerprint and the source's column, so `attend eval` reads the same split.
#include <CLI/CLI.hpp>
#include <algorithm>

#include "apps/flags.hpp"
#include "apps/tasks/text_task.hpp"
#include "data/bleu.hpp"
#include "data/text.hpp"

namespace attend::app {

namespace {

data::Tokenization tokenization(const std::string& name, const char* side) {
  try {
    return data::tokenization_from_string(name);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string(side) + " " + e.what());
  }
}

struct PairsData : TextData {
  std::size_t source_column = 0;  // the column the sources came from
};

class PairsTask : public TextTask {
 public:
  PairsTask() : TextTask("pairs") {}
  std::string description() const override { return "a sentence-pair file"; }

  std::vector<CLI::Option*> add_flags(CLI::App& command) override {
    const std::vector<std::string> tokenizations = {"words", "characters"};
    return {
        command
            .add_option("--source", source_,
                        "pairs: source language as the file name gives it (spa-eng.tsv: spa), or 1 or 2")
            ->capture_default_str(),
        command.add_option("--target", target_, "pairs: target language, likewise")->capture_default_str(),
        command.add_option("--source-tokens", source_tokens_, "pairs: how the source is cut into tokens")
            ->check(CLI::IsMember(tokenizations))
            ->capture_default_str(),
        command.add_option("--target-tokens", target_tokens_, "pairs: how the target is cut into tokens")
            ->check(CLI::IsMember(tokenizations))
            ->capture_default_str(),
        command.add_option("--max-words", max_words_, "pairs: keep pairs of at most this many words a side (0: all)")
            ->check(CLI::Range(0, 100000))
            ->capture_default_str(),
        command.add_option("--min-count", min_count_, "pairs: rarer tokens read as <unk>")
            ->check(whole(many))
            ->capture_default_str(),
        command.add_flag("--skip-bad-lines", skip_bad_lines_, "pairs: skip (and count) malformed lines"),
    };
  }

  // train_size 0: every pair not held out
  TaskDefaults defaults() const override {
    TaskDefaults d;
    d.train_size = 0;
    d.validation_size = 1000;
    d.train_size_help = "every pair not held out";
    d.validation_size_help = "1000 sentences";
    return d;
  }

  std::string data_help() const override { return "a sentence-pair file (TSV) or data set (spa-eng)"; }
  std::string scores_help() const override { return "BLEU"; }

  std::unique_ptr<TaskData> make_data() const override {
    if (settings.data.empty()) {
      throw InputError(
          "task pairs needs a sentence-pair file: --data FILE, or a data set's name (spa-eng, eng-fra, "
          "hin-eng, eng-jpn: attend data list)");
    }
    try {
      return read_and_split();
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      const bool bad_line = message.find(": not valid UTF-8") != std::string::npos ||
                            message.find(": no TAB") != std::string::npos ||
                            message.find(": an empty sentence") != std::string::npos;
      const bool too_few = message.find("leave none to train on") != std::string::npos;
      throw InputError(naming_data_flag(message) + (bad_line ? " (--skip-bad-lines skips and counts such lines)" : "") +
                       (too_few ? " (--test-size N and --valid-size N hold fewer out)" : ""));
    }
  }

  void remember(const TaskData& data) override {
    Task::remember(data);
    source_column_ = static_cast<const PairsData&>(data).source_column;
  }

  data::Vocabulary source_vocabulary(const TaskData& data) const override { return vocabulary(data, true); }
  data::Vocabulary target_vocabulary(const TaskData& data) const override { return vocabulary(data, false); }

  std::vector<std::string> source_tokens(const std::string& text) const override {
    try {
      return data::tokenize(text, tokenization(source_tokens_, "--source-tokens"));
    } catch (const std::invalid_argument& e) {
      throw InputError("input " + quoted_input(text) + ": " + e.what());
    }
  }

  std::pair<std::string, std::string> languages() const override {
    const auto named = [](const std::string& column) { return column != "1" && column != "2"; };
    if (!named(source_) || !named(target_)) return {};
    return {source_, target_};
  }

  std::string join_target(const std::vector<std::string>& tokens) const override {
    return data::detokenize(tokens, tokenization(target_tokens_, "--target-tokens"));
  }
  std::string join_source(const std::vector<std::string>& tokens) const override {
    return data::detokenize(tokens, tokenization(source_tokens_, "--source-tokens"));
  }

  // BLEU (in percent) first, then exact match (the output equals one of the references), the n-gram precisions, the
  // brevity penalty and the length ratio.
  Scores score(const std::vector<std::vector<std::string>>& outputs,
               const std::vector<Example>& examples) const override {
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

 protected:
  void own_to_json(nlohmann::json& json) const override {
    json.update({{"data", kept_path(settings.data)},
                 {"source", source_},
                 {"target", target_},
                 {"source_tokens", source_tokens_},
                 {"target_tokens", target_tokens_},
                 {"max_words", max_words_},
                 {"min_count", min_count_},
                 {"skip_bad_lines", skip_bad_lines_},
                 {"fingerprint", fingerprint_},
                 {"source_column", source_column_}});
  }

  void own_from_json(const nlohmann::json& json) override {
    settings.data = task_field<std::string>(json, "data");
    source_ = task_field<std::string>(json, "source");
    target_ = task_field<std::string>(json, "target");
    source_tokens_ = task_field<std::string>(json, "source_tokens");
    target_tokens_ = task_field<std::string>(json, "target_tokens");
    tokenization(source_tokens_, "source_tokens");
    tokenization(target_tokens_, "target_tokens");
    max_words_ = task_field<std::size_t>(json, "max_words");
    min_count_ = task_field<std::size_t>(json, "min_count");
    skip_bad_lines_ = task_field<bool>(json, "skip_bad_lines");
    fingerprint_ = task_field<std::string>(json, "fingerprint");
    // absent from files written before it was kept: the column is then found from the file name again
    source_column_ = json.contains("source_column") ? task_field<std::size_t>(json, "source_column") : 0;
    if (source_column_ > 2) throw InputError("task description: source_column must be 1 or 2");
  }

  const char* token_word() const override { return "tokens"; }
  bool unknown_reads_as_unknown() const override { return true; }

 private:
  std::unique_ptr<TaskData> read_and_split() const {
    const std::string path = data_path();
    data::PairReadOptions read;
    read.source_column = source_column_;
    if (read.source_column == 0) {
      read.source_column = data::pair_column(path, source_);
      if (data::pair_column(path, target_) == read.source_column) {
        throw InputError("--source " + source_ + " and --target " + target_ + " name the same column of " + path);
      }
    }
    read.skip_bad_lines = skip_bad_lines_;
    const data::PairFile file = data::read_pair_file(path, read);
    check_fingerprint(path, fingerprint_, file.fingerprint);
    data::TranslationSplitOptions split;
    split.seed = settings.seed;
    split.train_size = settings.train_size;
    split.validation_size = settings.validation_size;
    split.test_size = settings.test_size;
    split.max_words = max_words_;
    split.source_tokenization = tokenization(source_tokens_, "--source-tokens");
    split.target_tokenization = tokenization(target_tokens_, "--target-tokens");
    data::TranslationData translation = data::make_translation_data(file, split);
    auto made = std::make_unique<PairsData>();
    made->train = std::move(translation.train);
    for (auto& e : translation.validation) made->validation.push_back({std::move(e.source), std::move(e.references)});
    for (auto& e : translation.test) made->test.push_back({std::move(e.source), std::move(e.references)});
    made->fingerprint = file.fingerprint;
    made->source_column = read.source_column;
    made->summary = data_shown(path) + ": " + std::to_string(file.pairs.size()) + " pairs" +
                    (file.skipped ? " (" + std::to_string(file.skipped) + " bad lines skipped)" : "") + ", " +
                    std::to_string(translation.kept_pairs) + " with at most " +
                    (max_words_ ? std::to_string(max_words_) : std::string("any number of")) + " words, " +
                    std::to_string(translation.distinct_sources) + " distinct sources; " +
                    std::to_string(made->train.size()) + " training pairs, " + std::to_string(made->validation.size()) +
                    " validation and " + std::to_string(made->test.size()) + " test sentences";
    return made;
  }

  data::Vocabulary vocabulary(const TaskData& data, bool source) const {
    std::vector<std::vector<std::string>> sentences;
    for (const auto& p : static_cast<const TextData&>(data).train) sentences.push_back(source ? p.source : p.target);
    return data::build_vocabulary(sentences, min_count_);
  }

  std::string source_ = "1";  // the source: a language code of the file name (spa-eng.tsv: spa) or 1 or 2
  std::string target_ = "2";
  std::string source_tokens_ = "words";  // "words" or "characters"
  std::string target_tokens_ = "words";
  std::size_t max_words_ = 10;  // pairs with both sides at most this many words; 0: no limit
  std::size_t min_count_ = 2;   // vocabulary: tokens seen fewer times in training read as <unk>
  bool skip_bad_lines_ = false;
  std::size_t source_column_ = 0;  // 1 or 2 once resolved by training, so a renamed file still reads
};

}  // namespace

std::unique_ptr<Task> make_pairs_task() { return std::make_unique<PairsTask>(); }

}  // namespace attend::app
