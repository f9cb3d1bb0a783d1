// The worked example of docs/reference/adding-a-task.md: a task that reverses a word of letters ("cabbage" →
// "egabbac"), added to the `attend` program by this one file and one line in apps/tasks/registry.cpp (here the line
// comes from the build: tests/example/meson.build builds the program with it, and tests/cli/test_example.cpp trains,
// evaluates and runs that program).
// [docs:task]
#include "apps/tasks/text_task.hpp"

namespace attend::app {

namespace {

class ReverseTask : public TextTask {
 public:
  ReverseTask() : TextTask("reverse") {}
  std::string description() const override { return "generated words, reversed"; }

  // Words of 3 to 8 letters from a to h, drawn from settings.seed; the target is the word backwards.
  std::unique_ptr<TaskData> make_data() const override {
    Rng rng(settings.seed);
    auto word = [&] {
      std::vector<std::string> letters(3 + rng.next() % 6);
      for (std::string& letter : letters) letter = std::string(1, static_cast<char>('a' + rng.next() % 8));
      return letters;
    };
    auto made = std::make_unique<TextData>();
    for (std::size_t k = 0; k < settings.train_size; ++k) {
      const std::vector<std::string> source = word();
      made->train.push_back({source, {source.rbegin(), source.rend()}});
    }
    for (auto* split : {&made->validation, &made->test}) {
      const std::size_t count = split == &made->validation ? settings.validation_size : settings.test_size;
      for (std::size_t k = 0; k < count; ++k) {
        const std::vector<std::string> source = word();
        split->push_back({source, {{source.rbegin(), source.rend()}}});
      }
    }
    made->summary = "generated words, " + std::to_string(made->train.size()) + " training pairs";
    return made;
  }

  data::Vocabulary source_vocabulary(const TaskData&) const override { return letters(); }
  data::Vocabulary target_vocabulary(const TaskData&) const override { return letters(); }
  std::vector<std::string> source_tokens(const std::string& text) const override { return characters_of(text); }
  std::string join_target(const std::vector<std::string>& tokens) const override { return joined(tokens); }

  // Exact match: the share of outputs equal to their reference.
  Scores score(const std::vector<std::vector<std::string>>& outputs,
               const std::vector<Example>& examples) const override {
    double right = 0;
    for (std::size_t k = 0; k < outputs.size(); ++k) right += outputs[k] == examples[k].references.front();
    return {{"exact_match", outputs.empty() ? 0.0 : right / static_cast<double>(outputs.size())}};
  }

 protected:
  const char* token_word() const override { return "characters"; }
  bool unknown_reads_as_unknown() const override { return false; }

 private:
  static data::Vocabulary letters() {
    data::Vocabulary vocabulary;
    for (char c = 'a'; c <= 'h'; ++c) vocabulary.add(std::string(1, c));
    return vocabulary;
  }
};

}  // namespace

std::unique_ptr<Task> make_reverse_task() { return std::make_unique<ReverseTask>(); }

}  // namespace attend::app
// [docs:end]
