// `attend train`: teacher-forced training with Adam, a progress line, validation after every epoch, the best model
// saved atomically, and the training state beside it (OUT.last.safetensors) for `attend train --resume`; SIGINT and
// SIGTERM finish the step, save the state and exit (commands.hpp).
#include <cblas.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "apps/commands.hpp"
#include "apps/model_file.hpp"
#include "data/digits.hpp"
#include "models/batch.hpp"
#include "nn/checkpoint.hpp"
#include "nn/optim.hpp"

namespace attend::app {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

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

// What the training loop needs of a model and its task: how many steps an epoch has, the batches of an epoch in order,
// and the loss of one batch. The loop itself (progress, limits, signals, NaN, validation, saving, resume) is one.
class Trainee {
 public:
  virtual ~Trainee() = default;
  virtual std::size_t steps_per_epoch() const = 0;
  // The example indices of each batch of one epoch, in order; may draw from rng (the saved batch-order generator).
  virtual std::vector<std::vector<std::size_t>> epoch_order(Rng& rng) const = 0;
  // The loss of a batch of epoch `epoch`; adds the batch's output tokens (end tokens included) to `tokens`.
  virtual Variable<float> loss(Tape<float>& tape, std::size_t epoch, const std::vector<std::size_t>& batch,
                               std::size_t& tokens) = 0;
};

// Text: the training pairs as token ids, in batches of similar source length, reshuffled every epoch.
class TextTrainee : public Trainee {
 public:
  TextTrainee(models::Seq2seq<float>& model, const std::vector<data::TokenPair>& pairs, const data::Vocabulary& source,
              const data::Vocabulary& target, std::size_t batch_size)
      : model_(model), batch_size_(batch_size) {
    for (const data::TokenPair& p : pairs) {
      sources_.push_back(source.encode(p.source));
      targets_.push_back(target.encode(p.target));
      source_lengths_.push_back(sources_.back().size());
    }
  }
  std::size_t steps_per_epoch() const override { return (sources_.size() + batch_size_ - 1) / batch_size_; }
  std::vector<std::vector<std::size_t>> epoch_order(Rng& rng) const override {
    return models::bucketed_batch_order(source_lengths_, batch_size_, rng);
  }
  Variable<float> loss(Tape<float>& tape, std::size_t, const std::vector<std::size_t>& batch,
                       std::size_t& tokens) override {
    std::vector<std::vector<std::int64_t>> sources, targets;
    for (std::size_t i : batch) {
      sources.push_back(sources_[i]);
      targets.push_back(targets_[i]);
      tokens += targets_[i].size() + 1;
    }
    return model_.loss(tape, models::make_batch(sources, targets));
  }

 private:
  models::Seq2seq<float>& model_;
  std::size_t batch_size_;
  std::vector<std::vector<std::int64_t>> sources_, targets_;
  std::vector<std::size_t> source_lengths_;
};

// Digits: train_size images an epoch, composed afresh for every batch (task.hpp's training_images), in order.
class DigitsTrainee : public Trainee {
 public:
  DigitsTrainee(models::Captioner<float>& model, const TaskSpec& spec, const data::DigitImages& pool,
                std::size_t batch_size)
      : model_(model), spec_(spec), pool_(pool), batch_size_(batch_size) {}
  std::size_t steps_per_epoch() const override { return (spec_.train_size + batch_size_ - 1) / batch_size_; }
  std::vector<std::vector<std::size_t>> epoch_order(Rng&) const override {
    std::vector<std::vector<std::size_t>> order(steps_per_epoch());
    for (std::size_t i = 0; i < spec_.train_size; ++i) order[i / batch_size_].push_back(i);
    return order;
  }
  Variable<float> loss(Tape<float>& tape, std::size_t epoch, const std::vector<std::size_t>& batch,
                       std::size_t& tokens) override {
    const std::vector<data::Composed> images = training_images(spec_, pool_, epoch, batch.front(), batch.size());
    std::vector<const data::Image*> pictures;
    std::vector<std::vector<std::int64_t>> captions;
    for (const data::Composed& c : images) {
      pictures.push_back(&c.image);
      captions.push_back(data::caption_ids(c.digits));
      tokens += c.digits.size() + 1;
    }
    return model_.loss(tape, models::make_image_batch<float>(pictures, captions, model_.config()));
  }

 private:
  models::Captioner<float>& model_;
  const TaskSpec& spec_;
  const data::DigitImages& pool_;
  std::size_t batch_size_;
};

// "model bahdanau gru bidirectional, 123456 parameters" or "model patches (8×8, stride 2) → bahdanau gru, …"
std::string model_text(const ModelFile& file) {
  std::ostringstream text;
  if (file.captioner) {
    const models::CaptionerConfig& c = file.captioner->config();
    text << "model " << models::to_string(c.encoder);
    if (c.encoder == models::ImageEncoderKind::patches) {
      text << " (" << c.patch_height << "×" << c.patch_width << ", stride " << c.patch_stride << ")";
    }
    text << " → bahdanau " << nn::to_string(c.cell) << " over " << c.grid_rows() * c.grid_columns() << " positions";
  } else {
    const models::Seq2seqConfig& c = file.model->config();
    text << "model " << c.decoder_name() << " " << nn::to_string(c.cell) << (c.bidirectional ? " bidirectional" : "");
  }
  text << ", " << file.module().parameter_count() << " parameters";
  return text.str();
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

// ---- stopping on a signal --------------------------------------------------------------------------------------

// The signal that asked training to stop (SIGINT, SIGTERM), 0 while none has. The handler only records it: the step in
// progress finishes, the training state is saved, and the program exits. SA_RESETHAND puts the default action back,
// so a second Ctrl-C ends the program at once (the files on disk are still whole: every save is atomic).
volatile std::sig_atomic_t stop_signal = 0;

extern "C" void record_stop_signal(int signal_number) { stop_signal = signal_number; }

class StopSignals {
 public:
  StopSignals() {
    stop_signal = 0;
    struct sigaction action {};
    action.sa_handler = record_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

// ---- the training state -----------------------------------------------------------------------------------------

// Where training stands, saved in every file `attend train` writes (metadata "training"."state") with the optimizer's
// state, so that `--resume FILE` goes on exactly as if training had never stopped: the same batches in the same order,
// the same random numbers, the same updates.
struct TrainingState {
  std::size_t step = 0;          // optimizer steps taken
  std::size_t epoch = 1;         // the epoch in progress
  std::size_t batches_done = 0;  // of that epoch's batch order
  Rng::State epoch_order{};      // the batch-order generator before it drew this epoch's order
  double best = -1;              // best validation score so far (-1: none yet)
  std::string best_text;         // "bleu: 23.4"
  double seconds = 0;            // training time over all runs
};

nlohmann::json rng_to_json(const Rng::State& state) { return nlohmann::json(state); }

Rng::State rng_from_json(const nlohmann::json& json) { return json.get<Rng::State>(); }

// The settings a resumed run takes over (the model and the task are in the file's own metadata).
nlohmann::json options_to_json(const TrainOptions& options) {
  return {
      {"batch", options.batch_size},    {"epochs", options.epochs},         {"lr", options.learning_rate},
      {"clip", options.clip},           {"max_steps", options.max_steps},   {"time_limit", options.time_limit_minutes},
      {"log_every", options.log_every}, {"save_every", options.save_every}, {"out", options.out},
      {"decoder", options.decoder}};
}

nlohmann::json state_to_json(const TrainingState& state, const TrainOptions& options, nn::Module<float>& model) {
  nlohmann::json generators = nlohmann::json::object();
  for (const auto& [name, rng] : model.generators()) generators[name] = rng_to_json(rng->state());
  return {{"step", state.step},
          {"epoch", state.epoch},
          {"batches_done", state.batches_done},
          {"epoch_order", rng_to_json(state.epoch_order)},
          {"best", state.best},
          {"best_text", state.best_text},
          {"seconds", state.seconds},
          {"generators", generators},
          {"options", options_to_json(options)}};
}

// The options and the state saved in `file` (read by load_model_file), with the flags given now applied on top.
// Throws InputError naming the file when it holds no training state or a damaged one.
TrainingState resume_state(const ModelFile& file, const std::string& path, TrainOptions& options,
                           nn::Module<float>& model) {
  const nlohmann::json* state = nullptr;
  if (file.training.is_object() && file.training.contains("state")) state = &file.training.at("state");
  if (!state) {
    throw InputError("--resume " + path +
                     ": the file holds no training state (it was not written by `attend train` "
                     "of this version)");
  }
  TrainingState result;
  try {
    const nlohmann::json& saved = state->at("options");
    TrainOptions stored = options;  // threads, anomaly detection, resume: as given now
    stored.batch_size = saved.at("batch").get<std::size_t>();
    stored.epochs = saved.at("epochs").get<std::size_t>();
    stored.learning_rate = saved.at("lr").get<double>();
    stored.clip = saved.at("clip").get<double>();
    stored.max_steps = saved.at("max_steps").get<std::size_t>();
    stored.time_limit_minutes = saved.at("time_limit").get<double>();
    stored.log_every = saved.at("log_every").get<std::size_t>();
    stored.save_every = saved.at("save_every").get<std::size_t>();
    stored.out = saved.at("out").get<std::string>();
    stored.decoder = saved.at("decoder").get<std::string>();
    for (const std::string& flag : options.changed) {
      if (flag == "--epochs") stored.epochs = options.epochs;
      if (flag == "--max-steps") stored.max_steps = options.max_steps;
      if (flag == "--time-limit") stored.time_limit_minutes = options.time_limit_minutes;
      if (flag == "--log-every") stored.log_every = options.log_every;
      if (flag == "--save-every") stored.save_every = options.save_every;
      if (flag == "--out") stored.out = options.out;
    }
    options = stored;
    result.step = state->at("step").get<std::size_t>();
    result.epoch = state->at("epoch").get<std::size_t>();
    result.batches_done = state->at("batches_done").get<std::size_t>();
    result.epoch_order = rng_from_json(state->at("epoch_order"));
    result.best = state->at("best").get<double>();
    result.best_text = state->at("best_text").get<std::string>();
    result.seconds = state->at("seconds").get<double>();
    const nlohmann::json& generators = state->at("generators");
    const nn::NamedGenerators named = model.generators();
    if (generators.size() != named.size()) throw std::invalid_argument("the model's random generators do not match");
    for (const auto& [name, rng] : named) rng->set_state(rng_from_json(generators.at(name)));
    Rng check;
    check.set_state(result.epoch_order);
  } catch (const nlohmann::json::exception& e) {
    throw InputError("--resume " + path + ": damaged training state (" + e.what() + ")");
  } catch (const std::invalid_argument& e) {
    throw InputError("--resume " + path + ": damaged training state (" + e.what() + ")");
  }
  if (options.out.empty()) throw InputError("--resume " + path + ": damaged training state (no output file)");
  return result;
}

}  // namespace

std::string last_state_path(const std::string& out) {
  const std::size_t slash = out.find_last_of('/');
  const std::size_t name = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = out.find_last_of('.');
  if (dot == std::string::npos || dot <= name) return out + ".last";  // no extension (a leading dot is the name's)
  return out.substr(0, dot) + ".last" + out.substr(dot);
}

void set_threads(std::size_t threads) { openblas_set_num_threads(static_cast<int>(threads)); }

int run_train(const TrainOptions& given) {
  TrainOptions options = given;
  set_threads(options.threads);
  const Clock::time_point start = Clock::now();
  ModelFile file;
  TaskData data;
  TrainingState state;
  if (options.resume.empty()) {
    // the model's configuration is checked before any work (the vocabulary sizes are not known yet: any will do)
    models::Seq2seqConfig config = options.model;
    models::CaptionerConfig captioner = options.captioner;
    try {
      if (options.task.is_digits()) {
        // the model reads images of the size the task composes
        const data::ComposerOptions composer = options.task.composer(false);
        captioner.image_height = composer.height;
        captioner.image_width = composer.width;
        captioner.vocab_size = data::digit_vocabulary().size();
        captioner.validate();
      } else {
        config.set_decoder(options.decoder);
        config.source_vocab_size = config.target_vocab_size = data::Vocabulary().size();
        config.validate();
      }
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
    data = make_task_data(options.task);
    file.task = options.task;
    file.task.fingerprint = data.fingerprint;
    file.task.source_column = data.source_column;
    file.source_vocabulary = make_source_vocabulary(options.task, data);
    file.target_vocabulary = make_target_vocabulary(options.task, data);
    if (options.task.is_digits()) {
      captioner.vocab_size = file.target_vocabulary.size();
      file.captioner = std::make_unique<models::Captioner<float>>(captioner);
    } else {
      config.source_vocab_size = file.source_vocabulary.size();
      config.target_vocab_size = file.target_vocabulary.size();
      file.model = std::make_unique<models::Seq2seq<float>>(config);
    }
    state.epoch_order = Rng(options.task.seed + 7).state();
  } else {
    file = load_model_file(options.resume);
    state = resume_state(file, options.resume, options, file.module());
    check_output_path(options.out, "--out");
    data = make_task_data(file.task);  // the same data: the file's fingerprint is checked
  }
  nn::Module<float>& model = file.module();
  const std::string last_path = last_state_path(options.out);

  std::unique_ptr<Trainee> trainee;
  if (file.captioner) {
    trainee = std::make_unique<DigitsTrainee>(*file.captioner, file.task, data.train_digits, options.batch_size);
  } else {
    trainee = std::make_unique<TextTrainee>(*file.model, data.train, file.source_vocabulary, file.target_vocabulary,
                                            options.batch_size);
  }
  nn::Adam<float> adam(model.parameters(), {options.learning_rate});
  if (!options.resume.empty()) {
    // the weights again, and the optimizer's state: everything checked before anything changes
    try {
      nn::load_checkpoint(options.resume, model.parameters(), adam.state_slots());
    } catch (const std::exception& e) {
      throw InputError("--resume " + options.resume + ": no optimizer state to go on from (" + e.what() + ")");
    }
  }
  Rng order_rng;
  order_rng.set_state(state.epoch_order);
  const std::size_t steps_per_epoch = trainee->steps_per_epoch();
  const std::size_t total_steps = options.max_steps > 0 ? std::min(options.max_steps, steps_per_epoch * options.epochs)
                                                        : steps_per_epoch * options.epochs;
  if (!options.resume.empty()) {
    const std::string file_text = "--resume " + options.resume + ": ";
    if (state.batches_done > steps_per_epoch || state.epoch == 0) {
      throw InputError(file_text + "damaged training state (batch " + std::to_string(state.batches_done) +
                       " of an epoch of " + std::to_string(steps_per_epoch) + ")");
    }
    if (options.max_steps > 0 && state.step >= options.max_steps) {
      throw InputError(file_text + "training already reached its step limit of " + std::to_string(options.max_steps) +
                       "; give a larger --max-steps to go on");
    }
    if (state.epoch > options.epochs) {
      throw InputError(file_text + "training already finished its " + std::to_string(options.epochs) +
                       " epochs; give a larger --epochs to go on");
    }
  }
  // every check is done: from here on, output (an error is the only line when nothing ran)
  std::cerr << "attend train: " << data.summary << "\n";
  if (!options.resume.empty()) {
    std::cerr << "attend train: resuming " << options.resume << " at step " << state.step << " (epoch " << state.epoch
              << ", batch " << state.batches_done << ")\n";
  }
  const std::size_t log_every = options.log_every ? options.log_every : std::max<std::size_t>(1, steps_per_epoch / 20);
  Progress progress(isatty(STDERR_FILENO) != 0);

  std::cerr << "attend train: task " << file.task.name << ", ";
  if (file.captioner) {
    std::cerr << file.task.train_size << " training images an epoch, " << data.validation.size() << " validation; ";
  } else {
    std::cerr << data.train.size() << " training pairs, " << data.validation.size() << " validation; vocabularies "
              << file.source_vocabulary.size() << " → " << file.target_vocabulary.size() << "; ";
  }
  std::cerr << model_text(file) << "; " << options.epochs << " epochs of " << steps_per_epoch << " steps\n";

  // Saves the model with the optimizer and the training state. A failed save throws and leaves the file as it was.
  const double seconds_before = state.seconds;
  const Clock::time_point train_start = Clock::now();
  auto save = [&](const std::string& path, nlohmann::json training) {
    state.seconds = seconds_before + seconds_since(train_start);
    training["state"] = state_to_json(state, options, model);
    file.training = std::move(training);
    save_model_file(path, file, &adam);
  };
  // What is on disk, for messages when training stops early.
  std::size_t last_saved_step = 0;
  bool last_saved = false;
  auto save_last = [&]() {
    save(last_path, {{"epoch", state.epoch}, {"step", state.step}});
    last_saved = true;
    last_saved_step = state.step;
  };
  auto saved_files = [&]() {
    std::string text = state.best >= 0
                           ? "the best model so far (validation " + state.best_text + ") is in " + options.out
                           : "no best model was saved yet (no epoch had finished)";
    if (last_saved) text += ", the training state of step " + std::to_string(last_saved_step) + " in " + last_path;
    return text;
  };

  StopSignals signals;
  Tape<float> tape;
  tape.set_retain_gradients(false);  // nothing reads an intermediate gradient: backward frees each once used
  tape.set_anomaly_detection(options.detect_anomaly);
  const std::size_t first_step = state.step;
  std::size_t tokens = 0;
  double loss_sum = 0;
  std::size_t loss_count = 0;
  std::string last_validation;  // "bleu: 23.4" after the first epoch
  bool stop = false;            // the time or step limit is reached, or a signal came
  bool out_of_steps = false;
  bool out_of_time = false;
  double last_shown = 0;
  while (state.epoch <= options.epochs && !stop) {
    model.train();
    state.epoch_order = order_rng.state();
    const std::vector<std::vector<std::size_t>> order = trainee->epoch_order(order_rng);
    for (; state.batches_done < order.size() && !stop; ++state.batches_done) {
      if (stop_signal) break;  // one before the first step of this run
      tape.clear();
      adam.zero_grad();
      float value = 0, norm = 0;
      try {
        Variable<float> loss = trainee->loss(tape, state.epoch, order[state.batches_done], tokens);
        tape.backward(loss);
        norm = options.clip > 0 ? nn::clip_grad_norm(model.parameters(), options.clip) : 0.0f;
        value = loss.value().item();
      } catch (const std::runtime_error& e) {  // anomaly detection names the op
        throw std::runtime_error("step " + std::to_string(state.step + 1) + ": " + e.what() + "; " + saved_files());
      }
      if (!std::isfinite(value) || !std::isfinite(norm)) {
        // the update is not made: nothing saved holds a NaN
        std::ostringstream what;
        what << "training diverged at step " << state.step + 1 << " (loss " << value << ", gradient norm " << norm
             << "); " << saved_files() << "; try a lower --lr or --clip, or --detect-anomaly to find the op";
        throw std::runtime_error(what.str());
      }
      adam.step();
      ++state.step;
      loss_sum += value;
      ++loss_count;
      const double elapsed = seconds_since(train_start);
      if (options.time_limit_minutes > 0 && elapsed > options.time_limit_minutes * 60) stop = out_of_time = true;
      if (options.max_steps > 0 && state.step >= options.max_steps) stop = out_of_steps = true;
      if (stop_signal) stop = true;
      // a terminal gets the line rewritten about four times a second; a log gets a line every log_every steps
      const bool due = progress.terminal() ? elapsed - last_shown >= 0.25 : state.step % log_every == 0;
      if (due || stop) {
        last_shown = elapsed;
        std::ostringstream line;
        line.setf(std::ios::fixed);
        line.precision(4);
        line << "epoch " << state.epoch << "/" << options.epochs << "  step " << state.step << "/" << total_steps
             << "  loss " << loss_sum / static_cast<double>(loss_count);
        if (!last_validation.empty()) line << "  val " << last_validation;
        line.precision(0);
        const double done = static_cast<double>(state.step - first_step);
        line << "  " << static_cast<double>(tokens) / elapsed << " tok/s  ETA "
             << duration_text(total_steps > state.step ? elapsed / done * static_cast<double>(total_steps - state.step)
                                                       : 0);
        progress.show(line.str(), false);
        loss_sum = 0;
        loss_count = 0;
      }
      if (options.save_every > 0 && state.step % options.save_every == 0 && !stop) save_last();
    }
    if (stop_signal) {
      save_last();
      if (progress.terminal()) std::cerr << "\n";
      std::cerr << "attend train: stopped by " << (stop_signal == SIGINT ? "SIGINT" : "SIGTERM") << " after step "
                << state.step << "; the training state is in " << last_path << " (go on with: attend train --resume "
                << last_path << ")"
                << (state.best >= 0 ? "; the best model (validation " + state.best_text + ") in " + options.out : "")
                << "\n";
      return 128 + stop_signal;
    }
    // the end of the epoch, or of training: validation score (dates, digits: exact match; pairs: BLEU); the best model
    // is saved
    const bool epoch_done = state.batches_done == order.size();
    const std::size_t epoch = state.epoch;
    if (epoch_done) {
      ++state.epoch;
      state.batches_done = 0;
      state.epoch_order = order_rng.state();
    }
    const Scores scores = evaluate(file, data.validation, {1, 0, 1.0});
    const auto& [metric, value] = scores.front();
    last_validation = format_score(metric, value);
    std::ostringstream line;
    line << "epoch " << epoch << (epoch_done ? " done" : " stopped") << "  step " << state.step << "  val "
         << last_validation << "  time " << duration_text(seconds_since(start));
    if (value > state.best) {
      state.best = value;
      state.best_text = last_validation;
      save(
          options.out,
          {{"epoch", epoch}, {"step", state.step}, {"validation_" + metric, value}, {"seconds", seconds_since(start)}});
      line << "  saved " << options.out;
    }
    save_last();
    progress.show(line.str(), true);
    if (out_of_steps) {
      std::cerr << "attend train: step limit of " << options.max_steps << " reached\n";
    } else if (out_of_time) {
      std::cerr << "attend train: time limit of " << options.time_limit_minutes << " min reached\n";
    }
  }
  std::printf("best validation %s\n", state.best_text.c_str());
  return 0;
}

}  // namespace attend::app
