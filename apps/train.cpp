// `attend train`: teacher-forced training with Adam, a progress line, validation after every epoch, the best model
// saved atomically, and the training state beside it (OUT.last.safetensors, training_state.hpp) for `attend train
// --resume`; SIGINT and SIGTERM finish the step, save the state and exit (commands.hpp). run_train reads as the loop
// it is; each step it names is a function below.
#include <cblas.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "apps/commands.hpp"
#include "apps/model_file.hpp"
#include "apps/ranks.hpp"
#include "apps/training_state.hpp"
#include "io/atomic_file.hpp"
#include "nn/checkpoint.hpp"
#include "nn/optim.hpp"
#include "nn/parallel.hpp"
#include "nn/trainer.hpp"
#include "runtime/clock.hpp"

namespace attend::app {

namespace {

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

// One progress line: rewritten in place on a terminal, printed as plain lines otherwise.
class Progress {
 public:
  explicit Progress(bool terminal) : terminal_(terminal) {}
  void show(const std::string& line, bool keep) {
    if (silent) return;
    if (terminal_) {
      std::cerr << "\r\033[K" << line << (keep ? "\n" : "") << std::flush;
    } else {
      std::cerr << line << "\n" << std::flush;
    }
  }
  bool terminal() const { return terminal_; }
  bool silent = false;  // the ranks of a run on several processes but rank 0

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

// ---- a training run ---------------------------------------------------------------------------------------------

// --timings: where this process's training steps spent their time, in seconds summed over the steps of this run.
// Each phase on the wall clock (nn::StepTimes for those inside BatchParallel::step); `waiting` in thread-seconds.
struct StepTimings {
  std::size_t steps = 0;
  double whole = 0;  // the steps from start to end (not the progress lines, saving or validation)
  double batches = 0, forward = 0, backward = 0, sums = 0, processes = 0, optimizer = 0, waiting = 0;
};

// Everything one run of `attend train` works with: the model file, its data and batches, the optimizer, where
// training stands, the progress shown and what is on disk.
struct Run {
  TrainSettings settings;
  ModelFile file;
  std::unique_ptr<TaskData> data;
  std::unique_ptr<Batches> batches;
  std::unique_ptr<nn::Adam<float>> adam;
  std::unique_ptr<nn::NoamLR> warmup;     // --warmup: sets adam's lr before every step
  double step_lr = 0;                     // the learning rate of the last step (for the progress line)
  std::unique_ptr<nn::MultiStepLR> drop;  // --lr-drop: the steps after its milestone run at --lr / 10
  std::unique_ptr<Products> products;     // of --precision: what the steps' products compute
  TrainingState state;
  Rng order_rng;             // the batch-order generator
  std::string resumed_from;  // empty: a new training
  std::string last_path;     // the training state's file
  std::size_t steps_per_epoch = 0, total_steps = 0, log_every = 1;
  std::size_t curve_every = 1;  // the training curve's loss: the mean of each window of this many steps
  Clock::time_point start = Clock::now(), train_start = Clock::now();
  double seconds_before = 0;  // training time of earlier runs
  Progress progress{isatty(STDERR_FILENO) != 0};
  const Ranks& ranks = Ranks::world();          // the processes of the run (mpirun), each with its threads
  std::unique_ptr<ProcessShards> shards;        // the batch's rows over the processes and their threads
  std::unique_ptr<nn::Trainer<float>> trainer;  // the step: models::train's, on the shards
  std::size_t first_step = 0, tokens = 0, loss_count = 0, last_saved_step = 0;
  double loss_sum = 0, last_shown = 0;
  double validation_seconds = 0;            // of this run's validations: tok/s counts the training steps' time only
  std::string last_validation;              // "bleu: 23.4" after the first epoch
  std::size_t threads_saved = 0;            // a resumed run: the thread count it was trained on
  std::string precision_saved = "float32";  // and the precision of its products
  std::size_t ranks_saved = 0;              // and its processes
  bool last_saved = false;                  // the training state is on disk (of last_saved_step)
  bool show_timings = false;                // --timings
  StepTimings timings;
  bool out_of_steps = false, out_of_time = false;
  // the stop signal as every process saw it after the last step (one process: stop_signal then); decisions read this,
  // never stop_signal itself, so that processes never part ways over a signal that came between two checks
  int signal = 0;
  bool stop() const { return out_of_steps || out_of_time || signal != 0; }
};

// "… the best model so far (validation …) is in OUT, the training state of step N in OUT.last…", for errors.
std::string saved_files(const Run& run) {
  std::string text = run.state.best >= 0
                         ? "the best model so far (validation " + run.state.best_text + ") is in " + run.settings.out
                         : "no best model was saved yet (no epoch had finished)";
  if (run.last_saved) {
    text += ", the training state of step " + std::to_string(run.last_saved_step) + " in " + run.last_path;
  }
  return text;
}

// Refuses to replace a model file that --out names (or its training state, or its curve) unless --force: a trained
// model is not silently lost to a new run. A resumed run writes over its own files.
void check_not_replacing_model(const std::string& out, const std::string& own_out, bool force) {
  if (out != own_out) check_not_replacing("--out", out, {out, last_state_path(out), curve_path(out)}, force);
}

// A new training: the configuration checked before any work, then the data, the vocabularies and the model.
void build(Run& run, const TrainOptions& options) {
  run.settings = options.settings;
  run.settings.ranks = run.ranks.size();
  check_not_replacing_model(run.settings.out, "", options.force);
  try {
    options.model->check(*options.task);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  run.data = options.task->make_data();
  run.file = new_model_file(*options.task, *options.model, *run.data);
  run.state.epoch_order = Rng(options.task->settings.seed + 7).state();
}

// A resumed training: the file, its state and settings (with the flags given now), and the same data. When --out
// moves the best model elsewhere, the best so far is copied there first, so that --out always holds the best model.
void resume(Run& run, const TrainOptions& options) {
  run.resumed_from = options.resume;
  run.file = load_model_file(options.resume);
  run.state = resume_state(run.file, options.resume, options.overrides, run.settings);
  const TrainSettings saved = TrainSettings::from_json(run.file.training["state"]["options"]);
  run.threads_saved = saved.threads;
  run.ranks_saved = saved.ranks;
  run.precision_saved = saved.precision;
  if (const std::string why = find_precision(run.settings.precision)->unavailable(); !why.empty()) {
    throw InputError("--resume " + options.resume + ": the run trains with --precision " + run.settings.precision +
                     ", but " + why + " (--precision float32 goes on in float32)");
  }
  run.settings.ranks = run.ranks.size();
  check_output_path(run.settings.out, "--out");
  const std::string saved_out = TrainSettings::from_json(run.file.training["state"]["options"]).out;
  check_not_replacing_model(run.settings.out, saved_out, options.force);
  run.data = run.file.task->make_data();  // the same data: the file's fingerprint is checked
  if (run.ranks.lead() && run.settings.out != saved_out && run.state.best >= 0 && file_exists(saved_out)) {
    std::ifstream in(saved_out, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    write_file_atomically(run.settings.out, bytes);
  }
}

// The batches, the optimizer (on resume with its saved state), and the checks a resumed state must pass.
void prepare(Run& run, const TrainOptions& options) {
  nn::Module<float>& model = run.file.model->module();
  // every product of the steps, on every shard's tape (the precision was checked before)
  run.products = make_products(run.settings.precision, matrices_of(model.parameters()));
  run.last_path = last_state_path(run.settings.out);
  run.batches = run.file.task->batches(*run.data, run.file.source_vocabulary, run.file.target_vocabulary,
                                       run.settings.batch_size);
  run.adam = std::make_unique<nn::Adam<float>>(model.parameters(), nn::AdamOptions{run.settings.learning_rate});
  if (!run.resumed_from.empty()) {
    // the weights again, and the optimizer's state: everything checked before anything changes
    try {
      nn::load_checkpoint(run.resumed_from, model.parameters(), run.adam->state_slots());
    } catch (const std::exception& e) {
      throw InputError("--resume " + run.resumed_from + ": no optimizer state to go on from (" + e.what() + ")");
    }
  }
  if (run.settings.warmup > 0) {
    // η(s) = lr · min(s / w, √(w / s)): Noam's schedule with d = 1 and the factor that puts its peak at --lr; its
    // state is the step, so a resumed run gets the same η
    const auto w = static_cast<std::int64_t>(run.settings.warmup);
    run.warmup =
        std::make_unique<nn::NoamLR>(*run.adam, 1, w, run.settings.learning_rate * std::sqrt(static_cast<double>(w)));
    run.warmup->load_state({static_cast<std::int64_t>(run.state.step) + 1});
  }
  run.order_rng.set_state(run.state.epoch_order);
  run.steps_per_epoch = run.batches->steps_per_epoch();
  const std::size_t all = run.steps_per_epoch * run.settings.epochs;
  run.total_steps = run.settings.max_steps > 0 ? std::min(run.settings.max_steps, all) : all;
  // a fraction of the epochs' steps: --max-steps and --time-limit stop a run without moving it, so a run stopped
  // early and resumed keeps the schedule of the whole (a resume that changes --epochs moves it)
  if (run.settings.lr_drop > 0) {
    const auto milestone = static_cast<std::int64_t>(std::ceil(run.settings.lr_drop * static_cast<double>(all)));
    run.drop = std::make_unique<nn::MultiStepLR>(*run.adam, std::vector<std::int64_t>{milestone}, 0.1);
    run.drop->load_state({static_cast<std::int64_t>(run.state.step)});
  }
  run.log_every = run.settings.log_every ? run.settings.log_every : std::max<std::size_t>(1, run.steps_per_epoch / 20);
  run.curve_every = std::max<std::size_t>(1, run.steps_per_epoch / 10);
  run.show_timings = options.timings;
  run.progress.silent = !run.ranks.lead();
  run.shards = std::make_unique<ProcessShards>(run.ranks, run.settings.threads, run.file.task->settings.seed,
                                               options.detect_anomaly, run.products.get());
  run.trainer = std::make_unique<nn::Trainer<float>>(*run.adam, *run.shards, run.settings.clip);
  if (run.warmup) run.trainer->add_schedule(*run.warmup);
  if (run.drop) run.trainer->add_schedule(*run.drop);
  run.first_step = run.state.step;
  run.seconds_before = run.state.seconds;
  if (run.resumed_from.empty()) return;
  const std::string file_text = "--resume " + run.resumed_from + ": ";
  if (run.state.batches_done > run.steps_per_epoch || run.state.epoch == 0) {
    throw InputError(file_text + "damaged training state (batch " + std::to_string(run.state.batches_done) +
                     " of an epoch of " + std::to_string(run.steps_per_epoch) + ")");
  }
  if (run.settings.max_steps > 0 && run.state.step >= run.settings.max_steps) {
    throw InputError(file_text + "training already reached its step limit of " +
                     std::to_string(run.settings.max_steps) + "; give a larger --max-steps to go on");
  }
  if (run.state.epoch > run.settings.epochs) {
    throw InputError(file_text + "training already finished its " + std::to_string(run.settings.epochs) +
                     " epochs; give a larger --epochs to go on");
  }
}

// Every check is done: from here on, output (an error is the only line when nothing ran); rank 0's alone.
void announce(Run& run) {
  run.train_start = Clock::now();
  if (!run.ranks.lead()) return;
  const Task& task = *run.file.task;
  std::cerr << "attend train: " << run.data->summary << "\n";
  if (!run.resumed_from.empty()) {
    std::cerr << "attend train: resuming " << run.resumed_from << " at step " << run.state.step << " (epoch "
              << run.state.epoch << ", batch " << run.state.batches_done << ")\n";
  }
  std::cerr << "attend train: task " << task.name() << ", "
            << task.training_summary(*run.data, run.file.source_vocabulary, run.file.target_vocabulary)
            << run.file.model->describe() << ", " << run.file.model->module().parameter_count() << " parameters; "
            << run.settings.epochs << (run.settings.epochs == 1 ? " epoch of " : " epochs of ") << run.steps_per_epoch
            << " steps; " << run.settings.threads << (run.settings.threads == 1 ? " thread" : " threads");
  if (run.ranks.size() > 1) std::cerr << " on each of " << run.ranks.size() << " processes";
  if (run.settings.precision != "float32") std::cerr << "; products in " << run.settings.precision;
  std::cerr << "\n";
  if (run.threads_saved != 0 && run.threads_saved != run.settings.threads) {
    std::cerr << "attend train: --threads " << run.settings.threads << " where the saved run had " << run.threads_saved
              << ": training goes on, but from here the float sums (and the random numbers of dropout) differ from "
                 "that run's, so the result is not the bits an uninterrupted run would have given\n";
  }
  if (!run.resumed_from.empty() && run.precision_saved != run.settings.precision) {
    std::cerr << "attend train: --precision " << run.settings.precision << " where the saved run had "
              << run.precision_saved
              << ": training goes on, but the result is not the bits an uninterrupted run would have given\n";
  }
  if (run.ranks_saved != 0 && run.ranks_saved != run.ranks.size()) {
    std::cerr << "attend train: " << run.ranks.size() << (run.ranks.size() == 1 ? " process" : " processes")
              << " where the saved run had " << run.ranks_saved
              << ": training goes on, but the result is not the bits an uninterrupted run would have given\n";
  }
}

// Saves the model with the optimizer and the training state. A failed save throws and leaves the file as it was.
void save(Run& run, const std::string& path, nlohmann::json training) {
  if (!run.ranks.lead()) return;  // rank 0 writes every file
  run.state.seconds = run.seconds_before + seconds_since(run.train_start);
  training["state"] = state_to_json(run.state, run.settings, run.file.model->module());
  run.file.training = std::move(training);
  save_model_file(path, run.file, run.adam.get());
}

void save_last(Run& run) {
  save(run, run.last_path, {{"epoch", run.state.epoch}, {"step", run.state.step}});
  run.last_saved = true;
  run.last_saved_step = run.state.step;
}

// The loss of rows [first, last) of a batch: the whole batch, or a shard of it weighted by its target tokens.
nn::ShardLoss<float> rows_loss(Model& model, const TrainingBatch& batch, Tape<float>& tape, std::size_t first,
                               std::size_t last) {
  if (first == 0 && last == batch.rows()) return {model.loss(tape, batch), static_cast<double>(batch.tokens)};
  const TrainingBatch shard = shard_of(batch, first, last);
  return {model.loss(tape, shard), static_cast<double>(shard.tokens)};
}

// One optimizer step on a batch: nn::Trainer's step (models::train's) on this run's shards. A loss or gradient that is
// not finite stops training before the update.
void train_step(Run& run, std::size_t epoch, const std::vector<std::size_t>& indices) {
  const Clock::time_point start = Clock::now();
  nn::StepReport<float> step;
  run.step_lr = run.adam->lr;
  try {
    const TrainingBatch batch = run.batches->batch(epoch, indices);
    run.timings.batches += seconds_since(start);
    run.tokens += batch.tokens;
    const auto loss = [&](Tape<float>& tape, std::size_t first, std::size_t last) {
      return rows_loss(*run.file.model, batch, tape, first, last);
    };
    step = run.trainer->step(batch.rows(), loss);
  } catch (const std::runtime_error& e) {  // anomaly detection names the op
    throw std::runtime_error("step " + std::to_string(run.state.step + 1) + ": " + e.what() + "; " + saved_files(run));
  }
  if (!step.updated) {
    // nothing saved holds a NaN
    std::ostringstream what;
    what << "training diverged at step " << run.state.step + 1 << " (loss " << step.loss << ", gradient norm "
         << step.norm << "); " << saved_files(run)
         << "; try a lower --lr or --clip, or --detect-anomaly to find the op";
    throw std::runtime_error(what.str());
  }
  const ProcessShards::Times& times = run.shards->last_times();
  run.timings.forward += times.shards.forward, run.timings.backward += times.shards.backward;
  run.timings.sums += times.shards.sums, run.timings.waiting += times.shards.waiting;
  run.timings.processes += times.processes;
  run.timings.optimizer += seconds_since(run.shards->finished());
  ++run.state.step;
  run.loss_sum += step.loss;
  run.state.curve.add_loss(run.state.step, step.loss, run.curve_every);
  ++run.loss_count;
  run.timings.whole += seconds_since(start);
  ++run.timings.steps;
}

// --timings, once this run's steps are over: one line with the mean milliseconds a step of each phase.
void report_timings(const Run& run) {
  const StepTimings& t = run.timings;
  if (!run.show_timings || !run.ranks.lead() || t.steps == 0) return;
  const double ms = 1e3 / static_cast<double>(t.steps);
  const double parts = t.batches + t.forward + t.backward + t.sums + t.processes + t.optimizer;
  std::ostringstream line;
  line.setf(std::ios::fixed);
  line.precision(3);
  line << "attend train: timings, ms a step over " << t.steps << " steps: step " << t.whole * ms << " = batch "
       << t.batches * ms << " + forward " << t.forward * ms << " + backward " << t.backward * ms << " + gradient sums "
       << t.sums * ms;
  if (run.ranks.size() > 1) line << " + processes " << t.processes * ms;
  line << " + optimizer " << t.optimizer * ms << " + rest " << (t.whole - parts) * ms << "; shards waiting for the "
       << "slowest " << t.waiting * ms << " (thread-ms)\n";
  if (const std::string report = run.products->report(); !report.empty()) {
    line << "attend train: products in " << run.settings.precision << ": " << report << "\n";
  }
  std::cerr << line.str();
}

// The limits after a step, and the progress line: a terminal gets it rewritten about four times a second, a log a
// line every log_every steps.
void after_step(Run& run) {
  const double elapsed = seconds_since(run.train_start);
  const TrainSettings& s = run.settings;
  // rank 0's clock decides the time limit; a signal to any process stops them all after this step
  if (run.ranks.lead() && s.time_limit_minutes > 0 && elapsed > s.time_limit_minutes * 60) run.out_of_time = true;
  run.signal = stop_signal;
  if (run.ranks.size() > 1) {
    run.out_of_time = run.ranks.max(run.out_of_time ? 1 : 0) != 0;
    run.signal = run.ranks.max(run.signal);
  }
  if (s.max_steps > 0 && run.state.step >= s.max_steps) run.out_of_steps = true;
  const bool due = run.progress.terminal() ? elapsed - run.last_shown >= 0.25 : run.state.step % run.log_every == 0;
  if (due || run.stop()) {
    run.last_shown = elapsed;
    std::ostringstream line;
    line.setf(std::ios::fixed);
    line.precision(4);
    line << "epoch " << run.state.epoch << "/" << s.epochs << "  step " << run.state.step << "/" << run.total_steps
         << "  loss " << run.loss_sum / static_cast<double>(run.loss_count);
    if (!run.last_validation.empty()) line << "  val " << run.last_validation;
    if (run.warmup || run.drop) line << "  lr " << std::setprecision(1) << std::scientific << run.step_lr << std::fixed;
    line.precision(0);
    const double done = static_cast<double>(run.state.step - run.first_step);
    const double left = static_cast<double>(run.total_steps - std::min(run.total_steps, run.state.step));
    line << "  " << static_cast<double>(run.tokens) / (elapsed - run.validation_seconds) << " tok/s  ETA "
         << duration_text(left > 0 ? elapsed / done * left : 0);
    run.progress.show(line.str(), false);
    run.loss_sum = 0;
    run.loss_count = 0;
  }
  if (s.save_every > 0 && run.state.step % s.save_every == 0 && !run.stop()) save_last(run);
}

// The steps of the epoch in progress, from where it stands, until it ends or a limit or a signal stops training.
// Returns the number of batches the epoch has.
std::size_t train_epoch(Run& run) {
  run.file.model->module().train();
  run.state.epoch_order = run.order_rng.state();
  const std::vector<std::vector<std::size_t>> order = run.batches->epoch_order(run.order_rng);
  while (run.state.batches_done < order.size() && run.signal == 0) {
    train_step(run, run.state.epoch, order[run.state.batches_done]);
    ++run.state.batches_done;
    after_step(run);
    if (run.stop()) break;
  }
  return order.size();
}

// The end of an epoch, or of training: the validation score (the task's first score), the best model saved at --out,
// and the training state.
void validate_and_save(Run& run, std::size_t batches_in_epoch) {
  const bool epoch_done = run.state.batches_done == batches_in_epoch;
  const std::size_t epoch = run.state.epoch;
  if (epoch_done) {
    ++run.state.epoch;
    run.state.batches_done = 0;
    run.state.epoch_order = run.order_rng.state();
  }
  if (!run.ranks.lead()) return;  // rank 0 validates and saves; the others wait for it at the next step
  const Clock::time_point validation_start = Clock::now();
  set_threads(run.settings.threads);  // a lone batch's products shared by OpenBLAS's threads
  // validated in float32 (no products given) whatever the steps' precision, as `attend eval` scores the saved model
  // (and as PyTorch's autocast covers the training step only)
  models::SearchOptions greedy{1, 0, 1.0};
  greedy.scores = false;                  // the outputs are scored, not their probabilities
  greedy.threads = run.settings.threads;  // batches decoded that many at a time (decode_batches)
  const Scores scores = evaluate(run.file, run.data->validation, greedy);
  set_threads(1);  // the steps' shards, one OpenBLAS thread each
  run.validation_seconds += seconds_since(validation_start);
  const auto& [metric, value] = scores.front();
  run.last_validation = format_score(metric, value);
  run.state.curve.validation.emplace_back(run.state.step, value);
  run.state.curve.metric = metric;
  std::ostringstream line;
  line << "epoch " << epoch << (epoch_done ? " done" : " stopped") << "  step " << run.state.step << "  val "
       << run.last_validation << "  time " << duration_text(seconds_since(run.start));
  if (value > run.state.best) {
    run.state.best = value;
    run.state.best_text = run.last_validation;
    save(run, run.settings.out,
         {{"epoch", epoch},
          {"step", run.state.step},
          {"validation_" + metric, value},
          {"seconds", seconds_since(run.start)}});
    line << "  saved " << run.settings.out;
  }
  save_last(run);
  const std::string name = run.settings.out.substr(run.settings.out.find_last_of('/') + 1);
  write_file_atomically(curve_path(run.settings.out), curve_svg(run.state.curve, run.steps_per_epoch, name));
  run.progress.show(line.str(), true);
  if (run.out_of_steps) {
    std::cerr << "attend train: step limit of " << run.settings.max_steps << " reached\n";
  } else if (run.out_of_time) {
    std::cerr << "attend train: time limit of " << run.settings.time_limit_minutes << " min reached\n";
  }
}

// SIGINT or SIGTERM: the state saved, where it is and how to go on said, exit status 128 + the signal.
int stopped_by_signal(Run& run) {
  save_last(run);
  if (!run.ranks.lead()) return 128 + run.signal;
  if (run.progress.terminal()) std::cerr << "\n";
  report_timings(run);
  std::cerr << "attend train: stopped by " << (run.signal == SIGINT ? "SIGINT" : "SIGTERM") << " after step "
            << run.state.step << "; the training state is in " << run.last_path << " (go on with: "
            << (run.ranks.size() > 1 ? "mpirun -np " + std::to_string(run.ranks.size()) + " " : std::string())
            << "attend train --resume " << run.last_path << ")"
            << (run.state.best >= 0 ? "; the best model (validation " + run.state.best_text + ") in " + run.settings.out
                                    : "")
            << "\n";
  return 128 + run.signal;
}

// A resumed run that never beat the best of the file it went on from, and could not copy it: --out gets this run's
// model, so that it is never missing when training ends.
void ensure_best_model(Run& run) {
  if (!run.ranks.lead() || file_exists(run.settings.out)) return;
  save(run, run.settings.out, {{"epoch", run.state.epoch}, {"step", run.state.step}});
  std::cerr << "attend train: the best model of the run resumed was not found; " << run.settings.out
            << " holds the model of step " << run.state.step << "\n";
}

}  // namespace

void set_threads(std::size_t threads) { openblas_set_num_threads(static_cast<int>(threads)); }

std::size_t available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<std::size_t>(online) : 1;
}

int run_train(const TrainOptions& options) {
  set_threads(1);  // each shard's thread calls OpenBLAS with one thread: the shards are the parallelism
  Run run;
  if (options.resume.empty()) {
    build(run, options);
  } else {
    resume(run, options);
  }
  prepare(run, options);
  announce(run);
  StopSignals signals;
  while (run.state.epoch <= run.settings.epochs && !run.stop()) {
    const std::size_t batches_in_epoch = train_epoch(run);
    if (run.signal != 0) return stopped_by_signal(run);
    validate_and_save(run, batches_in_epoch);
  }
  ensure_best_model(run);
  report_timings(run);
  if (run.ranks.lead()) std::printf("best validation %s\n", run.state.best_text.c_str());
  return 0;
}

}  // namespace attend::app
