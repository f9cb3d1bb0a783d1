// Where training stands, and its file format: every file `attend train` writes (the best model OUT and the training
// state OUT.last.safetensors) holds, beside the weights and the optimizer's state, the metadata "training"."state" —
// the step, the epoch and the batches done of it, the batch-order generator, the best validation score, the training
// time, every random generator of the model, and the training settings (commands.hpp's TrainSettings) — so that
// `--resume FILE` goes on exactly as if training had never stopped: the same batches in the same order, the same
// random numbers, the same updates.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "apps/commands.hpp"
#include "apps/model_file.hpp"

namespace attend::app {

struct TrainingState {
  std::size_t step = 0;          // optimizer steps taken
  std::size_t epoch = 1;         // the epoch in progress
  std::size_t batches_done = 0;  // of that epoch's batch order
  Rng::State epoch_order{};      // the batch-order generator before it drew this epoch's order
  double best = -1;              // best validation score so far (-1: none yet)
  std::string best_text;         // "bleu: 23.4"
  double seconds = 0;            // training time over all runs
};

// The state as the file keeps it, with the settings and the model's random generators.
nlohmann::json state_to_json(const TrainingState& state, const TrainSettings& settings, nn::Module<float>& model);

// The state saved in `file` (read by load_model_file from `path`), its settings with the overrides applied, and the
// model's random generators set as they were. Throws InputError naming the file when it holds no training state or a
// damaged one.
TrainingState resume_state(const ModelFile& file, const std::string& path, const TrainOverrides& overrides,
                           TrainSettings& settings);

}  // namespace attend::app
