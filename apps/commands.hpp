// The commands of the `attend` program, each a function from parsed options to an exit status. The command line
// itself (flags, help, validation of values) is cli.cpp; the reference is docs/reference/attend.md.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/fetch.hpp"
#include "apps/model.hpp"
#include "apps/task.hpp"
#include "precision/precision.hpp"

namespace attend::app {

// The settings of a training run that its saved state keeps and a resumed run takes over: declared here once, each
// with its JSON key (fields), which to_json and from_json walk; the parser binds the flags to them.
struct TrainSettings {
  std::size_t batch_size = 64;        // examples a step (the task's default unless given)
  std::size_t epochs = 5;             // passes over the training data
  double learning_rate = 2e-3;        // Adam
  double clip = 1.0;                  // gradient clipping by global norm; 0: none
  std::size_t max_steps = 0;          // stop (validate, save) after this many steps; 0: no limit
  double time_limit_minutes = 0;      // stop (validate, save) after this long; 0: no limit
  std::size_t log_every = 0;          // plain progress lines every N steps; 0: about 20 an epoch
  std::size_t save_every = 0;         // write the training state every N steps too; 0: at epoch ends and when stopped
  std::string out;                    // the best model; the training state goes beside it (last_state_path)
  std::size_t warmup = 0;             // steps of linear warm-up to `learning_rate`, then 1/√step decay; 0: constant
                                      // (kept in the files only when not 0, so older files read as 0)
  double lr_drop = 0;                 // after this fraction of the epochs' steps, `learning_rate` / 10; 0: never
                                      // (kept only when not 0, as warmup)
  std::size_t threads = 1;            // batch shards, one a thread (nn::BatchParallel): the float sums depend on it
                                      // (files without it were trained on one)
  std::size_t ranks = 1;              // processes (mpirun -np), each with `threads` shards: not a flag, but saved
  std::string precision = "float32";  // of the matrix products (precision/precision.hpp); kept only when bf16

  // Calls field(key, member) for every setting, in one place for reading and writing.
  template <class Self, class Field>
  static void fields(Self& self, Field&& field) {
    field("batch", self.batch_size);
    field("epochs", self.epochs);
    field("lr", self.learning_rate);
    field("clip", self.clip);
    field("max_steps", self.max_steps);
    field("time_limit", self.time_limit_minutes);
    field("log_every", self.log_every);
    field("save_every", self.save_every);
    field("out", self.out);
  }
  nlohmann::json to_json() const;
  // Throws nlohmann::json::exception for a missing or malformed setting.
  static TrainSettings from_json(const nlohmann::json& json);
};

// What a resumed run may change (the flags given with --resume): each set only when given.
struct TrainOverrides {
  std::optional<std::size_t> epochs, max_steps, log_every, save_every, threads;
  std::optional<double> time_limit_minutes;
  std::optional<std::string> out;
  std::optional<std::string> precision;
  void apply(TrainSettings& settings) const;
};

struct TrainOptions {
  std::shared_ptr<Task> task;        // a new training: the task, set by its flags
  std::shared_ptr<ModelKind> model;  // and the kind of model that reads its input, set by its flags
  TrainSettings settings;
  std::string resume;           // a training state file to go on from (the task, model and settings come from it)
  TrainOverrides overrides;     // with resume: the settings given on the command line
  bool detect_anomaly = false;  // the tape checks every output and gradient for NaN/Inf (names the op)
  bool timings = false;         // at the end, where the steps' time went
  bool force = false;           // replace a model file that --out names (and its training state)
};

// Where `attend train --out OUT` keeps its training state, for --resume: OUT with ".last" before the extension
// (m.safetensors → m.last.safetensors), as PyTorch Lightning's last.ckpt beside the best checkpoint.
std::string last_state_path(const std::string& out);

struct EvalOptions {
  std::string model_path;
  std::string split = "test";
  std::string data;      // the data file, when it is no longer where training read it
  std::string data_dir;  // a data folder searched first for a data set's files (data/locate.hpp)
  std::string output;    // write the outputs here, one per line as tokens joined by spaces
  std::size_t beam = 1;
  std::size_t threads = 1;
  bool force = false;                 // replace the file --output names if it exists
  std::string precision = "float32";  // of the decoding's products (int8: weights quantized)
};

struct PredictOptions {
  std::string model_path;
  std::vector<std::string> inputs;  // none: read lines from standard input
  std::vector<std::string> images;  // image models: PGM files (then no inputs)
  std::size_t beam = 1;
  std::string svg;                  // attention picture; several inputs: FILE-1.svg, FILE-2.svg, …
  std::size_t layer = 0, head = 0;  // which attention the picture shows (Model::choose_attention); 0: the default
  std::size_t threads = 1;
  bool scores = false;                // after each output, a TAB and its score log p(y | x) / |y|
  bool force = false;                 // replace the pictures --svg names if they exist
  std::string precision = "float32";  // of the decoding's products (int8: weights quantized)
};

// `attend serve` (apps/serve/, docs/reference/serve.md): the models behind an HTTP API, and its limits.
struct ServeOptions {
  std::vector<std::string> model_paths;  // each served under its file's name without the extension
  std::string host = "127.0.0.1";
  unsigned port = 8080;  // 0: any free port (the ready line says which)
  std::size_t threads = 1;
  std::string precision = "float32";       // of the decoding's products
  std::size_t max_batch = 32;              // inputs decoded together, across clients
  std::size_t max_wait_ms = 5;             // how long the oldest waiting input waits for others
  std::size_t max_queue = 1024;            // inputs waiting for a model, beyond which a request is answered 503
  std::size_t max_inputs = 64;             // inputs in one request (413 beyond)
  std::size_t max_beam = 16;               // the widest beam a request may ask for
  std::size_t max_attribution_steps = 64;  // integrated gradients' points an explain request may ask for
  std::size_t max_body = 1 << 20;          // bytes of a request's body (413 beyond)
  std::size_t max_connections = 256;
  std::size_t read_timeout_ms = 10000;    // to read a whole request, and to write an answer
  std::size_t heartbeat_ms = 15000;       // a stream's quiet time after which a comment line goes out
  std::string api_key_file;               // the keys LibreTranslate's endpoints require, one a line; "": none
  std::vector<std::string> cors_origins;  // origins whose pages may call the server ("*": any); none by default
};

struct DataOptions {
  // "": the task's data (below); "fetch": download the recorded data sets (apps/fetch.hpp); "list": each data set and
  // where it is found; "where": the path of each named data set or file (data/locate.hpp's rule)
  std::string action;
  FetchOptions fetch;
  std::vector<std::string> where;
  std::string data_dir;  // --data-dir of list and where
  std::shared_ptr<Task> task;
  std::string write;   // folder to write the splits and vocabularies (image tasks: the held-out images and their
                       // captions) to; empty: only the summary
  bool force = false;  // write into a folder that is not empty (files of the same names are replaced)
};

int run_train(const TrainOptions& options);
// `attend info`: the machine, the build, the kernels each precision runs (apps/info.cpp).
struct InfoOptions {
  bool json = false;  // one JSON object instead of lines
};

int run_data(const DataOptions& options);
int run_info(const InfoOptions& options);
int run_eval(const EvalOptions& options);
int run_predict(const PredictOptions& options);
// Serves until SIGINT or SIGTERM (exit 0). Built only with the HTTP server (the meson option `serve`).
int run_serve(const ServeOptions& options);

// Sets the number of OpenBLAS threads (serve; eval, predict and training's validation for a lone batch, their batches
// otherwise running one a thread with one OpenBLAS thread each, decode_batches; a training step's threads are its
// batch shards, each calling OpenBLAS with one thread).
void set_threads(std::size_t threads);
// The cores this process may run on (its CPU affinity): the default of --threads.
std::size_t available_cores();

}  // namespace attend::app
