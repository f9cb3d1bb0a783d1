// bench/translate_setup: what `attend train` starts from, written out for bench/torch_translate.py, so that the PyTorch
// run of issue 6's BLEU comparison can start from attend's own initial weights and visit attend's own batches in
// attend's own order (--init, --order); the two trainings then differ only by float rounding. How to run:
// bench/README.md.
//
//   translate_setup --init INIT.safetensors --order ORDER.txt [--steps N] train --task pairs --data … --seed S …
//
// Everything from the word `train` on is an `attend train` command line, parsed by attend's own parser
// (apps/cli.hpp parse_command_line). The program then does what apps/train.cpp's run_train does before its first step,
// in the same order (the comments below name the lines it mirrors), and writes
//   INIT   the model before any step, as an attend model file (apps/model_file.hpp; no optimizer state), and
//   ORDER  a text file: header lines starting with "#", then
//            pairs P                   P lines follow: the training pairs in attend's order (the index i of the
//                                      order lines is the line number from 0), as token ids
//                                      `source ids<TAB>target ids`, ids joined by single spaces (the target's <eos>
//                                      and the decoder's <sos> are not written: make_batch adds them)
//            steps N                   N lines follow: step k's batch as indices into the pairs, in batch order
//                                      (models::bucketed_batch_order; epochs follow one another as in run_train)
// N is the step count `attend train` would run (--max-steps, else epochs × steps per epoch) unless --steps is given.
// A summary (pairs, vocabularies, parameters, the first batch's sizes) goes to standard error.
// bench/translate_setup_check.py checks both files against a one-step run of `attend train` itself.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/cli.hpp"
#include "apps/model_file.hpp"
#include "models/batch.hpp"

namespace {

using namespace attend;

constexpr const char* usage =
    "usage: translate_setup --init INIT.safetensors --order ORDER.txt [--steps N] train --task pairs ... (an `attend "
    "train` command line)\n";

struct Options {
  std::string init, order;
  std::size_t steps = 0;           // 0: the step count of the train command
  std::vector<std::string> train;  // "train" and its arguments
};

Options parse(int argc, char** argv) {
  Options options;
  int k = 1;
  for (; k < argc && std::string(argv[k]) != "train"; ++k) {
    const std::string flag = argv[k];
    if (k + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++k];
    if (flag == "--init") {
      options.init = value;
    } else if (flag == "--order") {
      options.order = value;
    } else if (flag == "--steps") {
      if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos || value.size() > 9 ||
          std::stoul(value) == 0) {
        throw std::invalid_argument("--steps " + value + ": expected a step count from 1");
      }
      options.steps = std::stoul(value);
    } else {
      throw std::invalid_argument("unknown option " + flag);
    }
  }
  if (options.init.empty() || options.order.empty()) throw std::invalid_argument("--init and --order are required");
  if (k >= argc) throw std::invalid_argument("no `train ...` command line");
  options.train.assign(argv + k, argv + argc);
  return options;
}

std::string join_ids(const std::vector<std::int64_t>& ids) {
  std::string text;
  for (std::size_t k = 0; k < ids.size(); ++k) text += (k ? " " : "") + std::to_string(ids[k]);
  return text;
}

int run(const Options& options) {
  const app::CommandLine line = app::parse_command_line(options.train);
  if (line.command == app::Command::none && line.status == 0) {  // train --help
    std::fputs(line.output.c_str(), stdout);
    return 0;
  }
  if (line.command != app::Command::train) {
    throw std::invalid_argument(line.error.empty() ? "not a train command line" : line.error);
  }
  const app::TrainOptions& train_options = line.train;
  if (!train_options.resume.empty()) throw std::invalid_argument("--resume: only a fresh training is supported");
  if (train_options.task->input() != app::InputKind::text) throw std::invalid_argument("only text tasks are supported");

  // run_train's build: the data, the vocabularies and the model (new_model_file; initial weights from the seed)
  const std::unique_ptr<app::TaskData> data = train_options.task->make_data();
  std::cerr << "translate_setup: " << data->summary << "\n";
  app::ModelFile file = app::new_model_file(*train_options.task, *train_options.model, *data);

  // the training pairs as token ids, in the order of the task's examples (the indices its batches use)
  std::vector<std::vector<std::int64_t>> sources, targets;
  for (const app::Example& example : train_options.task->held_out(*data, "train")) {
    sources.push_back(file.source_vocabulary.encode(example.source));
    targets.push_back(file.target_vocabulary.encode(example.references.front()));
  }

  // run_train's prepare: the batch-order generator order_rng, Rng(seed + 7) for a fresh training, steps_per_epoch and
  // total_steps, then one epoch order after another until the step limit (the Adam optimizer built in between and the
  // validation after each epoch draw nothing from it)
  const app::TrainSettings& settings = train_options.settings;
  const std::unique_ptr<app::Batches> batches =
      train_options.task->batches(*data, file.source_vocabulary, file.target_vocabulary, settings.batch_size);
  Rng order_rng(train_options.task->settings.seed + 7);
  const std::size_t steps_per_epoch = batches->steps_per_epoch();
  const std::size_t total_steps = settings.max_steps > 0
                                      ? std::min(settings.max_steps, steps_per_epoch * settings.epochs)
                                      : steps_per_epoch * settings.epochs;
  const std::size_t steps = options.steps ? options.steps : total_steps;
  std::vector<std::vector<std::size_t>> order;  // (steps,) batches of indices into the training pairs
  for (std::size_t epoch = 1; order.size() < steps; ++epoch) {
    for (auto& indices : batches->epoch_order(order_rng)) {
      order.push_back(std::move(indices));
      if (order.size() == steps) break;
    }
    if (epoch == settings.epochs && order.size() < steps) {
      std::cerr << "translate_setup: note: " << steps << " steps go beyond the " << settings.epochs
                << " epochs of the train command (" << total_steps << " steps); the order goes on with more epochs\n";
    }
  }

  file.training = {{"step", 0}, {"written_by", "bench/translate_setup (the weights before the first step)"}};
  app::save_model_file(options.init, file);

  std::ofstream out(options.order);
  if (!out) throw std::runtime_error("cannot write " + options.order);
  out << "# attend batch order written by bench/translate_setup for: attend";
  for (const std::string& arg : options.train) out << " " << arg;
  out << "\n# source vocabulary " << file.source_vocabulary.size() << ", target vocabulary "
      << file.target_vocabulary.size() << ", " << steps_per_epoch << " steps per epoch\n";
  out << "pairs " << sources.size() << "\n";
  for (std::size_t i = 0; i < sources.size(); ++i) out << join_ids(sources[i]) << "\t" << join_ids(targets[i]) << "\n";
  out << "steps " << order.size() << "\n";
  for (const auto& indices : order) {
    for (std::size_t k = 0; k < indices.size(); ++k) out << (k ? " " : "") << indices[k];
    out << "\n";
  }
  out.close();
  if (!out) throw std::runtime_error("error writing " + options.order);

  // what the first batch holds, to check against a run of `attend train`
  const auto& first = order.front();
  std::size_t longest_source = 0, target_tokens = 0;
  for (std::size_t i : first) {
    longest_source = std::max(longest_source, sources[i].size());
    target_tokens += targets[i].size() + 1;  // + <eos>, as run_train counts tokens
  }
  std::cerr << "translate_setup: " << sources.size() << " training pairs, vocabularies "
            << file.source_vocabulary.size() << " → " << file.target_vocabulary.size() << ", "
            << file.model->module().parameter_count() << " parameters; " << order.size() << " steps ("
            << steps_per_epoch << " per epoch); step 1: " << first.size() << " pairs, longest source " << longest_source
            << ", " << target_tokens << " target tokens; wrote " << options.init << " and " << options.order << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "translate_setup: error: %s\n%s", e.what(), usage);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "translate_setup: error: %s\n", e.what());
    return 1;
  }
}
