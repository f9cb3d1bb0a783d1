// The commands of the `attend` program, each a function from parsed options to an exit status. The command line
// itself (flags, help, validation of values) is in attend.cpp; the reference is docs/reference/attend.md.
#pragma once

#include <string>
#include <vector>

#include "apps/task.hpp"
#include "models/captioner.hpp"
#include "models/seq2seq.hpp"

namespace attend::app {

struct TrainOptions {
  TaskSpec task;
  models::Seq2seqConfig model;  // text tasks; sizes of the vocabularies are filled in from the task
  std::string decoder = "bahdanau";
  models::CaptionerConfig captioner;  // the digits task; the vocabulary size is filled in
  std::size_t batch_size = 64;
  std::size_t epochs = 5;
  double learning_rate = 2e-3;
  double clip = 1.0;                 // gradient clipping by global norm; 0: none
  std::size_t threads = 1;           // OpenBLAS threads
  double time_limit_minutes = 0;     // stop (validate, save) after this long; 0: no limit
  std::size_t max_steps = 0;         // stop (validate, save) after this many steps; 0: no limit
  std::size_t log_every = 0;         // plain progress lines every N steps; 0: about 20 a epoch
  std::size_t save_every = 0;        // write the training state every N steps too; 0: at epoch ends and when stopped
  bool detect_anomaly = false;       // the tape checks every output and gradient for NaN/Inf (names the op)
  std::string out;                   // the best model; the training state goes beside it (last_state_path)
  std::string resume;                // a training state file to go on from (the task, model and settings come from it)
  std::vector<std::string> changed;  // with resume: the flags given on the command line ("--epochs"), which override
};

// Where `attend train --out OUT` keeps its training state, for --resume: OUT with ".last" before the extension
// (dates.safetensors → dates.last.safetensors), as PyTorch Lightning's last.ckpt beside the best checkpoint.
std::string last_state_path(const std::string& out);

struct EvalOptions {
  std::string model_path;
  std::string split = "test";
  std::string data;    // pairs: the sentence-pair file, when it is no longer where training read it
  std::string output;  // write the outputs here, one per line as tokens joined by spaces
  std::size_t beam = 1;
  std::size_t threads = 1;
};

struct PredictOptions {
  std::string model_path;
  std::vector<std::string> inputs;  // none: read lines from standard input
  std::vector<std::string> images;  // digits: PGM files (then no inputs)
  std::size_t beam = 1;
  std::string svg;  // attention picture; several inputs: FILE-1.svg, FILE-2.svg, …
  std::size_t threads = 1;
};

struct DataOptions {
  TaskSpec task;
  std::string write;  // folder to write the tokenised splits and vocabularies (digits: the held-out images as PGM
                      // files and their captions) to; empty: only the summary
};

int run_train(const TrainOptions& options);
int run_data(const DataOptions& options);
int run_eval(const EvalOptions& options);
int run_predict(const PredictOptions& options);

// Sets the number of OpenBLAS threads (the only threads the program uses).
void set_threads(std::size_t threads);

}  // namespace attend::app
