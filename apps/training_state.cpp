// The training state and its file format (training_state.hpp), and the training settings as JSON (commands.hpp).
#include "apps/training_state.hpp"

#include "apps/model_file.hpp"
#include "plot/svg.hpp"

namespace attend::app {

nlohmann::json TrainSettings::to_json() const {
  nlohmann::json json = nlohmann::json::object();
  fields(*this, [&](const char* key, const auto& value) { json[key] = value; });
  if (warmup > 0) json["warmup"] = warmup;
  if (lr_drop > 0) json["lr_drop"] = lr_drop;
  if (precision != "float32") json["precision"] = precision;
  json["threads"] = threads;
  json["ranks"] = ranks;
  return json;
}

// Files written before a model kind kept its own flags in the model's configuration also hold "decoder" here (the
// recurrent decoder's kind): ignored, as every key not read below.
TrainSettings TrainSettings::from_json(const nlohmann::json& json) {
  TrainSettings settings;
  fields(settings, [&](const char* key, auto& value) { value = json.at(key).get<std::decay_t<decltype(value)>>(); });
  if (json.contains("warmup")) settings.warmup = json.at("warmup").get<std::size_t>();
  if (json.contains("lr_drop")) settings.lr_drop = json.at("lr_drop").get<double>();
  if (json.contains("threads")) settings.threads = json.at("threads").get<std::size_t>();
  if (json.contains("ranks")) settings.ranks = json.at("ranks").get<std::size_t>();
  if (settings.threads == 0) throw std::invalid_argument("threads: 0");
  if (json.contains("precision")) {
    const std::string name = json.at("precision").get<std::string>();
    const PrecisionBackend* precision = find_precision(name);
    if (precision == nullptr || !precision->trains) {  // int8 decodes; it does not train
      std::string names;
      for (const std::string& n : precision_names(true)) names += (names.empty() ? "" : ", ") + n;
      throw std::invalid_argument("precision: " + name + " (" + names + ")");
    }
    settings.precision = name;
  }
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
  if (precision) settings.precision = *precision;
}

namespace {

// Where OUT's extension starts (its last dot), or OUT's length when it has none (a leading dot is the name's).
std::size_t extension_start(const std::string& out) {
  const std::size_t slash = out.find_last_of('/');
  const std::size_t name = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = out.find_last_of('.');
  return dot == std::string::npos || dot <= name ? out.size() : dot;
}

}  // namespace

std::string last_state_path(const std::string& out) {
  const std::size_t dot = extension_start(out);
  return out.substr(0, dot) + ".last" + out.substr(dot);
}

void TrainingCurve::add_loss(std::size_t step, double value, std::size_t every) {
  window_sum += value;
  ++window_count;
  if (step % every != 0) return;
  loss.emplace_back(step, window_sum / static_cast<double>(window_count));
  window_sum = 0;
  window_count = 0;
}

nlohmann::json TrainingCurve::to_json() const {
  return {{"loss", loss}, {"validation", validation}, {"metric", metric}, {"window", {window_sum, window_count}}};
}

TrainingCurve TrainingCurve::from_json(const nlohmann::json& json) {
  TrainingCurve curve;
  curve.loss = json.at("loss").get<std::vector<std::pair<std::size_t, double>>>();
  curve.validation = json.at("validation").get<std::vector<std::pair<std::size_t, double>>>();
  curve.metric = json.at("metric").get<std::string>();
  curve.window_sum = json.at("window").at(0).get<double>();
  curve.window_count = json.at("window").at(1).get<std::size_t>();
  return curve;
}

std::string curve_svg(const TrainingCurve& curve, std::size_t steps_per_epoch, const std::string& name) {
  const auto series = [&](const std::string& series_name, const std::vector<std::pair<std::size_t, double>>& points) {
    plot::Series s{series_name, {}, {}};
    for (const auto& [step, value] : points) {
      s.x.push_back(static_cast<double>(step) / static_cast<double>(steps_per_epoch));
      s.y.push_back(value);
    }
    return s;
  };
  std::vector<plot::LineChart> charts;
  if (!curve.loss.empty()) {
    charts.push_back({{series("training loss", curve.loss)}, {name + ": training loss", "epoch", "loss"}});
  }
  if (!curve.validation.empty()) {
    // the score's axis spans at least a tenth of its scale (0 to 1, or to 100 in percent), within it: a change in the
    // fourth decimal is not drawn as a cliff
    plot::LineChartOptions options{name + ": validation " + curve.metric + " after each epoch", "epoch", curve.metric};
    options.y_floor = 0;
    options.y_ceiling = is_percent_score(curve.metric) ? 100 : 1;
    options.y_span_min = 0.1 * options.y_ceiling;
    charts.push_back({{series("validation " + curve.metric, curve.validation)}, options});
  }
  return plot::line_charts_svg(charts, name + ": training curve");
}

std::string curve_path(const std::string& out) { return out.substr(0, extension_start(out)) + ".curve.svg"; }

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
          {"curve", state.curve.to_json()},
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
    if (state->contains("curve")) result.curve = TrainingCurve::from_json(state->at("curve"));  // older files: none
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
