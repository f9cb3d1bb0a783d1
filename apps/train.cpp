// `attend train`: teacher-forced training with Adam, a progress line, validation exact match after every epoch, and the
// best model saved atomically (commands.hpp).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <cblas.h>

#include "apps/commands.hpp"
#include "apps/model_file.hpp"
#include "models/batch.hpp"
#include "models/dates.hpp"
#include "nn/optim.hpp"

namespace attend::app {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string duration_text(double seconds) {
  const long total = std::lround(std::max(0.0, seconds));
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof text, "%ldh%02ldm", total / 3600, total / 60 % 60);
  } else {
    std::snprintf(text, sizeof text, "%ldm%02lds", total / 60, total % 60);
  }
  return text;
}

// The training pairs as token ids.
struct Encoded {
  std::vector<std::vector<std::int64_t>> sources, targets;
};

Encoded encode_pairs(const TaskSpec& spec, const std::vector<Pair>& pairs, const models::Vocabulary& source,
                     const models::Vocabulary& target) {
  Encoded encoded;
  for (const Pair& p : pairs) {
    encoded.sources.push_back(source.encode(source_tokens(spec, p.source)));
    encoded.targets.push_back(target.encode(target_tokens(spec, p.target)));
  }
  return encoded;
}

// Exact match (and per-field accuracy for dates) of greedy outputs on a split.
models::dates::Scores evaluate(ModelFile& file, const std::vector<Pair>& pairs, std::size_t beam) {
  std::vector<std::vector<std::int64_t>> sources;
  std::vector<std::string> targets;
  for (const Pair& p : pairs) {
    sources.push_back(file.source_vocabulary.encode(source_tokens(file.task, p.source)));
    targets.push_back(p.target);
  }
  const auto outputs = decode_all(*file.model, sources, {beam, 0, 1.0});
  std::vector<std::string> predictions;
  for (const auto& h : outputs) predictions.push_back(join_target(file.task, file.target_vocabulary.decode(h.tokens)));
  return models::dates::score(predictions, targets);
}

// One progress line: rewritten in place on a terminal, printed as plain lines otherwise.
class Progress {
 public:
  explicit Progress(bool terminal) : terminal_(terminal) {}
  void show(const std::string& line, bool keep) {
    if (terminal_) {
      std::cerr << "\r\033[K" << line << (keep ? "\n" : "") << std::flush;
    } else {
      std::cerr << line << "\n" << std::flush;
    }
  }
  bool terminal() const { return terminal_; }

 private:
  bool terminal_;
};

}  // namespace

void set_threads(std::size_t threads) { openblas_set_num_threads(static_cast<int>(threads)); }

int run_train(const TrainOptions& options) {
  set_threads(options.threads);
  const Clock::time_point start = Clock::now();
  const TaskData data = make_task_data(options.task);

  ModelFile file;
  file.task = options.task;
  file.source_vocabulary = make_source_vocabulary(options.task, data);
  file.target_vocabulary = make_target_vocabulary(options.task, data);
  models::Seq2seqConfig config = options.model;
  config.set_decoder(options.decoder);
  config.source_vocab_size = file.source_vocabulary.size();
  config.target_vocab_size = file.target_vocabulary.size();
  try {
    config.validate();
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  file.model = std::make_unique<models::Seq2seq<float>>(config);
  models::Seq2seq<float>& model = *file.model;

  const Encoded train = encode_pairs(options.task, data.train, file.source_vocabulary, file.target_vocabulary);
  std::vector<std::size_t> source_lengths;
  for (const auto& s : train.sources) source_lengths.push_back(s.size());
  nn::Adam<float> adam(model.parameters(), {options.learning_rate});
  Rng order_rng(options.task.seed + 7);
  const std::size_t steps_per_epoch = (train.sources.size() + options.batch_size - 1) / options.batch_size;
  const std::size_t total_steps = steps_per_epoch * options.epochs;
  const std::size_t log_every = options.log_every ? options.log_every : std::max<std::size_t>(1, steps_per_epoch / 20);
  Progress progress(isatty(STDERR_FILENO) != 0);

  std::cerr << "attend train: task " << options.task.name << ", " << data.train.size() << " training pairs, "
            << data.validation.size() << " validation; model " << config.decoder_name() << " "
            << nn::to_string(config.cell) << (config.bidirectional ? " bidirectional" : "") << ", "
            << model.parameter_count() << " parameters; " << options.epochs << " epochs of " << steps_per_epoch
            << " steps\n";

  Tape<float> tape;
  double best = -1;
  std::size_t step = 0;
  std::size_t tokens = 0;
  double loss_sum = 0;
  std::size_t loss_count = 0;
  double last_validation = -1;
  bool out_of_time = false;
  double last_shown = 0;
  const Clock::time_point train_start = Clock::now();
  for (std::size_t epoch = 1; epoch <= options.epochs && !out_of_time; ++epoch) {
    model.train();
    for (const auto& indices : models::bucketed_batch_order(source_lengths, options.batch_size, order_rng)) {
      std::vector<std::vector<std::int64_t>> sources, targets;
      for (std::size_t i : indices) {
        sources.push_back(train.sources[i]);
        targets.push_back(train.targets[i]);
        tokens += train.targets[i].size() + 1;
      }
      const models::Batch batch = models::make_batch(sources, targets);
      tape.clear();
      adam.zero_grad();
      Variable<float> loss = model.loss(tape, batch);
      tape.backward(loss);
      const float norm = options.clip > 0 ? nn::clip_grad_norm(model.parameters(), options.clip) : 0.0f;
      const float value = loss.value().item();
      if (!std::isfinite(value) || !std::isfinite(norm)) {
        throw std::runtime_error("training diverged at step " + std::to_string(step + 1) + " (loss " +
                                 std::to_string(value) + "); the best model so far is in " + options.out);
      }
      adam.step();
      ++step;
      loss_sum += value;
      ++loss_count;
      const double elapsed = seconds_since(train_start);
      if (options.time_limit_minutes > 0 && elapsed > options.time_limit_minutes * 60) out_of_time = true;
      // a terminal gets the line rewritten about four times a second; a log gets a line every log_every steps
      const bool due = progress.terminal() ? elapsed - last_shown >= 0.25 : step % log_every == 0;
      if (due || out_of_time) {
        last_shown = elapsed;
        std::ostringstream line;
        line.setf(std::ios::fixed);
        line.precision(4);
        line << "epoch " << epoch << "/" << options.epochs << "  step " << step << "/" << total_steps << "  loss "
             << loss_sum / static_cast<double>(loss_count);
        if (last_validation >= 0) line << "  val exact " << last_validation;
        line.precision(0);
        line << "  " << static_cast<double>(tokens) / elapsed << " tok/s  ETA "
             << duration_text(elapsed / static_cast<double>(step) * static_cast<double>(total_steps - step));
        progress.show(line.str(), false);
        loss_sum = 0;
        loss_count = 0;
      }
      if (out_of_time) break;
    }
    // validation exact match; the best model so far is saved
    const models::dates::Scores scores = evaluate(file, data.validation, 1);
    last_validation = scores.exact_match;
    std::ostringstream line;
    line.setf(std::ios::fixed);
    line.precision(4);
    line << "epoch " << epoch << " done  step " << step << "  val exact " << scores.exact_match << "  time "
         << duration_text(seconds_since(start));
    if (scores.exact_match > best) {
      best = scores.exact_match;
      file.training = {{"epoch", epoch},
                       {"step", step},
                       {"validation_exact_match", scores.exact_match},
                       {"seconds", seconds_since(start)}};
      save_model_file(options.out, file, &adam);
      line << "  saved " << options.out;
    }
    progress.show(line.str(), true);
    if (out_of_time) std::cerr << "attend train: time limit of " << options.time_limit_minutes << " min reached\n";
  }
  std::printf("best validation exact_match: %.4f\n", best);
  return 0;
}

}  // namespace attend::app
