// The dates task (task.hpp): normalise a date written as a human would ("Sat 3rd of March, 2018") to ISO 8601
// ("2018-03-03"), docs/08-attention-decoder.md. Generated: data/dates.hpp makes training, validation and test dates
// disjoint by date; tokens are characters; scored by exact match and per field.
#include "data/dates.hpp"

#include <algorithm>
#include <optional>

#include "apps/tasks/text_task.hpp"

namespace attend::app {

namespace {

class DatesTask : public TextTask {
 public:
  DatesTask() : TextTask("dates") {}
  std::string description() const override { return "generated"; }
  std::string scores_help() const override { return "exact match"; }

  void finish(const GivenFlags& given) override {
    if (given.data) {
      std::string readers;
      for (const std::string& name : task_names()) {
        if (make_task(name)->reads_file()) readers += (readers.empty() ? "--task " : " and --task ") + name;
      }
      throw InputError("--data is only for " + readers + " (dates are generated)");
    }
  }

  std::unique_ptr<TaskData> make_data() const override {
    data::dates::Splits splits;
    try {
      splits =
          data::dates::make_splits(settings.seed, settings.train_size, settings.validation_size, settings.test_size);
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
    auto made = std::make_unique<TextData>();
    for (const auto& e : splits.train) made->train.push_back({characters_of(e.source), characters_of(e.target)});
    for (const auto& e : splits.validation) {
      made->validation.push_back({characters_of(e.source), {characters_of(e.target)}});
    }
    for (const auto& e : splits.test) made->test.push_back({characters_of(e.source), {characters_of(e.target)}});
    made->summary = "generated dates, " + std::to_string(made->train.size()) + " training / " +
                    std::to_string(made->validation.size()) + " validation / " + std::to_string(made->test.size()) +
                    " test, disjoint by date";
    return made;
  }

  // Every character a date can be written with, so that any generated date (not only the training ones) is readable.
  data::Vocabulary source_vocabulary(const TaskData&) const override {
    data::Vocabulary vocabulary;
    for (const auto& c : data::dates::source_alphabet()) vocabulary.add(c);
    return vocabulary;
  }

  data::Vocabulary target_vocabulary(const TaskData&) const override {
    data::Vocabulary vocabulary;
    for (const auto& c : data::dates::target_alphabet()) vocabulary.add(c);
    return vocabulary;
  }

  std::vector<std::string> source_tokens(const std::string& text) const override { return characters_of(text); }
  std::string join_target(const std::vector<std::string>& tokens) const override { return joined(tokens); }
  // A model can write any string of its output characters, "2021-02-31" and "1980-13-45" too.
  // An output that is no date, or a date the input cannot mean: the parser lists every reading a text can have, and a
  // model reads any string of its characters ("32 May 2019" and "tomorrow" have none, yet get a date).
  std::string output_note(const std::string& input, const std::vector<std::string>& tokens) const override {
    const std::optional<data::dates::Date> output = data::dates::from_iso(joined(tokens));
    if (!output) return "not a calendar date from 1900-01-01 to 2099-12-31";
    if (input.empty()) return "";
    const std::vector<data::dates::Date> readings = data::dates::parse_readings(input);
    if (readings.empty()) return "a guess: the input " + quoted_input(input) + " is no date from 1900 to 2099";
    if (std::find(readings.begin(), readings.end(), *output) != readings.end()) return "";
    std::string dates;
    for (std::size_t k = 0; k < readings.size() && k < 3; ++k)
      dates += (k == 0 ? "" : k + 1 == readings.size() || k == 2 ? " or " : ", ") + data::dates::to_iso(readings[k]);
    return "not what the input says: " + quoted_input(input) + " reads as " + dates +
           (readings.size() > 3 ? " (and " + std::to_string(readings.size() - 3) + " more)" : "");
  }

  Scores score(const std::vector<std::vector<std::string>>& outputs,
               const std::vector<Example>& examples) const override {
    std::vector<std::string> predictions, targets;
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      predictions.push_back(joined(outputs[k]));
      targets.push_back(joined(examples[k].references.front()));
    }
    const data::dates::Scores dates = data::dates::score(predictions, targets);
    return {{"exact_match", dates.exact_match}, {"year", dates.year}, {"month", dates.month}, {"day", dates.day}};
  }

 protected:
  const char* token_word() const override { return "characters"; }
  bool unknown_reads_as_unknown() const override { return false; }
};

}  // namespace

std::unique_ptr<Task> make_dates_task() { return std::make_unique<DatesTask>(); }

}  // namespace attend::app
