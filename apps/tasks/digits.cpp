// The digits task (task.hpp): captions of images of handwritten digit strings, docs/13-visual-attention.md. The
// digits file is split by seed into training, validation and test digits; validation and test images are composed
// once by seed, training images afresh for every batch (seeded by the epoch and the position, so --resume is exact).
// Scored by exact match and digit accuracy (the model adds how often its attention moves left to right).
#include "data/digits.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "apps/flags.hpp"
#include "apps/task.hpp"
#include "data/text.hpp"
#include "io/atomic_file.hpp"

namespace attend::app {

namespace {

// splitmix64's finaliser: well-spread seeds from (seed, epoch, position)
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::vector<Example> digit_examples(const std::vector<data::Composed>& images) {
  std::vector<Example> examples;
  for (const data::Composed& c : images) {
    std::vector<std::string> tokens;
    for (const int d : c.digits) tokens.push_back(std::to_string(d));
    examples.push_back({{}, {tokens}, c.image});
  }
  return examples;
}

struct DigitsData : TaskData {
  data::DigitImages pool;  // the training digits the training images are composed from
};

class DigitsTask;

// train_size images an epoch, composed afresh for every batch, in order.
class DigitsBatches : public Batches {
 public:
  DigitsBatches(const DigitsTask& task, const data::DigitImages& pool, std::size_t batch_size)
      : task_(task), pool_(pool), batch_size_(batch_size) {}
  std::size_t steps_per_epoch() const override;
  std::vector<std::vector<std::size_t>> epoch_order(Rng&) const override;
  TrainingBatch batch(std::size_t epoch, const std::vector<std::size_t>& indices) const override;

 private:
  const DigitsTask& task_;
  const data::DigitImages& pool_;
  std::size_t batch_size_;
};

class DigitsTask : public Task {
 public:
  DigitsTask() : Task("digits") {}

  std::string description() const override { return "captions of images of handwritten digit strings"; }

  std::vector<CLI::Option*> add_flags(CLI::App& command) override {
    return {
        command.add_option("--valid-digits", validation_digits_, "digits: digit images held out for validation images")
            ->check(whole(many))
            ->capture_default_str(),
        command.add_option("--test-digits", test_digits_, "digits: digit images held out for test images")
            ->check(whole(many))
            ->capture_default_str(),
        command.add_option("--min-digits", composer_.min_digits, "digits: fewest digits an image")
            ->check(whole(8))
            ->capture_default_str(),
        command.add_option("--max-digits", composer_.max_digits, "digits: most digits an image")
            ->check(whole(8))
            ->capture_default_str(),
        command.add_option("--min-gap", composer_.min_gap, "digits: fewest empty columns between digits")
            ->check(CLI::Range(0, 64))
            ->capture_default_str(),
        command.add_option("--max-gap", composer_.max_gap, "digits: most empty columns between digits")
            ->check(CLI::Range(0, 64))
            ->capture_default_str(),
        command.add_option("--noise", noise_, "digits: standard deviation of the training images' pixel noise")
            ->check(number_in(0.0, 1.0))
            ->capture_default_str(),
    };
  }

  // an epoch of 600 batches of 32 composed images; chapter 13's sizes
  TaskDefaults defaults() const override {
    TaskDefaults d;
    d.train_size = 19200;
    d.validation_size = 1000;
    d.batch_size = 32;
    d.train_size_help = "19200 images an epoch";
    d.validation_size_help = "1000 images";
    return d;
  }

  void finish(const GivenFlags& given) override {
    if (given.max_length) throw InputError("--max-length is only for " + tasks_reading(InputKind::text));
    check_composer("");
  }

  std::string data_help() const override { return "the digits file (default: the data set digits)"; }
  std::string scores_help() const override { return "exact match, left to right"; }

  std::unique_ptr<TaskData> make_data() const override {
    const std::string path = data_path("digits");
    try {
      composer(true).validate();
      const data::DigitImages digits = data::load_digits(path);
      check_fingerprint(path, fingerprint_, digits.fingerprint);
      data::DigitSplit split = data::split_digits(digits, validation_digits_, test_digits_, settings.seed);
      auto made = std::make_unique<DigitsData>();
      made->validation = digit_examples(data::compose_many(split.validation, composer(false), settings.validation_size,
                                                           mix(settings.seed ^ 0x76616c)));
      made->test = digit_examples(
          data::compose_many(split.test, composer(false), settings.test_size, mix(settings.seed ^ 0x74657374)));
      made->pool = std::move(split.train);
      made->fingerprint = digits.fingerprint;
      made->summary = summary(data_shown(path, "digits"), digits.size(), made->pool.size(), *made);
      return made;
    } catch (const std::invalid_argument& e) {
      throw InputError(naming_data_flag(e.what()));
    }
  }

  data::Vocabulary source_vocabulary(const TaskData&) const override { return {}; }  // images: no source tokens
  data::Vocabulary target_vocabulary(const TaskData&) const override { return data::digit_vocabulary(); }

  std::string training_summary(const TaskData& data, const data::Vocabulary&, const data::Vocabulary&) const override {
    return std::to_string(settings.train_size) + " training images an epoch, " +
           std::to_string(data.validation.size()) + " validation; ";
  }

  InputKind input() const override { return InputKind::image; }
  std::pair<std::size_t, std::size_t> image_size() const override {
    const data::ComposerOptions canvas = composer(false);
    return {canvas.height, canvas.width};
  }

  std::string join_target(const std::vector<std::string>& tokens) const override { return data::join_tokens(tokens); }

  // Exact match and digit accuracy: the reference digits the output has right at their position, over all of them.
  Scores score(const std::vector<std::vector<std::string>>& outputs,
               const std::vector<Example>& examples) const override {
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

  std::unique_ptr<Batches> batches(const TaskData& data, const data::Vocabulary&, const data::Vocabulary&,
                                   std::size_t batch_size) const override {
    return std::make_unique<DigitsBatches>(*this, static_cast<const DigitsData&>(data).pool, batch_size);
  }

  std::string vocabulary_summary(const data::Vocabulary&, const data::Vocabulary& target) const override {
    return "captions: " + std::to_string(target.size()) + " target tokens (the four specials and the digits 0 to 9)";
  }

  // DIR/validation-0001.pgm …, DIR/test-0001.pgm … (binary PGM, 255 levels), DIR/validation.tsv and DIR/test.tsv
  // (`FILE.pgm<TAB>caption`), DIR/target.vocab.
  std::string write_data(const std::string& folder, const TaskData& data, const data::Vocabulary&,
                         const data::Vocabulary& target) const override {
    write_images(folder, "validation", data.validation);
    write_images(folder, "test", data.test);
    write_file_atomically(folder + "target.vocab", vocabulary_file(target));
    return std::to_string(data.validation.size()) + " validation and " + std::to_string(data.test.size()) +
           " test images (validation-NNNN.pgm, test-NNNN.pgm), validation.tsv, test.tsv and target.vocab";
  }

  // The training images at positions first … first + count − 1 of an epoch (from 1). Image k of epoch e is composed
  // from its own generator, seeded by (seed, e, k): the same at every run, whatever came before.
  std::vector<data::Composed> training_images(const data::DigitImages& pool, std::size_t epoch, std::size_t first,
                                              std::size_t count) const {
    const data::ComposerOptions options = composer(true);
    std::vector<data::Composed> images;
    for (std::size_t k = first; k < first + count; ++k) {
      Rng rng(mix(mix(mix(settings.seed) ^ epoch) ^ k));
      images.push_back(data::compose(pool, options, rng));
    }
    return images;
  }

 protected:
  void own_to_json(nlohmann::json& json) const override {
    json.update({{"data", kept_path(settings.data)},
                 {"fingerprint", fingerprint_},
                 {"validation_digits", validation_digits_},
                 {"test_digits", test_digits_},
                 {"min_digits", composer_.min_digits},
                 {"max_digits", composer_.max_digits},
                 {"min_gap", composer_.min_gap},
                 {"max_gap", composer_.max_gap},
                 {"noise", noise_}});
  }

  void own_from_json(const nlohmann::json& json) override {
    settings.data = task_field<std::string>(json, "data");
    fingerprint_ = task_field<std::string>(json, "fingerprint");
    validation_digits_ = task_field<std::size_t>(json, "validation_digits");
    test_digits_ = task_field<std::size_t>(json, "test_digits");
    composer_.min_digits = task_field<std::size_t>(json, "min_digits");
    composer_.max_digits = task_field<std::size_t>(json, "max_digits");
    composer_.min_gap = task_field<std::size_t>(json, "min_gap");
    composer_.max_gap = task_field<std::size_t>(json, "max_gap");
    noise_ = task_field<double>(json, "noise");
    check_composer("task description: ");
  }

  std::vector<Example> training_examples(const TaskData& data) const override {
    return digit_examples(training_images(static_cast<const DigitsData&>(data).pool, 1, 0, settings.train_size));
  }

 private:
  // The composer of this task's images: training images get the noise, held-out ones none.
  data::ComposerOptions composer(bool training) const {
    data::ComposerOptions options = composer_;
    options.noise = training ? noise_ : 0.0;
    return options;
  }

  void check_composer(const std::string& prefix) const {
    try {
      composer(true).validate();
    } catch (const std::invalid_argument& e) {
      throw InputError(prefix + e.what());
    }
  }

  std::string summary(const std::string& path, std::size_t digits, std::size_t training_digits,
                      const TaskData& made) const {
    const data::ComposerOptions canvas = composer(false);
    char noise[32];
    std::snprintf(noise, sizeof noise, "%g", noise_);
    return path + ": " + std::to_string(digits) + " digits; " + std::to_string(training_digits) + " training, " +
           std::to_string(validation_digits_) + " validation and " + std::to_string(test_digits_) +
           " test digits; images of " + std::to_string(canvas.min_digits) + "–" + std::to_string(canvas.max_digits) +
           " digits (" + std::to_string(canvas.height) + "×" + std::to_string(canvas.width) +
           "): " + std::to_string(settings.train_size) + " a training epoch (composed afresh, noise " + noise + "), " +
           std::to_string(made.validation.size()) + " validation, " + std::to_string(made.test.size()) + " test";
  }

  static void write_images(const std::string& folder, const std::string& split, const std::vector<Example>& examples) {
    std::string list;
    for (std::size_t k = 0; k < examples.size(); ++k) {
      char name[64];
      std::snprintf(name, sizeof name, "%s-%04zu.pgm", split.c_str(), k + 1);
      data::write_pgm(folder + name, examples[k].image);
      list += std::string(name) + "\t" + data::join_tokens(examples[k].references.front()) + "\n";
    }
    write_file_atomically(folder + split + ".tsv", list);
  }

  std::size_t validation_digits_ = 100;  // single digit images held out for the validation images
  std::size_t test_digits_ = 200;        // and for the test images; the rest are the training digits
  data::ComposerOptions composer_;       // digits an image (3–6), empty columns between them (1–3), the canvas
  double noise_ = 0.05;                  // Gaussian pixel noise of the training images (held-out: none)
};

std::size_t DigitsBatches::steps_per_epoch() const {
  return (task_.settings.train_size + batch_size_ - 1) / batch_size_;
}

std::vector<std::vector<std::size_t>> DigitsBatches::epoch_order(Rng&) const {
  std::vector<std::vector<std::size_t>> order(steps_per_epoch());
  for (std::size_t i = 0; i < task_.settings.train_size; ++i) order[i / batch_size_].push_back(i);
  return order;
}

TrainingBatch DigitsBatches::batch(std::size_t epoch, const std::vector<std::size_t>& indices) const {
  TrainingBatch batch;
  for (data::Composed& c : task_.training_images(pool_, epoch, indices.front(), indices.size())) {
    batch.targets.push_back(data::caption_ids(c.digits));
    batch.tokens += c.digits.size() + 1;
    batch.images.push_back(std::move(c.image));
  }
  return batch;
}

}  // namespace

std::unique_ptr<Task> make_digits_task() { return std::make_unique<DigitsTask>(); }

}  // namespace attend::app
