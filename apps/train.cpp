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

Encoded encode_pairs(const std::vector<models::TokenPair>& pairs, const models::Vocabulary& source,
                     const models::Vocabulary& target) {
  Encoded encoded;
  for (const models::TokenPair& p : pairs) {
    encoded.sources.push_back(source.encode(p.source));
    encoded.targets.push_back(target.encode(p.target));
  }
  return encoded;
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

std::string last_state_path(const std::string& out) {
  const std::size_t slash = out.find_last_of('/');
  const std::size_t name = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = out.find_last_of('.');
  if (dot == std::string::npos || dot <= name) return out + ".last";  // no extension (a leading dot is the name's)
  return out.substr(0, dot) + ".last" + out.substr(dot);
}

void set_threads(std::size_t threads) { openblas_set_num_threads(static_cast<int>(threads)); }

int run_train(const TrainOptions& options) {
  set_threads(options.threads);
  const Clock::time_point start = Clock::now();
  // the model's configuration is checked before any work (the vocabulary sizes are not known yet: any will do)
  models::Seq2seqConfig config = options.model;
  config.set_decoder(options.decoder);
  config.source_vocab_size = config.target_vocab_size = models::Vocabulary().size();
  try {
    config.validate();
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  const TaskData data = make_task_data(options.task);
  std::cerr << "attend train: " << data.summary << "\n";

  ModelFile file;
  file.task = options.task;
  file.task.fingerprint = data.fingerprint;
  file.task.source_column = data.source_column;
  file.source_vocabulary = make_source_vocabulary(options.task, data);
  file.target_vocabulary = make_target_vocabulary(options.task, data);
  config.source_vocab_size = file.source_vocabulary.size();
  config.target_vocab_size = file.target_vocabulary.size();
  file.model = std::make_unique<models::Seq2seq<float>>(config);
  models::Seq2seq<float>& model = *file.model;

  const Encoded train = encode_pairs(data.train, file.source_vocabulary, file.target_vocabulary);
  std::vector<std::size_t> source_lengths;
  for (const auto& s : train.sources) source_lengths.push_back(s.size());
  nn::Adam<float> adam(model.parameters(), {options.learning_rate});
  Rng order_rng(options.task.seed + 7);
  const std::size_t steps_per_epoch = (train.sources.size() + options.batch_size - 1) / options.batch_size;
  const std::size_t total_steps = options.max_steps > 0 ? std::min(options.max_steps, steps_per_epoch * options.epochs)
                                                        : steps_per_epoch * options.epochs;
  const std::size_t log_every = options.log_every ? options.log_every : std::max<std::size_t>(1, steps_per_epoch / 20);
  Progress progress(isatty(STDERR_FILENO) != 0);

  std::cerr << "attend train: task " << options.task.name << ", " << data.train.size() << " training pairs, "
            << data.validation.size() << " validation; vocabularies " << file.source_vocabulary.size() << " → "
            << file.target_vocabulary.size() << "; model " << config.decoder_name() << " "
            << nn::to_string(config.cell) << (config.bidirectional ? " bidirectional" : "") << ", "
            << model.parameter_count() << " parameters; " << options.epochs << " epochs of " << steps_per_epoch
            << " steps\n";

  Tape<float> tape;
  tape.set_retain_gradients(false);  // nothing reads an intermediate gradient: backward frees each once used
  double best = -1;
  std::string best_line;
  std::size_t step = 0;
  std::size_t tokens = 0;
  double loss_sum = 0;
  std::size_t loss_count = 0;
  std::string last_validation;  // "bleu: 23.4" after the first epoch
  bool out_of_time = false;  // the time or step limit is reached
  bool out_of_steps = false;
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
      if (options.max_steps > 0 && step >= options.max_steps) out_of_time = out_of_steps = true;
      // a terminal gets the line rewritten about four times a second; a log gets a line every log_every steps
      const bool due = progress.terminal() ? elapsed - last_shown >= 0.25 : step % log_every == 0;
      if (due || out_of_time) {
        last_shown = elapsed;
        std::ostringstream line;
        line.setf(std::ios::fixed);
        line.precision(4);
        line << "epoch " << epoch << "/" << options.epochs << "  step " << step << "/" << total_steps << "  loss "
             << loss_sum / static_cast<double>(loss_count);
        if (!last_validation.empty()) line << "  val " << last_validation;
        line.precision(0);
        line << "  " << static_cast<double>(tokens) / elapsed << " tok/s  ETA "
             << duration_text(elapsed / static_cast<double>(step) * static_cast<double>(total_steps - step));
        progress.show(line.str(), false);
        loss_sum = 0;
        loss_count = 0;
      }
      if (out_of_time) break;
    }
    // validation score (dates: exact match; pairs: BLEU); the best model so far is saved
    const Scores scores = score_outputs(file.task, predict_examples(file, data.validation, {1, 0, 1.0}), data.validation);
    const auto& [metric, value] = scores.front();
    last_validation = format_score(metric, value);
    std::ostringstream line;
    line << "epoch " << epoch << " done  step " << step << "  val " << last_validation << "  time "
         << duration_text(seconds_since(start));
    if (value > best) {
      best = value;
      file.training = {{"epoch", epoch}, {"step", step}, {"validation_" + metric, value}, {"seconds", seconds_since(start)}};
      save_model_file(options.out, file, &adam);
      line << "  saved " << options.out;
      best_line = format_score(metric, value);
    }
    progress.show(line.str(), true);
    if (out_of_steps) {
      std::cerr << "attend train: step limit of " << options.max_steps << " reached\n";
    } else if (out_of_time) {
      std::cerr << "attend train: time limit of " << options.time_limit_minutes << " min reached\n";
    }
  }
  std::printf("best validation %s\n", best_line.c_str());
  return 0;
}

}  // namespace attend::app
