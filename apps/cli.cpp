// The `attend` program's command line (cli.hpp): every subcommand's flags in a function of its own, and running a
// parsed line with the program's error contract. A task's and a model kind's own flags are theirs (task.hpp,
// model.hpp): every registered one adds its flags, and after parsing those of the ones not chosen are refused.
#include "apps/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>

#include "apps/flags.hpp"
#include "apps/model_file.hpp"
#include "apps/ranks.hpp"
#include "data/data_sets.hpp"
#include "data/locate.hpp"

namespace attend::app {

namespace {

// `text` on one line, for an error that quotes an argument: an argument may hold a line break ("\n" shown instead)
std::string one_line(const std::string& text) {
  std::string line;
  for (const char c : text) {
    if (c == '\n') {
      line += "\\n";
    } else if (c == '\r') {
      line += "\\r";
    } else {
      line += c;
    }
  }
  return line;
}

// eval, predict (decode_batches: batches on N threads) and serve (one batch at a time)
void add_threads(CLI::App& command, std::size_t& threads, bool batches = true) {
  command
      .add_option("--threads", threads,
                  batches ? "threads: batches of " + std::to_string(decode_batch_size) +
                                " inputs decoded N at a time, one a thread (the same outputs for every N); a lone "
                                "batch's products on N OpenBLAS threads"
                          : "OpenBLAS threads for the matrix products")
      ->check(whole(64))
      ->capture_default_str();
}

// --precision's help: every precision (those that train, with `training`) with its summary (precision/precision.hpp).
std::string precision_help(bool training) {
  std::string help = "the matrix products' precision: ";
  for (const PrecisionBackend& p : precisions()) {
    if (training && !p.trains) continue;
    help += std::string(p.name) + " (" + p.summary + "); ";
  }
  return help +
         "everything else stays float32; a precision a build or CPU lacks is refused saying why (default: "
         "float32)";
}

// eval, predict, serve: --precision, any precision
void add_decoding_precision(CLI::App& command, std::string& precision) {
  command.add_option("--precision", precision, precision_help(false))->check(CLI::IsMember(precision_names()));
}

void add_beam(CLI::App& command, std::size_t& beam) {
  command.add_option("--beam", beam, "beam width (1: greedy decoding)")->check(whole(1000))->capture_default_str();
}

// ---- the task's flags (train, data) -------------------------------------------------------------------------

// The flags that describe a task's data: the settings every task has, then each registered task's own, bound to one
// instance of each task; after parsing, the chosen one is taken and the others' flags refused. The flags whose default
// is the task's (TaskDefaults) are held as given (empty: not given).
struct TaskFlags {
  std::string name = task_names().front();  // the first registered task is the default
  TaskSettings settings;
  GivenFlags given;
  std::vector<CLI::Option*> common;            // every flag of the settings, --task included
  std::vector<std::unique_ptr<Task>> tasks;    // one of each, in registration order
  std::vector<std::vector<CLI::Option*>> own;  // each task's own flags
};

// A new instance of every registered task, in registration order.
std::vector<std::unique_ptr<Task>> every_task() {
  std::vector<std::unique_ptr<Task>> tasks;
  for (const std::string& name : task_names()) tasks.push_back(make_task(name));
  return tasks;
}

// "a (x), b (y) or c (z)": each registered task's name and `what` of it; tasks for which `what` is empty are left out.
std::string by_task(const std::vector<std::unique_ptr<Task>>& tasks,
                    const std::function<std::string(const Task&)>& what, const std::string& separator = ", ",
                    const std::string& last = " or ", const std::string& after_name = " ") {
  std::vector<std::string> parts;
  for (const std::unique_ptr<Task>& task : tasks) {
    const std::string text = what(*task);
    if (!text.empty()) parts.push_back(task->name() + after_name + text);
  }
  std::string joined;
  for (std::size_t k = 0; k < parts.size(); ++k)
    joined += (k == 0 ? "" : k + 1 == parts.size() ? last : separator) + parts[k];
  return joined;
}

// `number` or, when given, `text` (a default's wording in --help)
std::string stated(std::size_t number, const std::string& text) { return text.empty() ? std::to_string(number) : text; }

// `training`: the command trains (the seed also draws the initial weights and the batch order), or only makes the data
void add_task_flags(CLI::App& command, TaskFlags& flags, bool training) {
  flags.tasks = every_task();
  const auto& tasks = flags.tasks;
  TaskSettings& s = flags.settings;
  GivenFlags& g = flags.given;
  const std::string train_sizes = by_task(
      tasks, [](const Task& t) { return stated(t.defaults().train_size, t.defaults().train_size_help); }, ", ", ", ");
  const std::string validation_sizes = by_task(
      tasks, [](const Task& t) { return stated(t.defaults().validation_size, t.defaults().validation_size_help); },
      ", ", ", ");
  flags.common = {
      command
          .add_option("--task", flags.name,
                      "what to learn: " + by_task(tasks, [](const Task& t) { return "(" + t.description() + ")"; }))
          ->check(CLI::IsMember(task_names()))
          ->capture_default_str(),
      command
          .add_option(
              "--seed", s.seed,
              training ? "seed of the data split, the initial weights and the batch order" : "seed of the data split")
          ->check(seed_number())
          ->capture_default_str(),
      command.add_option("--train-size", g.train_size, "training examples (default: " + train_sizes + ")")
          ->check(whole(many)),
      command.add_option("--valid-size", g.validation_size, "validation examples (default: " + validation_sizes + ")")
          ->check(whole(many)),
      command.add_option("--test-size", s.test_size, "test examples")->check(whole(many))->capture_default_str(),
      command
          .add_option("--max-length", g.max_length,
                      "longest input, in tokens, the model will accept (tasks reading text; default " +
                          std::to_string(s.max_source_length) + ")")
          ->check(whole(100000)),
      command.add_option("--data", g.data,
                         "the data file, or a data set's name (" + data::data_set_names() +
                             ", found in the data "
                             "folders: docs/data.md): " +
                             by_task(
                                 tasks, [](const Task& t) { return t.data_help(); }, "; ", "; ", ": ")),
      command.add_option("--data-dir", s.data_dir, "a data folder to search first for --data NAME"),
  };
  for (const std::unique_ptr<Task>& task : tasks) flags.own.push_back(task->add_flags(command));
}

// The chosen task with its settings and defaults; a flag of another task is refused.
std::shared_ptr<Task> finish_task_flags(TaskFlags& flags) {
  std::shared_ptr<Task> chosen;
  for (std::size_t k = 0; k < flags.tasks.size(); ++k) {
    if (flags.tasks[k]->name() == flags.name) {
      chosen = std::move(flags.tasks[k]);
      continue;
    }
    for (const CLI::Option* option : flags.own[k]) {
      if (option->count() > 0) throw InputError(option->get_name() + " is only for --task " + flags.tasks[k]->name());
    }
  }
  const GivenFlags& g = flags.given;
  const TaskDefaults defaults = chosen->defaults();
  chosen->settings = flags.settings;
  chosen->settings.train_size = g.train_size.value_or(defaults.train_size);
  chosen->settings.validation_size = g.validation_size.value_or(defaults.validation_size);
  chosen->settings.max_source_length = g.max_length.value_or(flags.settings.max_source_length);
  chosen->settings.data = g.data.value_or("");
  chosen->finish(g);
  return chosen;
}

// Every flag of the task, of every task: none may be given with --resume.
std::vector<CLI::Option*> all_task_flags(const TaskFlags& flags) {
  std::vector<CLI::Option*> all = flags.common;
  for (const auto& own : flags.own) all.insert(all.end(), own.begin(), own.end());
  return all;
}

// ---- train ----------------------------------------------------------------------------------------------------

struct TrainFlags {
  TaskFlags task;
  ModelFlags model;                               // the shared model flags as given (empty: not given)
  std::string arch;                               // --arch: a kind's name; empty: the first that reads the task
  std::vector<std::unique_ptr<ModelKind>> kinds;  // one of each, in registration order
  std::vector<std::vector<CLI::Option*>> own;     // each kind's own flags
  CLI::Option* batch = nullptr;
  std::vector<CLI::Option*> fixed;  // what a saved training state fixes: not with --resume
  CLI::Option *epochs = nullptr, *time_limit = nullptr, *max_steps = nullptr, *log_every = nullptr,
              *save_every = nullptr, *out = nullptr, *threads = nullptr,
              *precision = nullptr;  // what a resumed run may change
};

// How a value reads in --help: 0.001, 128, gru.
template <class T>
std::string shown(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// " (default: K 1, L 2)": the kinds' defaults of one shared flag (`field` of ModelFlags), after the
// default of the kinds that have none (`fallback`, when the flag has one for every kind).
template <class T>
std::string kind_defaults(const std::vector<std::unique_ptr<ModelKind>>& kinds, std::optional<T> ModelFlags::*field,
                          const std::optional<T>& fallback = std::nullopt) {
  std::string by_kind;
  for (const std::unique_ptr<ModelKind>& kind : kinds) {
    const std::optional<T> value = kind->defaults().*field;
    if (value && (!fallback || *value != *fallback))
      by_kind += (by_kind.empty() ? "" : ", ") + std::string(kind->name()) + " " + shown(*value);
  }
  std::string text = fallback ? shown(*fallback) : "";
  if (!by_kind.empty()) text += (text.empty() ? "" : "; ") + by_kind;
  return " (default: " + text + ")";
}

// The shared model flags and the optimizer's (Adam's rate, its schedule, clipping), all fixed by a saved state.
void add_shared_model_flags(CLI::App& command, TrainFlags& flags) {
  ModelFlags& m = flags.model;
  const auto& kinds = flags.kinds;
  const TrainSettings global;
  flags.fixed = {
      command.add_option("--cell", m.cell, "recurrent cell" + kind_defaults(kinds, &ModelFlags::cell))
          ->check(CLI::IsMember({"gru", "lstm", "rnn_tanh", "rnn_relu"})),
      command.add_option("--hidden", m.hidden_size, "hidden size H" + kind_defaults(kinds, &ModelFlags::hidden_size))
          ->check(whole(16384)),
      command
          .add_option("--embed", m.embedding_dim, "embedding size E" + kind_defaults(kinds, &ModelFlags::embedding_dim))
          ->check(whole(16384)),
      command
          .add_option("--attention-size", m.attention_size,
                      "additive/concat score size, 0: H" + kind_defaults(kinds, &ModelFlags::attention_size))
          ->check(CLI::Range(0, 1 << 16)),
      command.add_option("--layers", m.layers, "layers" + kind_defaults(kinds, &ModelFlags::layers))->check(whole(64)),
      command.add_option("--dropout", m.dropout, "dropout" + kind_defaults(kinds, &ModelFlags::dropout))
          ->check(number_in(0.0, 0.99)),
      command
          .add_option("--lr", m.learning_rate,
                      "Adam's learning rate (with --warmup: its peak)" +
                          kind_defaults(kinds, &ModelFlags::learning_rate, std::optional<double>(global.learning_rate)))
          ->check(number_in(1e-7, 10.0)),
      command
          .add_option("--warmup", m.warmup,
                      "raise the learning rate linearly to --lr over N steps, then decay it as 1/√step (0: constant)" +
                          kind_defaults(kinds, &ModelFlags::warmup, std::optional<std::size_t>(global.warmup)))
          ->check(CLI::Range(std::size_t{0}, many)),
      command
          .add_option("--lr-drop", m.lr_drop,
                      "after this fraction of the steps of --epochs, the learning rate is --lr / 10 (0: constant)" +
                          kind_defaults(kinds, &ModelFlags::lr_drop, std::optional<double>(global.lr_drop)))
          ->check(number_in(0.0, 0.999)),
  };
}

CLI::App* add_train_flags(CLI::App& app, TrainOptions& train, TrainFlags& flags) {
  CLI::App* command = app.add_subcommand("train", "train a model and save the best one (by validation score)");
  add_task_flags(*command, flags.task, true);
  TrainSettings& s = train.settings;
  flags.kinds = model_kinds();
  add_shared_model_flags(*command, flags);
  flags.batch = command
                    ->add_option("--batch", s.batch_size,
                                 "examples per step (default: " +
                                     by_task(
                                         flags.task.tasks, [](const Task& t) { return shown(t.defaults().batch_size); },
                                         ", ", ", ") +
                                     ")")
                    ->check(whole(many));
  std::string names;
  for (const std::string& name : model_kind_names()) names += (names.empty() ? "" : ", ") + name;
  CLI::Option* arch = command
                          ->add_option("--arch", flags.arch,
                                       "the model: " + names + " (default: the first that reads the task's input)")
                          ->check(CLI::IsMember(model_kind_names()));
  for (const std::unique_ptr<ModelKind>& kind : flags.kinds) flags.own.push_back(kind->add_flags(*command));
  flags.fixed.push_back(flags.batch);
  flags.fixed.push_back(arch);
  flags.precision = command
                        ->add_option_function<std::string>(
                            "--precision", [&s](const std::string& name) { s.precision = name; }, precision_help(true))
                        ->check(CLI::IsMember(precision_names(true)));
  flags.fixed.push_back(
      command->add_option("--clip", s.clip, "clip the gradient's global norm to this (0: no clipping)")
          ->check(number_in(0.0, 1e6))
          ->capture_default_str());
  for (const auto& own : flags.own) flags.fixed.insert(flags.fixed.end(), own.begin(), own.end());
  flags.epochs = command->add_option("--epochs", s.epochs, "passes over the training data")
                     ->check(whole(many))
                     ->capture_default_str();
  flags.time_limit = command->add_option("--time-limit", s.time_limit_minutes, "stop after this many minutes (0: none)")
                         ->check(number_in(0.0, 1e6))
                         ->capture_default_str();
  flags.max_steps = command->add_option("--max-steps", s.max_steps, "stop after this many steps (0: none)")
                        ->check(CLI::Range(std::size_t{0}, many))
                        ->capture_default_str();
  flags.log_every = command->add_option("--log-every", s.log_every, "progress line every N steps (0: ~20 per epoch)")
                        ->check(CLI::Range(std::size_t{0}, many))
                        ->capture_default_str();
  flags.save_every = command
                         ->add_option("--save-every", s.save_every,
                                      "also write the training state (OUT's .last.safetensors) every N steps (0: at "
                                      "the end of each epoch and when stopped)")
                         ->check(CLI::Range(std::size_t{0}, many))
                         ->capture_default_str();
  flags.out = command->add_option("--out", s.out, "model file to write (.safetensors); resumed: the saved one");
  s.threads = available_cores();
  flags.threads = command
                      ->add_option("--threads", s.threads,
                                   "train on N threads: every batch is cut into N shards that run at once (the "
                                   "numbers depend on N; default: the cores this process may use)")
                      ->check(whole(64))
                      ->capture_default_str();
  command->add_flag("--detect-anomaly", train.detect_anomaly,
                    "check every op's output and gradient; stop at the first NaN or infinity, naming the op");
  command->add_flag("--timings", train.timings,
                    "when training stops, one line on stderr: the milliseconds a step spent making the batch, in "
                    "forward, backward, summing the shards' gradients, combining processes', the optimizer and the "
                    "rest, and how long the faster shards waited for the slowest");
  command->add_option("--resume", train.resume,
                      "go on with the training state saved in this file (OUT.last.safetensors)");
  command->add_flag("--force", train.force, "replace the model file --out names (and its training state) if it exists");
  return command;
}

// With --resume: only what a resumed run may change, as typed overrides.
void finish_resume_flags(TrainOptions& train, const TrainFlags& flags) {
  std::vector<CLI::Option*> fixed = flags.fixed;
  for (CLI::Option* option : all_task_flags(flags.task)) fixed.push_back(option);
  for (const CLI::Option* option : fixed) {
    if (option->count() > 0) {
      throw InputError(option->get_name() +
                       " cannot be given with --resume: the saved training state fixes the task, the model and the "
                       "training settings");
    }
  }
  const TrainSettings& s = train.settings;
  TrainOverrides& o = train.overrides;
  if (flags.epochs->count() > 0) o.epochs = s.epochs;
  if (flags.max_steps->count() > 0) o.max_steps = s.max_steps;
  if (flags.time_limit->count() > 0) o.time_limit_minutes = s.time_limit_minutes;
  if (flags.log_every->count() > 0) o.log_every = s.log_every;
  if (flags.save_every->count() > 0) o.save_every = s.save_every;
  if (flags.out->count() > 0) o.out = s.out;
  if (flags.threads->count() > 0) o.threads = s.threads;
  if (flags.precision->count() > 0) o.precision = s.precision;
}

// The shared model flags for `kind`: each given one, else the kind's default. A model flag given that the kind has no
// default for is refused, naming the kinds that take it. The training settings (--lr, --warmup, --lr-drop) as given
// or the kind's (empty: neither).
ModelFlags merged_model_flags(const TrainFlags& flags, const ModelKind& kind) {
  const ModelFlags& given = flags.model;
  const ModelFlags defaults = kind.defaults();
  ModelFlags merged;
  auto merge = [&](auto field, const char* flag, bool model_flag) {
    if (model_flag && (given.*field) && !(defaults.*field)) {
      std::string takers;
      for (const std::unique_ptr<ModelKind>& other : model_kinds())
        if (other->defaults().*field) takers += (takers.empty() ? "" : ", ") + std::string(other->name());
      const std::string hint = kind.refusal_hint();
      throw InputError(std::string(flag) + " is only for --arch " + takers +
                       (hint.empty() ? "" : " (--arch " + std::string(kind.name()) + ": " + hint + ")"));
    }
    merged.*field = (given.*field) ? given.*field : defaults.*field;
  };
  merge(&ModelFlags::cell, "--cell", true);
  merge(&ModelFlags::hidden_size, "--hidden", true);
  merge(&ModelFlags::embedding_dim, "--embed", true);
  merge(&ModelFlags::attention_size, "--attention-size", true);
  merge(&ModelFlags::layers, "--layers", true);
  merge(&ModelFlags::dropout, "--dropout", true);
  merge(&ModelFlags::learning_rate, "--lr", false);
  merge(&ModelFlags::warmup, "--warmup", false);
  merge(&ModelFlags::lr_drop, "--lr-drop", false);
  return merged;
}

// A new training: the task, the model kind that reads its input (another kind's flags refused), their settings.
void finish_train_flags(TrainOptions& train, TrainFlags& flags) {
  if (train.settings.out.empty()) throw InputError("train: --out is required (the model file to write)");
  train.task = finish_task_flags(flags.task);
  const InputKind input = train.task->input();
  for (std::size_t k = 0; k < flags.kinds.size(); ++k) {
    const ModelKind& kind = *flags.kinds[k];
    const bool named = flags.arch == kind.name();
    if (named && kind.input() != input) {
      throw InputError(std::string("--arch ") + kind.name() + " cannot learn --task " + train.task->name() +
                       ": it is for " + tasks_reading(kind.input()));
    }
    if (!train.model && (named || (flags.arch.empty() && kind.input() == input))) {
      train.model = std::move(flags.kinds[k]);
      continue;
    }
    for (const CLI::Option* option : flags.own[k]) {
      if (option->count() == 0) continue;
      throw InputError(option->get_name() + " is only for " +
                       (kind.input() == input ? std::string("--arch ") + kind.name() : tasks_reading(kind.input())));
    }
  }
  const ModelFlags m = merged_model_flags(flags, *train.model);
  TrainSettings& s = train.settings;
  if (flags.batch->count() == 0) s.batch_size = train.task->defaults().batch_size;
  s.learning_rate = m.learning_rate.value_or(s.learning_rate);
  s.warmup = m.warmup.value_or(s.warmup);
  // a kind's default drop applies only when there is no warm-up (one schedule at a time)
  if (flags.model.lr_drop || s.warmup == 0) s.lr_drop = m.lr_drop.value_or(s.lr_drop);
  train.model->finish(m, *train.task);
  if (const std::string why = find_precision(s.precision)->unavailable(); !why.empty()) {
    throw InputError("--precision " + s.precision + ": " + why);
  }
  if (train.settings.lr_drop > 0 && train.settings.warmup > 0) {
    throw InputError("--lr-drop with --warmup " + std::to_string(train.settings.warmup) +
                     ": one learning-rate schedule at a time (--warmup 0 for a constant rate before the drop)");
  }
}

// ---- eval, predict, data --------------------------------------------------------------------------------------

CLI::App* add_eval_flags(CLI::App& app, EvalOptions& eval) {
  CLI::App* command = app.add_subcommand(
      "eval", "score a model on a held-out split (" +
                  by_task(
                      every_task(), [](const Task& t) { return t.scores_help(); }, "; ", "; ", ": ") +
                  ")");
  command->add_option("--model", eval.model_path, "model file written by attend train")->required();
  command->add_option("--split", eval.split, "which split")
      ->check(CLI::IsMember({"test", "validation", "train"}))
      ->capture_default_str();
  command->add_option("--data", eval.data, "the data file, if it moved since training (tasks that read one)");
  command->add_option("--data-dir", eval.data_dir, "a data folder to search first for a data set's files");
  CLI::Option* output =
      command->add_option("--output", eval.output, "write the outputs to this file, one per line as tokens");
  command->add_flag("--force", eval.force, "replace the file --output names if it exists")->needs(output);
  add_beam(*command, eval.beam);
  add_threads(*command, eval.threads);
  add_decoding_precision(*command, eval.precision);
  return command;
}

CLI::App* add_predict_flags(CLI::App& app, PredictOptions& predict) {
  CLI::App* command = app.add_subcommand(
      "predict", "normalise or translate inputs given as arguments or as lines on standard input, or caption images");
  command->alias("translate");
  command->add_option("--model", predict.model_path, "model file written by attend train")->required();
  add_beam(*command, predict.beam);
  command
      ->add_option("--image", predict.images,
                   "a PGM image to caption, for " + tasks_reading(InputKind::image) + " (the flag may be repeated)")
      ->allow_extra_args(false);  // one file a flag: a later word is an input, not a second image
  CLI::Option* svg =
      command->add_option("--svg", predict.svg, "write the attention picture here (several inputs: FILE-1.svg, …)");
  command
      ->add_option("--layer", predict.layer,
                   "models with several attention layers: the decoder layer whose cross-attention --svg draws (1: the "
                   "first; default: the last)")
      ->check(whole(1024))
      ->needs(svg);
  command
      ->add_option("--head", predict.head,
                   "models with several attention heads: the head --svg draws (1: the first; default: the mean of the "
                   "heads)")
      ->check(whole(1024))
      ->needs(svg);
  command->add_flag("--force", predict.force, "replace the pictures --svg names if they exist")->needs(svg);
  add_threads(*command, predict.threads);
  add_decoding_precision(*command, predict.precision);
  command->add_flag("--scores", predict.scores,
                    "after each output, a TAB and its length-normalised log-probability log p(y | x) / |y| (|y| "
                    "counts the end token)");
  command->add_option("inputs", predict.inputs, "texts to normalise or translate (none: read standard input)");
  return command;
}

CLI::App* add_serve_flags(CLI::App& app, ServeOptions& serve) {
  CLI::App* command = app.add_subcommand(
      "serve", "serve models over HTTP: a JSON API that batches concurrent clients' inputs (docs/reference/serve.md)");
  command
      ->add_option("--model", serve.model_paths,
                   "model file written by attend train, served under its file name without the extension (the flag "
                   "may be repeated)")
      ->required()
      ->allow_extra_args(false);
  command->add_option("--host", serve.host, "the address to listen on (0.0.0.0: every interface)")
      ->capture_default_str();
  command->add_option("--port", serve.port, "the port (0: any free one, which the ready line names)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  add_threads(*command, serve.threads, false);
  add_decoding_precision(*command, serve.precision);
  command->add_option("--max-batch", serve.max_batch, "inputs decoded together, across clients")
      ->check(whole(4096))
      ->capture_default_str();
  command->add_option("--max-wait-ms", serve.max_wait_ms, "how long the oldest waiting input waits for others")
      ->check(CLI::Range(0, 10000))
      ->capture_default_str();
  command->add_option("--max-queue", serve.max_queue, "inputs waiting for a model, beyond which requests get 503")
      ->check(whole(1000000))
      ->capture_default_str();
  command->add_option("--max-inputs", serve.max_inputs, "inputs in one request (413 beyond)")
      ->check(whole(100000))
      ->capture_default_str();
  command->add_option("--max-beam", serve.max_beam, "the widest beam a request may ask for")
      ->check(whole(1000))
      ->capture_default_str();
  command
      ->add_option("--max-attribution-steps", serve.max_attribution_steps,
                   "integrated gradients' points an explain request may ask for")
      ->check(whole(4096))
      ->capture_default_str();
  command->add_option("--max-body", serve.max_body, "bytes of a request's body (413 beyond)")
      ->check(whole(std::size_t{1} << 30))
      ->capture_default_str();
  command->add_option("--max-connections", serve.max_connections, "connections open at once (503 beyond)")
      ->check(whole(100000))
      ->capture_default_str();
  command
      ->add_option("--read-timeout-ms", serve.read_timeout_ms,
                   "to read a whole request (a slower client is disconnected), and to write an answer")
      ->check(whole(3600000))
      ->capture_default_str();
  command
      ->add_option("--heartbeat-ms", serve.heartbeat_ms,
                   "a stream's quiet time after which a comment line (\": ping\") goes out, so proxies keep it open")
      ->check(whole(3600000))
      ->capture_default_str();
  command->add_option("--api-key-file", serve.api_key_file,
                      "a file of API keys, one a line: LibreTranslate's /translate and /detect then require one "
                      "(\"api_key\"), as LibreTranslate does");
  command->add_option("--cors-origin", serve.cors_origins,
                      "an origin (https://example.org) whose pages may call the server from a browser (CORS; repeat "
                      "for more; * for any); none by default");
  return command;
}

// `attend data fetch`, `list` and `where`: the recorded data sets (data/data_sets.hpp) and where they are found.
void add_data_sets_flags(CLI::App& command, DataOptions& data) {
  const std::string names = data::data_set_names();
  CLI::App* fetch = command.add_subcommand(
      "fetch", "download data sets from their public addresses, check them and write the files the tasks read");
  fetch->add_option("names", data.fetch.names, "the data sets (default: all): " + names);
  fetch->add_option("--dir", data.fetch.dir,
                    "the folder to write to (default: the user's data folder, " + data::user_data_folder() + ")");
  fetch->add_option("--sources", data.fetch.sources,
                    "a JSON file of other addresses: {\"NAME\": {\"url\": ..., \"sha256\": ...}} (a mirror)");
  fetch->add_option("--stall-seconds", data.fetch.stall_seconds, "give up a download that receives nothing this long")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  CLI::App* list = command.add_subcommand("list", "each data set, what it holds and where its files are found");
  list->add_option("--data-dir", data.data_dir, "a data folder to search first");
  CLI::App* where = command.add_subcommand("where", "print where each data set or data file is found");
  where->add_option("names", data.where, "data sets (" + names + ") or files (tatoeba/spa-eng.tsv)")->required();
  where->add_option("--data-dir", data.data_dir, "a data folder to search first");
  for (CLI::App* sub : {fetch, list, where}) sub->callback([&data, sub] { data.action = sub->get_name(); });
}

CLI::App* add_data_flags(CLI::App& app, DataOptions& data, TaskFlags& flags) {
  CLI::App* command =
      app.add_subcommand("data", "read, tokenise and split a task's data; print a summary and optionally write it out");
  add_task_flags(*command, flags, false);
  CLI::Option* write = command->add_option("--write", data.write,
                                           "folder to write the splits and vocabularies (image tasks: the held-out "
                                           "images and their captions) to (created if missing)");
  command
      ->add_flag("--force", data.force,
                 "write into a --write folder that is not empty (its files of the same names are replaced)")
      ->needs(write);
  add_data_sets_flags(*command, data);
  return command;
}

// A first word that is no command and no flag: CLI11 would only say that a command is missing.
bool unknown_command(const std::vector<std::string>& args, CommandLine& line) {
  const std::vector<std::string> commands = {"train", "eval", "predict", "translate", "data", "serve", "info"};
  if (args.empty() || args[0].empty() || args[0][0] == '-' ||
      std::find(commands.begin(), commands.end(), args[0]) != commands.end()) {
    return false;
  }
  line.error = "unknown command \"" + one_line(args[0]) +
               "\" (expected train, eval, predict, translate, data, serve or info; see attend --help)";
  line.status = 2;
  return true;
}

// The number of single-character edits from a to b (flag names: short).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// After a failed parse: the first --flag that the command has not, with the nearest one it has ("unknown flag --epoch
// for attend train (did you mean --epochs?)"); empty when the command has every --flag given.
std::string unknown_flag_message(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* command = nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!args.empty() && sub->check_name(args[0])) command = sub;
  if (command == nullptr) return "";
  std::vector<std::string> names;
  for (const CLI::Option* option : command->get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  for (std::size_t k = 1; k < args.size() && args[k] != "--"; ++k) {
    if (args[k].rfind("--", 0) != 0 || args[k].size() == 2) continue;
    const std::string flag = args[k].substr(0, args[k].find('='));
    if (std::find(names.begin(), names.end(), flag) != names.end()) continue;
    std::string nearest;
    std::size_t best = 3;  // at most two edits away, or a start of the name (--epoch of --epochs)
    for (const std::string& name : names) {
      const std::size_t distance = flag.size() > 4 && name.rfind(flag, 0) == 0 ? 1 : edit_distance(flag, name);
      if (distance < best) {
        best = distance;
        nearest = name;
      }
    }
    return "unknown flag " + one_line(flag) + " for attend " + args[0] +
           (nearest.empty() ? "" : " (did you mean " + nearest + "?)");
  }
  return "";
}

// CLI11's parse of argv-style arguments (the program's name first); false, with the line's output or error set, for
// --help, --version and usage errors.
bool parsed(CLI::App& app, const std::vector<std::string>& args, CommandLine& line) {
  std::vector<const char*> argv = {"attend"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    return true;
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    if (e.get_exit_code() == 0) {  // --help, --version
      app.exit(e, out, err);
      line.output = out.str();
      // `translate` is another name of `predict`: its help names the command as typed
      const std::string usage = "Usage: attend predict";
      const std::size_t at = line.output.find(usage);
      if (!args.empty() && args[0] == "translate" && at != std::string::npos)
        line.output.replace(at, usage.size(), "Usage: attend translate");
      line.status = 0;
    } else {
      const std::string unknown = unknown_flag_message(app, args);
      line.error = (unknown.empty() ? one_line(e.what()) : unknown) + " (see attend --help)";
      line.status = 2;
    }
    return false;
  }
}

}  // namespace

CommandLine parse_command_line(const std::vector<std::string>& args) {
  CommandLine line;
  CLI::App app{
      "attend: encoder-decoder models with attention (Bahdanau, Luong), trained and used from the command line",
      "attend"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "attend " ATTEND_VERSION);
  TrainFlags train_flags;
  TaskFlags data_flags;
  CLI::App* train = add_train_flags(app, line.train, train_flags);
  CLI::App* eval = add_eval_flags(app, line.eval);
  add_predict_flags(app, line.predict);
  CLI::App* data = add_data_flags(app, line.data, data_flags);
  CLI::App* serve = add_serve_flags(app, line.serve);
  CLI::App* info = app.add_subcommand(
      "info",
      "the machine and the build, as a bug report or a benchmark needs them: the CPU, OpenBLAS's kernels, "
      "oneDNN, each precision's kernels, the data folders");
  info->add_flag("--json", line.info.json, "one JSON object instead of lines");
  if (unknown_command(args, line) || !parsed(app, args, line)) return line;
  try {
    if (*data) {
      if (line.data.action.empty()) {
        line.data.task = finish_task_flags(data_flags);
      } else {
        for (const CLI::Option* option : all_task_flags(data_flags))
          if (option->count() > 0) throw InputError(option->get_name() + " is not for attend data " + line.data.action);
      }
      line.command = Command::data;
    } else if (*train) {
      if (line.train.resume.empty()) {
        finish_train_flags(line.train, train_flags);
      } else {
        finish_resume_flags(line.train, train_flags);
      }
      line.command = Command::train;
    } else if (*eval) {
      line.command = Command::eval;
    } else if (*serve) {
      line.command = Command::serve;
    } else if (*info) {
      line.command = Command::info;
    } else {
      if (!line.predict.images.empty() && !line.predict.inputs.empty()) {
        throw InputError("predict: give texts or --image files, not both");
      }
      line.command = Command::predict;
    }
  } catch (const InputError& e) {
    line.error = e.what();
    line.status = 2;
    line.command = Command::none;
  }
  return line;
}

namespace {

// The one error line; a training on several processes (mpirun) names the rank when it is not 0 and then ends every
// rank, so that none waits for this one.
int failed(Command command, const char* what, int status) {
  const Ranks* ranks = command == Command::train ? &Ranks::world() : nullptr;
  std::fprintf(stderr, "attend: error: %s%s\n", ranks ? ranks->prefix().c_str() : "", what);
  if (ranks && ranks->size() > 1) {
    std::fflush(stderr);
    ranks->abort(status);
  }
  return status;
}

}  // namespace

int run_command_line(const CommandLine& line) {
  if (line.command == Command::none) {
    std::fputs(line.output.c_str(), stdout);
    if (!line.error.empty()) std::fprintf(stderr, "attend: error: %s\n", line.error.c_str());
    return line.status;
  }
  try {
    switch (line.command) {
      case Command::data:
        return run_data(line.data);
      case Command::info:
        return run_info(line.info);
      case Command::train:
        if (!line.train.settings.out.empty()) check_output_path(line.train.settings.out, "--out");
        return run_train(line.train);
      case Command::eval:
        if (!line.eval.output.empty()) {
          check_output_path(line.eval.output, "--output");
          check_not_replacing("--output", line.eval.output, {line.eval.output}, line.eval.force);
        }
        return run_eval(line.eval);
      case Command::serve:
#ifdef ATTEND_SERVE
        return run_serve(line.serve);
#else
        throw InputError(
            "serve: this attend was built without its HTTP server (Boost.Beast, Debian: libboost-dev; meson "
            "-Dserve=enabled)");
#endif
      case Command::predict:
      case Command::none:
        break;
    }
    if (!line.predict.svg.empty()) check_output_path(line.predict.svg, "--svg");
    return run_predict(line.predict);
  } catch (const InputError& e) {
    return failed(line.command, e.what(), 2);
  } catch (const std::exception& e) {
    return failed(line.command, e.what(), 1);
  }
}

}  // namespace attend::app
