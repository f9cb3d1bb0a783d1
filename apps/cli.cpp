// The `attend` program's command line (cli.hpp): every subcommand's flags with their checks, and running a parsed
// line with the program's error contract.
#include "apps/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "apps/model_file.hpp"

namespace attend::app {

namespace {

// Whole numbers from 1 to `most`, with a message that says so.
CLI::Validator whole(std::size_t most) {
  return CLI::Validator(
      [most](std::string& text) -> std::string {
        const std::string expected = "must be a whole number from 1 to " + std::to_string(most);
        if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos) {
          return expected + ", not \"" + text + "\"";
        }
        const std::size_t value = std::stoull(text);
        if (value < 1 || value > most) return expected + ", not " + text;
        return "";
      },
      "1.." + std::to_string(most));
}

// Decimal numbers from `low` to `high`, finite (CLI11's Range lets NaN through: every comparison with it is false).
CLI::Validator number_in(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        std::ostringstream expected;
        expected << "must be a number from " << low << " to " << high << ", not \"" << text << "\"";
        std::size_t used = 0;
        double value = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
          return expected.str();
        }
        if (used != text.size() || !std::isfinite(value) || value < low || value > high) return expected.str();
        return "";
      },
      "NUMBER in [" + std::to_string(low) + ", " + std::to_string(high) + "]");
}

// A seed: any whole number that fits in 64 bits (CLI11 would read "-1" as 2^64 - 1).
CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::string expected = "must be a whole number from 0 to 18446744073709551615, not \"" + text + "\"";
        if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos)
          return expected;
        if (text.size() == 20 && text > "18446744073709551615") return expected;
        return "";
      },
      "0..2^64-1");
}

const std::size_t many = 100000000;  // a bound for counts (pairs, steps, epochs)

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

void add_threads(CLI::App& command, std::size_t& threads) {
  command.add_option("--threads", threads, "OpenBLAS threads for the matrix products")
      ->check(whole(64))
      ->capture_default_str();
}

void add_beam(CLI::App& command, std::size_t& beam) {
  command.add_option("--beam", beam, "beam width (1: greedy decoding)")->check(whole(1000))->capture_default_str();
}

// The options that describe a task's data, shared by `train` and `data`.
struct TaskOptions {
  CLI::Option* train_size = nullptr;
  CLI::Option* validation_size = nullptr;
  CLI::Option* data = nullptr;        // pairs and digits
  CLI::Option* max_length = nullptr;  // text tasks
  std::vector<CLI::Option*> pairs_only;
  std::vector<CLI::Option*> digits_only;
  std::vector<CLI::Option*> all;  // every option of the task
};

TaskOptions add_task_options(CLI::App& command, TaskSpec& task) {
  TaskOptions options;
  CLI::Option* name = command
                          .add_option("--task", task.name,
                                      "what to learn: dates (generated), pairs (a sentence-pair file) or digits "
                                      "(captions of images of handwritten digit strings)")
                          ->check(CLI::IsMember({"dates", "pairs", "digits"}))
                          ->capture_default_str();
  CLI::Option* seed =
      command.add_option("--seed", task.seed, "seed of the data split, the initial weights and the batch order")
          ->check(seed_number())
          ->capture_default_str();
  options.train_size = command
                           .add_option("--train-size", task.train_size,
                                       "training pairs (default: dates 40000, pairs all not held out); digits: "
                                       "images an epoch (default 19200)")
                           ->check(whole(many));
  options.validation_size = command
                                .add_option("--valid-size", task.validation_size,
                                            "validation examples (default: dates 2000, pairs 1000 sentences, "
                                            "digits 1000 images)")
                                ->check(whole(many));
  CLI::Option* test_size =
      command.add_option("--test-size", task.test_size, "test examples")->check(whole(many))->capture_default_str();
  options.max_length = command
                           .add_option("--max-length", task.max_source_length,
                                       "longest input, in tokens, the model will accept (text tasks)")
                           ->check(whole(100000))
                           ->capture_default_str();
  options.data =
      command.add_option("--data", task.data,
                         "pairs: the sentence-pair file (TSV, as ../shared/data/tatoeba/spa-eng.tsv); digits: "
                         "the digits file (../shared/data/digits/digits.csv.gz)");
  const std::vector<std::string> tokenizations = {"words", "characters"};
  options.pairs_only = {
      command
          .add_option("--source", task.source,
                      "pairs: source language as the file name gives it (spa-eng.tsv: spa), or 1 or 2")
          ->capture_default_str(),
      command.add_option("--target", task.target, "pairs: target language, likewise")->capture_default_str(),
      command.add_option("--source-tokens", task.source_tokens, "pairs: how the source is cut into tokens")
          ->check(CLI::IsMember(tokenizations))
          ->capture_default_str(),
      command.add_option("--target-tokens", task.target_tokens, "pairs: how the target is cut into tokens")
          ->check(CLI::IsMember(tokenizations))
          ->capture_default_str(),
      command.add_option("--max-words", task.max_words, "pairs: keep pairs of at most this many words a side (0: all)")
          ->check(CLI::Range(0, 100000))
          ->capture_default_str(),
      command.add_option("--min-count", task.min_count, "pairs: rarer tokens read as <unk>")
          ->check(whole(many))
          ->capture_default_str(),
      command.add_flag("--skip-bad-lines", task.skip_bad_lines, "pairs: skip (and count) malformed lines"),
  };
  options.digits_only = {
      command
          .add_option("--valid-digits", task.validation_digits, "digits: digit images held out for validation images")
          ->check(whole(many))
          ->capture_default_str(),
      command.add_option("--test-digits", task.test_digits, "digits: digit images held out for test images")
          ->check(whole(many))
          ->capture_default_str(),
      command.add_option("--min-digits", task.min_digits, "digits: fewest digits an image")
          ->check(whole(8))
          ->capture_default_str(),
      command.add_option("--max-digits", task.max_digits, "digits: most digits an image")
          ->check(whole(8))
          ->capture_default_str(),
      command.add_option("--min-gap", task.min_gap, "digits: fewest empty columns between digits")
          ->check(CLI::Range(0, 64))
          ->capture_default_str(),
      command.add_option("--max-gap", task.max_gap, "digits: most empty columns between digits")
          ->check(CLI::Range(0, 64))
          ->capture_default_str(),
      command.add_option("--noise", task.noise, "digits: standard deviation of the training images' pixel noise")
          ->check(number_in(0.0, 1.0))
          ->capture_default_str(),
  };
  options.all = {name, seed, options.train_size, options.validation_size, test_size, options.max_length, options.data};
  options.all.insert(options.all.end(), options.pairs_only.begin(), options.pairs_only.end());
  options.all.insert(options.all.end(), options.digits_only.begin(), options.digits_only.end());
  return options;
}

// Task-dependent defaults, and options that do not belong to the task.
void finish_task(TaskSpec& task, const TaskOptions& options) {
  if (!task.is_pairs()) {
    for (const CLI::Option* option : options.pairs_only) {
      if (option->count() > 0) throw InputError(option->get_name() + " is only for --task pairs");
    }
  }
  if (!task.is_digits()) {
    for (const CLI::Option* option : options.digits_only) {
      if (option->count() > 0) throw InputError(option->get_name() + " is only for --task digits");
    }
  }
  if (task.name == "dates" && options.data->count() > 0) {
    throw InputError("--data is only for --task pairs and --task digits (dates are generated)");
  }
  if (task.is_pairs()) {
    if (options.train_size->count() == 0) task.train_size = 0;
    if (options.validation_size->count() == 0) task.validation_size = 1000;
  }
  if (task.is_digits()) {
    if (options.max_length->count() > 0) throw InputError("--max-length is only for text tasks (dates, pairs)");
    if (options.train_size->count() == 0) task.train_size = 19200;
    if (options.validation_size->count() == 0) task.validation_size = 1000;
    try {
      task.composer(true).validate();
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
  }
}

}  // namespace

CommandLine parse_command_line(const std::vector<std::string>& args) {
  CommandLine line;
  CLI::App app{
      "attend: encoder-decoder models with attention (Bahdanau, Luong), trained and used from the command line",
      "attend"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "attend 0.1.0");

  // ---- train ----
  TrainOptions& train = line.train;
  std::string cell = "gru";
  bool bidirectional = false;
  bool no_input_feeding = false;
  CLI::App* train_command = app.add_subcommand("train", "train a model and save the best one (by validation score)");
  const TaskOptions train_task = add_task_options(*train_command, train.task);
  // the options a checkpoint fixes: not allowed with --resume (the task's are in train_task); some are only for text
  // tasks (a Seq2seq), some only for the digits task (a Captioner)
  CLI::Option* cell_option = train_command
                                 ->add_option("--cell", cell,
                                              "recurrent cell of encoder and decoder (digits: "
                                              "of the decoder)")
                                 ->check(CLI::IsMember({"gru", "lstm", "rnn_tanh", "rnn_relu"}))
                                 ->capture_default_str();
  CLI::Option* hidden = train_command->add_option("--hidden", train.model.hidden_size, "hidden size H (digits: 128)")
                            ->check(whole(16384))
                            ->capture_default_str();
  CLI::Option* embed = train_command->add_option("--embed", train.model.embedding_dim, "embedding size E (digits: 16)")
                           ->check(whole(16384))
                           ->capture_default_str();
  CLI::Option* attention_size =
      train_command->add_option("--attention-size", train.model.attention_size, "additive/concat score size (0: H)")
          ->check(CLI::Range(0, 1 << 16))
          ->capture_default_str();
  CLI::Option* batch = train_command->add_option("--batch", train.batch_size, "examples per step (digits: 32)")
                           ->check(whole(many))
                           ->capture_default_str();
  const std::vector<CLI::Option*> text_only = {
      train_command->add_option("--decoder", train.decoder, "decoder and attention score (text tasks)")
          ->check(CLI::IsMember({"vanilla", "bahdanau", "luong-dot", "luong-general", "luong-concat"}))
          ->capture_default_str(),
      train_command->add_flag("--bidirectional", bidirectional, "read the source in both directions"),
      train_command->add_flag("--no-input-feeding", no_input_feeding, "Luong: do not feed h̃_{j-1} into the next step"),
      train_command->add_option("--layers", train.model.num_layers, "recurrent layers")
          ->check(whole(8))
          ->capture_default_str(),
      train_command->add_option("--dropout", train.model.dropout, "dropout between encoder layers")
          ->check(number_in(0.0, 0.99))
          ->capture_default_str(),
  };
  models::CaptionerConfig& captioner = train.captioner;
  std::string encoder = "patches";
  const std::vector<CLI::Option*> digits_only = {
      train_command->add_option("--encoder", encoder, "digits: image encoder")
          ->check(CLI::IsMember({"patches", "conv"}))
          ->capture_default_str(),
      train_command->add_option("--patch", captioner.patch_width, "digits, patches: patch side (square patches)")
          ->check(whole(64))
          ->capture_default_str(),
      train_command->add_option("--stride", captioner.patch_stride, "digits, patches: step between patches")
          ->check(whole(64))
          ->capture_default_str(),
      train_command
          ->add_option("--patch-hidden", captioner.patch_hidden,
                       "digits, patches: size of the per-patch hidden layer (0: a_i linear in the pixels)")
          ->check(CLI::Range(0, 1 << 16))
          ->capture_default_str(),
      train_command->add_option("--channels", captioner.channels, "digits, conv: channels of the first convolution")
          ->check(whole(1024))
          ->capture_default_str(),
      train_command->add_option("--annotation-size", captioner.annotation_size, "digits: size A of each annotation a_i")
          ->check(whole(16384))
          ->capture_default_str(),
      train_command
          ->add_option("--doubly-stochastic", captioner.doubly_stochastic,
                       "digits: λ of the regulariser λ Σ_i (1 − Σ_t α_ti)² (0: none)")
          ->check(number_in(0.0, 1e6))
          ->capture_default_str(),
  };
  std::vector<CLI::Option*> fixed = {
      cell_option,
      hidden,
      embed,
      attention_size,
      batch,
      train_command->add_option("--lr", train.learning_rate, "Adam learning rate")
          ->check(number_in(1e-7, 10.0))
          ->capture_default_str(),
      train_command->add_option("--clip", train.clip, "clip the gradient's global norm to this (0: no clipping)")
          ->check(number_in(0.0, 1e6))
          ->capture_default_str(),
  };
  fixed.insert(fixed.end(), text_only.begin(), text_only.end());
  fixed.insert(fixed.end(), digits_only.begin(), digits_only.end());
  // the options a resumed run may change
  std::vector<CLI::Option*> changeable = {
      train_command->add_option("--epochs", train.epochs, "passes over the training data")
          ->check(whole(many))
          ->capture_default_str(),
      train_command->add_option("--time-limit", train.time_limit_minutes, "stop after this many minutes (0: none)")
          ->check(number_in(0.0, 1e6))
          ->capture_default_str(),
      train_command->add_option("--max-steps", train.max_steps, "stop after this many steps (0: none)")
          ->check(CLI::Range(std::size_t{0}, many))
          ->capture_default_str(),
      train_command->add_option("--log-every", train.log_every, "progress line every N steps (0: ~20 per epoch)")
          ->check(CLI::Range(std::size_t{0}, many))
          ->capture_default_str(),
      train_command
          ->add_option("--save-every", train.save_every,
                       "also write the training state (OUT's .last.safetensors) every N steps (0: at the end "
                       "of each epoch and when stopped)")
          ->check(CLI::Range(std::size_t{0}, many))
          ->capture_default_str(),
      train_command->add_option("--out", train.out, "model file to write (.safetensors); resumed: the saved one"),
  };
  add_threads(*train_command, train.threads);
  train_command->add_flag("--detect-anomaly", train.detect_anomaly,
                          "check every op's output and gradient; stop at the first NaN or infinity, naming the op");
  train_command->add_option("--resume", train.resume,
                            "go on with the training state saved in this file (OUT.last.safetensors)");

  // ---- eval ----
  EvalOptions& eval = line.eval;
  CLI::App* eval_command = app.add_subcommand(
      "eval",
      "score a model on a held-out split (dates: exact match; pairs: BLEU; digits: exact match, left to right)");
  eval_command->add_option("--model", eval.model_path, "model file written by attend train")->required();
  eval_command->add_option("--split", eval.split, "which split")
      ->check(CLI::IsMember({"test", "validation", "train"}))
      ->capture_default_str();
  eval_command->add_option("--data", eval.data, "pairs, digits: the data file, if it moved since training");
  eval_command->add_option("--output", eval.output, "write the outputs to this file, one per line as tokens");
  add_beam(*eval_command, eval.beam);
  add_threads(*eval_command, eval.threads);

  // ---- predict ----
  PredictOptions& predict = line.predict;
  CLI::App* predict_command = app.add_subcommand(
      "predict", "normalise or translate inputs given as arguments or as lines on standard input, or caption images");
  predict_command->alias("translate");
  predict_command->add_option("--model", predict.model_path, "model file written by attend train")->required();
  add_beam(*predict_command, predict.beam);
  predict_command->add_option("--image", predict.images, "digits: a PGM image to caption (the flag may be repeated)")
      ->allow_extra_args(false);  // one file a flag: a later word is an input, not a second image
  predict_command->add_option("--svg", predict.svg, "write the attention picture here (several inputs: FILE-1.svg, …)");
  add_threads(*predict_command, predict.threads);
  predict_command->add_option("inputs", predict.inputs, "texts to normalise or translate (none: read standard input)");

  // ---- data ----
  DataOptions& data = line.data;
  CLI::App* data_command =
      app.add_subcommand("data", "read, tokenise and split a task's data; print a summary and optionally write it out");
  const TaskOptions data_task = add_task_options(*data_command, data.task);
  data_command->add_option("--write", data.write,
                           "folder to write the splits and vocabularies (digits: the held-out images and their "
                           "captions) to (created if missing)");

  // a first word that is no command and no flag: CLI11 would only say that a command is missing
  const std::vector<std::string> commands = {"train", "eval", "predict", "translate", "data"};
  if (!args.empty() && !args[0].empty() && args[0][0] != '-' &&
      std::find(commands.begin(), commands.end(), args[0]) == commands.end()) {
    line.error = "unknown command \"" + one_line(args[0]) +
                 "\" (expected train, eval, predict, translate or data; see attend --help)";
    line.status = 2;
    return line;
  }
  // CLI11 reads argv-style arguments; the program's name comes first
  std::vector<const char*> argv = {"attend"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    if (e.get_exit_code() == 0) {  // --help, --version
      app.exit(e, out, err);
      line.output = out.str();
      line.status = 0;
    } else {
      line.error = one_line(e.what()) + " (see attend --help)";
      line.status = 2;
    }
    return line;
  }

  try {
    if (*data_command) {
      finish_task(data.task, data_task);
      line.command = Command::data;
    } else if (*train_command) {
      if (!train.resume.empty()) {
        std::vector<CLI::Option*> not_with_resume = fixed;
        not_with_resume.insert(not_with_resume.end(), train_task.all.begin(), train_task.all.end());
        for (const CLI::Option* option : not_with_resume) {
          if (option->count() > 0) {
            throw InputError(option->get_name() +
                             " cannot be given with --resume: the saved training state fixes the "
                             "task, the model and the training settings");
          }
        }
        for (const CLI::Option* option : changeable) {
          if (option->count() > 0) train.changed.push_back(option->get_name());
        }
      } else {
        if (train.out.empty()) throw InputError("train: --out is required (the model file to write)");
        finish_task(train.task, train_task);
        const bool digits = train.task.is_digits();
        for (const CLI::Option* option : digits ? text_only : digits_only) {
          if (option->count() > 0) {
            throw InputError(option->get_name() +
                             (digits ? " is only for the text tasks (dates, pairs)" : " is only for --task digits"));
          }
        }
        if (digits) {
          captioner.encoder = models::image_encoder_from_string(encoder);
          captioner.patch_height = captioner.patch_width;
          if (cell_option->count() > 0) captioner.cell = nn::cell_kind_from_string(cell);
          if (hidden->count() > 0) captioner.hidden_size = train.model.hidden_size;
          if (embed->count() > 0) captioner.embedding_dim = train.model.embedding_dim;
          if (attention_size->count() > 0) captioner.attention_size = train.model.attention_size;
          if (batch->count() == 0) train.batch_size = 32;
          captioner.seed = train.task.seed;
        } else {
          train.model.cell = nn::cell_kind_from_string(cell);
          train.model.bidirectional = bidirectional;
          train.model.input_feeding = !no_input_feeding;
          train.model.seed = train.task.seed;
        }
      }
      line.command = Command::train;
    } else if (*eval_command) {
      line.command = Command::eval;
    } else {
      if (!predict.images.empty() && !predict.inputs.empty()) {
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
      case Command::train:
        if (!line.train.out.empty()) check_output_path(line.train.out, "--out");
        return run_train(line.train);
      case Command::eval:
        if (!line.eval.output.empty()) check_output_path(line.eval.output, "--output");
        return run_eval(line.eval);
      case Command::predict:
      case Command::none:
        break;
    }
    if (!line.predict.svg.empty()) check_output_path(line.predict.svg, "--svg");
    return run_predict(line.predict);
  } catch (const InputError& e) {
    std::fprintf(stderr, "attend: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attend: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace attend::app
