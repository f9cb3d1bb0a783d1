// Where training stands, and its file format: every file `attend train` writes (the best model OUT and the training
// state OUT.last.safetensors) holds, beside the weights and the optimizer's state, the metadata "training"."state" —
// the step, the epoch and the batches done of it, the batch-order generator, the best validation score, the training
// time, every random generator of the model, and the training settings (commands.hpp's TrainSettings) — so that
// `--resume FILE` goes on exactly as if training had never stopped: the same batches in the same order, the same
// random numbers, the same updates.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "apps/commands.hpp"
#include "apps/model_file.hpp"

namespace attend::app {

// The training curve, kept in the state so that a resumed run continues it exactly: the mean training loss of each
// window of `every` steps (windows end at the steps that are multiples of `every`, counted from the first), and the
// validation score after each epoch, both at the step where they were taken.
struct TrainingCurve {
  std::vector<std::pair<std::size_t, double>> loss, validation;
  std::string metric;     // the validation score's name ("exact_match", "bleu")
  double window_sum = 0;  // the window in progress
  std::size_t window_count = 0;

  // The loss of step `step` (1, 2, …): added to the window, which ends there when step is a multiple of `every`.
  void add_loss(std::size_t step, double value, std::size_t every);
  nlohmann::json to_json() const;
  static TrainingCurve from_json(const nlohmann::json& json);  // throws nlohmann::json::exception when damaged
};

// The curve as a picture (OUT.curve.svg): the training loss above, the validation score below (on an axis spanning at
// least a tenth of the score's scale), both against the epoch (step / steps_per_epoch); `name` titles it.
std::string curve_svg(const TrainingCurve& curve, std::size_t steps_per_epoch, const std::string& name);

// Where the curve of the model file `out` goes: "m.safetensors" → "m.curve.svg".
std::string curve_path(const std::string& out);

struct TrainingState {
  std::size_t step = 0;          // optimizer steps taken
  std::size_t epoch = 1;         // the epoch in progress
  std::size_t batches_done = 0;  // of that epoch's batch order
  Rng::State epoch_order{};      // the batch-order generator before it drew this epoch's order
  double best = -1;              // best validation score so far (-1: none yet)
  std::string best_text;         // "bleu: 23.4"
  double seconds = 0;            // training time over all runs
  TrainingCurve curve;
};

// The state as the file keeps it, with the settings and the model's random generators.
nlohmann::json state_to_json(const TrainingState& state, const TrainSettings& settings, nn::Module<float>& model);

// The state saved in `file` (read by load_model_file from `path`), its settings with the overrides applied, and the
// model's random generators set as they were. Throws InputError naming the file when it holds no training state or a
// damaged one.
TrainingState resume_state(const ModelFile& file, const std::string& path, const TrainOverrides& overrides,
                           TrainSettings& settings);

}  // namespace attend::app
