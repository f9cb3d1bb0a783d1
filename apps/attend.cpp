// The `attend` command-line program: train, evaluate and use the encoder–decoder models with attention.
//   attend train --task dates --decoder bahdanau --out dates.safetensors
//   attend eval --model dates.safetensors
//   attend predict --model dates.safetensors [--beam 5] [--svg heatmap.svg] "Saturday 09 May 2018"
//   attend train --task pairs --data spa-eng.tsv --source spa --target eng --out spa-eng.safetensors
//   attend translate --model spa-eng.safetensors "¿Dónde está la biblioteca?"   (translate = predict)
//   attend data --task pairs --data spa-eng.tsv --write spa-eng-split/
// Exit status: 0 success, 2 a usage or input error (one line naming the problem; nothing written), 1 anything else.
// Reference: docs/reference/attend.md.
#include <cstdio>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "apps/commands.hpp"
#include "apps/model_file.hpp"

namespace {

using attend::app::InputError;

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

const std::size_t many = 100000000;  // a bound for counts (pairs, steps, epochs)

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
  std::vector<CLI::Option*> pairs_only;
};

TaskOptions add_task_options(CLI::App& command, attend::app::TaskSpec& task) {
  TaskOptions options;
  command.add_option("--task", task.name, "what to learn: dates (generated) or pairs (a sentence-pair file)")
      ->check(CLI::IsMember({"dates", "pairs"}))
      ->capture_default_str();
  command.add_option("--seed", task.seed, "seed of the data split, the initial weights and the batch order")
      ->capture_default_str();
  options.train_size = command.add_option("--train-size", task.train_size,
                                          "training pairs (default: dates 40000, pairs all not held out)")
                           ->check(whole(many));
  options.validation_size = command.add_option("--valid-size", task.validation_size,
                                               "validation examples (default: dates 2000, pairs 1000 sentences)")
                                ->check(whole(many));
  command.add_option("--test-size", task.test_size, "test examples")->check(whole(many))->capture_default_str();
  command.add_option("--max-length", task.max_source_length, "longest input, in tokens, the model will accept")
      ->check(whole(100000))
      ->capture_default_str();
  const std::vector<std::string> tokenizations = {"words", "characters"};
  options.pairs_only = {
      command.add_option("--data", task.data, "pairs: the sentence-pair file (TSV, as ../shared/data/tatoeba/spa-eng.tsv)"),
      command.add_option("--source", task.source, "pairs: source language as the file name gives it (spa-eng.tsv: spa), or 1 or 2")
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
  return options;
}

// Task-dependent defaults, and options that do not belong to the task.
void finish_task(attend::app::TaskSpec& task, const TaskOptions& options) {
  if (task.is_pairs()) {
    if (options.train_size->count() == 0) task.train_size = 0;
    if (options.validation_size->count() == 0) task.validation_size = 1000;
    return;
  }
  for (const CLI::Option* option : options.pairs_only) {
    if (option->count() > 0) throw InputError(option->get_name() + " is only for --task pairs");
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attend: encoder-decoder models with attention (Bahdanau, Luong), trained and used from the command line",
               "attend"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "attend 0.1.0");

  // ---- train ----
  attend::app::TrainOptions train;
  std::string cell = "gru";
  bool bidirectional = false;
  bool no_input_feeding = false;
  CLI::App* train_command = app.add_subcommand("train", "train a model and save the best one (by validation exact match)");
  const TaskOptions train_task = add_task_options(*train_command, train.task);
  train_command->add_option("--cell", cell, "recurrent cell of encoder and decoder")
      ->check(CLI::IsMember({"gru", "lstm", "rnn_tanh", "rnn_relu"}))
      ->capture_default_str();
  train_command->add_option("--decoder", train.decoder, "decoder and attention score")
      ->check(CLI::IsMember({"vanilla", "bahdanau", "luong-dot", "luong-general", "luong-concat"}))
      ->capture_default_str();
  train_command->add_flag("--bidirectional", bidirectional, "read the source in both directions");
  train_command->add_flag("--no-input-feeding", no_input_feeding, "Luong: do not feed h̃_{j-1} into the next step");
  train_command->add_option("--hidden", train.model.hidden_size, "hidden size H")->check(whole(16384))->capture_default_str();
  train_command->add_option("--embed", train.model.embedding_dim, "embedding size E")->check(whole(16384))->capture_default_str();
  train_command->add_option("--layers", train.model.num_layers, "recurrent layers")->check(whole(8))->capture_default_str();
  train_command->add_option("--attention-size", train.model.attention_size, "additive/concat score size (0: H)")
      ->check(CLI::Range(0, 1 << 16))
      ->capture_default_str();
  train_command->add_option("--dropout", train.model.dropout, "dropout between encoder layers")
      ->check(CLI::Range(0.0, 0.99))
      ->capture_default_str();
  train_command->add_option("--batch", train.batch_size, "sentence pairs per step")->check(whole(many))->capture_default_str();
  train_command->add_option("--epochs", train.epochs, "passes over the training data")->check(whole(many))->capture_default_str();
  train_command->add_option("--lr", train.learning_rate, "Adam learning rate")->check(CLI::Range(1e-7, 10.0))->capture_default_str();
  train_command->add_option("--clip", train.clip, "clip the gradient's global norm to this (0: no clipping)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  train_command->add_option("--time-limit", train.time_limit_minutes, "stop after this many minutes (0: none)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  train_command->add_option("--max-steps", train.max_steps, "stop after this many steps (0: none)")
      ->check(CLI::Range(std::size_t{0}, many))
      ->capture_default_str();
  train_command->add_option("--log-every", train.log_every, "progress line every N steps (0: ~20 per epoch)")
      ->capture_default_str();
  add_threads(*train_command, train.threads);
  train_command->add_option("--out", train.out, "model file to write (.safetensors)")->required();

  // ---- eval ----
  attend::app::EvalOptions eval;
  CLI::App* eval_command = app.add_subcommand("eval", "score a model on a held-out split (dates: exact match; pairs: BLEU)");
  eval_command->add_option("--model", eval.model_path, "model file written by attend train")->required();
  eval_command->add_option("--split", eval.split, "which split")
      ->check(CLI::IsMember({"test", "validation", "train"}))
      ->capture_default_str();
  eval_command->add_option("--data", eval.data, "pairs: the sentence-pair file, if it moved since training");
  eval_command->add_option("--output", eval.output, "write the outputs to this file, one per line as tokens");
  add_beam(*eval_command, eval.beam);
  add_threads(*eval_command, eval.threads);

  // ---- predict ----
  attend::app::PredictOptions predict;
  CLI::App* predict_command =
      app.add_subcommand("predict", "normalise or translate inputs given as arguments or as lines on standard input");
  predict_command->alias("translate");
  predict_command->add_option("--model", predict.model_path, "model file written by attend train")->required();
  add_beam(*predict_command, predict.beam);
  predict_command->add_option("--svg", predict.svg, "write the attention heatmap here (several inputs: FILE-1.svg, …)");
  add_threads(*predict_command, predict.threads);
  predict_command->add_option("inputs", predict.inputs, "texts to normalise or translate (none: read standard input)");

  // ---- data ----
  attend::app::DataOptions data;
  CLI::App* data_command =
      app.add_subcommand("data", "read, tokenise and split a task's data; print a summary and optionally write it out");
  const TaskOptions data_task = add_task_options(*data_command, data.task);
  data_command->add_option("--write", data.write, "folder to write the splits and vocabularies to (created if missing)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "attend: error: %s (see attend --help)\n", e.what());
    return 2;
  }

  try {
    if (*data_command) {
      finish_task(data.task, data_task);
      return attend::app::run_data(data);
    }
    if (*train_command) {
      finish_task(train.task, train_task);
      train.model.cell = attend::nn::cell_kind_from_string(cell);
      train.model.bidirectional = bidirectional;
      train.model.input_feeding = !no_input_feeding;
      train.model.seed = train.task.seed;
      attend::app::check_output_path(train.out, "--out");
      return attend::app::run_train(train);
    }
    if (*eval_command) {
      if (!eval.output.empty()) attend::app::check_output_path(eval.output, "--output");
      return attend::app::run_eval(eval);
    }
    if (!predict.svg.empty()) attend::app::check_output_path(predict.svg, "--svg");
    return attend::app::run_predict(predict);
  } catch (const InputError& e) {
    std::fprintf(stderr, "attend: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attend: error: %s\n", e.what());
    return 1;
  }
}
