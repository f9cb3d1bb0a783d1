// The training state and its file format (training_state.hpp), and the training settings as JSON (commands.hpp).
#include "apps/training_state.hpp"

namespace attend::app {

nlohmann::json TrainSettings::to_json() const {
  nlohmann::json json = nlohmann::json::object();
  fields(*this, [&](const char* key, const auto& value) { json[key] = value; });
  if (warmup > 0) json["warmup"] = warmup;
  json["threads"] = threads;
  json["ranks"] = ranks;
  return json;
}

TrainSettings TrainSettings::from_json(const nlohmann::json& json) {
  TrainSettings settings;
  fields(settings, [&](const char* key, auto& value) { value = json.at(key).get<std::decay_t<decltype(value)>>(); });
  if (json.contains("warmup")) settings.warmup = json.at("warmup").get<std::size_t>();
  if (json.contains("threads")) settings.threads = json.at("threads").get<std::size_t>();
  if (json.contains("ranks")) settings.ranks = json.at("ranks").get<std::size_t>();
  if (settings.threads == 0) throw std::invalid_argument("threads: 0");
  return settings;
}

void TrainOverrides::apply(TrainSettings& settings) const {
  if (epochs) settings.epochs = *epochs;
  if (max_steps) settings.max_steps = *max_steps;
  if (time_limit_minutes) settings.time_limit_minutes = *time_limit_minutes;
  if (log_every) settings.log_every = *log_every;
  if (save_every) settings.save_every = *save_every;
  if (threads) settings.threads = *threads;
  if (out) settings.out = *out;
}

std::string last_state_path(const std::string& out) {
  const std::size_t slash = out.find_last_of('/');
  const std::size_t name = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = out.find_last_of('.');
  if (dot == std::string::npos || dot <= name) return out + ".last";  // no extension (a leading dot is the name's)
  return out.substr(0, dot) + ".last" + out.substr(dot);
}

nlohmann::json state_to_json(const TrainingState& state, const TrainSettings& settings, nn::Module<float>& model) {
  nlohmann::json generators = nlohmann::json::object();
  for (const auto& [name, rng] : model.generators()) generators[name] = nlohmann::json(rng->state());
  return {{"step", state.step},
          {"epoch", state.epoch},
          {"batches_done", state.batches_done},
          {"epoch_order", nlohmann::json(state.epoch_order)},
          {"best", state.best},
          {"best_text", state.best_text},
          {"seconds", state.seconds},
          {"generators", generators},
          {"options", settings.to_json()}};
}

TrainingState resume_state(const ModelFile& file, const std::string& path, const TrainOverrides& overrides,
                           TrainSettings& settings) {
  const nlohmann::json* state = nullptr;
  if (file.training.is_object() && file.training.contains("state")) state = &file.training.at("state");
  if (!state) {
    throw InputError("--resume " + path +
                     ": the file holds no training state (it was not written by `attend train` "
                     "of this version)");
  }
  TrainingState result;
  try {
    settings = TrainSettings::from_json(state->at("options"));
    overrides.apply(settings);
    result.step = state->at("step").get<std::size_t>();
    result.epoch = state->at("epoch").get<std::size_t>();
    result.batches_done = state->at("batches_done").get<std::size_t>();
    result.epoch_order = state->at("epoch_order").get<Rng::State>();
    result.best = state->at("best").get<double>();
    result.best_text = state->at("best_text").get<std::string>();
    result.seconds = state->at("seconds").get<double>();
    const nlohmann::json& generators = state->at("generators");
    const nn::NamedGenerators named = file.model->module().generators();
    if (generators.size() != named.size()) throw std::invalid_argument("the model's random generators do not match");
    for (const auto& [name, rng] : named) rng->set_state(generators.at(name).get<Rng::State>());
    Rng check;
    check.set_state(result.epoch_order);
  } catch (const nlohmann::json::exception& e) {
    throw InputError("--resume " + path + ": damaged training state (" + e.what() + ")");
  } catch (const std::invalid_argument& e) {
    throw InputError("--resume " + path + ": damaged training state (" + e.what() + ")");
  }
  if (settings.out.empty()) throw InputError("--resume " + path + ": damaged training state (no output file)");
  return result;
}

}  // namespace attend::app
