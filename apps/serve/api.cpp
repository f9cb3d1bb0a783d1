// attend serve's JSON API (api.hpp).
#include "apps/serve/api.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "data/image.hpp"
#include "precision/precision.hpp"

namespace attend::app::serve {

namespace {

using Json = nlohmann::json;

// A request is an object of fields, one of them an array of strings: nothing deeper.
constexpr int max_depth = 2;

// The parser's message without its "[json.exception.parse_error.101] " prefix.
std::string parser_message(const std::string& what) {
  const std::size_t end = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && end != std::string::npos ? what.substr(end + 2) : what;
}

Json parse_json(const std::string& body) {
  const Json::parser_callback_t callback = [](int depth, Json::parse_event_t event, Json&) {
    if (depth > max_depth && (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start))
      throw ApiError(400, "the JSON nests deeper than a request does (an object of fields, \"inputs\" an array)");
    return true;
  };
  try {
    return Json::parse(body, callback);
  } catch (const Json::exception& e) {  // a syntax error, or a number out of range (1e400)
    throw ApiError(400, "malformed JSON: " + parser_message(e.what()));
  }
}

std::size_t whole_field(const Json& value, const char* name, std::size_t low, std::size_t high, const char* flag) {
  if (!value.is_number_integer() || value.get<std::int64_t>() < static_cast<std::int64_t>(low) ||
      (value.is_number_unsigned() && value.get<std::uint64_t>() > high) ||
      (!value.is_number_unsigned() && value.get<std::int64_t>() > static_cast<std::int64_t>(high))) {
    throw ApiError(400, std::string("\"") + name + "\" must be a whole number from " + std::to_string(low) + " to " +
                            std::to_string(high) + " (" + flag + "), not " + value.dump());
  }
  return value.get<std::size_t>();
}

bool bool_field(const Json& value, const char* name) {
  if (!value.is_boolean())
    throw ApiError(400, std::string("\"") + name + "\" must be true or false, not " + value.dump());
  return value.get<bool>();
}

std::vector<std::string> inputs_field(const Json& value, const RequestLimits& limits) {
  if (!value.is_array())
    throw ApiError(400, "\"inputs\" must be an array of strings, not " + std::string(value.type_name()));
  if (value.empty()) throw ApiError(400, "\"inputs\" is empty: give at least one input");
  if (value.size() > limits.max_inputs) {
    throw ApiError(413, std::to_string(value.size()) + " inputs: a request holds at most " +
                            std::to_string(limits.max_inputs) + " (--max-inputs)");
  }
  std::vector<std::string> inputs;
  for (std::size_t k = 0; k < value.size(); ++k) {
    if (!value[k].is_string()) {
      throw ApiError(400, "\"inputs\"[" + std::to_string(k) + "] must be a string, not " + value[k].type_name());
    }
    inputs.push_back(value[k].get<std::string>());
  }
  return inputs;
}

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// A request's body: a JSON object.
std::string string_field(const Json& value, const char* name) {
  if (!value.is_string())
    throw ApiError(400, std::string("\"") + name + "\" must be a string, not " + value.type_name());
  return value.get<std::string>();
}

}  // namespace

nlohmann::json request_object(const std::string& body) {
  Json json = parse_json(body);
  if (!json.is_object()) throw ApiError(400, std::string("the body must be a JSON object, not ") + json.type_name());
  return json;
}

PredictRequest parse_predict_request(const std::string& body, const RequestLimits& limits) {
  const Json json = request_object(body);
  PredictRequest request;
  for (const auto& [key, value] : json.items()) {
    if (key == "model") {
      request.model = string_field(value, "model");
    } else if (key == "inputs") {
      request.inputs = inputs_field(value, limits);
    } else if (key == "beam") {
      request.beam = whole_field(value, "beam", 1, limits.max_beam, "--max-beam");
    } else if (key == "scores") {
      request.scores = bool_field(value, "scores");
    } else if (key == "attention") {
      request.attention = bool_field(value, "attention");
    } else if (key == "stream") {
      request.stream = bool_field(value, "stream");
    } else {
      throw ApiError(
          400, "unknown field " + Json(key).dump() + " (a request has model, inputs, beam, scores, attention, stream)");
    }
  }
  if (!json.contains("inputs")) throw ApiError(400, "no \"inputs\": give an array of inputs");
  if (request.stream && request.inputs.size() != 1) {
    throw ApiError(
        400, "\"stream\": a stream answers one input, and \"inputs\" holds " + std::to_string(request.inputs.size()));
  }
  return request;
}

namespace {

// A precision this process can decode in, by name (precision/precision.hpp).
std::string precision_field(const Json& value) {
  const std::string name = string_field(value, "precision");
  const PrecisionBackend* backend = find_precision(name);
  if (backend == nullptr) {
    std::string names;
    for (const std::string& known : precision_names()) names += (names.empty() ? "" : ", ") + known;
    throw ApiError(400, "\"precision\": no precision is named " + Json(name).dump() + " (there are " + names + ")");
  }
  if (const std::string why = backend->unavailable(); !why.empty())
    throw ApiError(400, "\"precision\": " + name + " cannot be used here: " + why);
  return name;
}

}  // namespace

std::string decoding_precision(const ModelFile& file) { return file.products ? file.products->name() : "float32"; }

std::vector<std::string> available_precisions() {
  std::vector<std::string> names;
  for (const PrecisionBackend& backend : precisions())
    if (backend.unavailable().empty()) names.push_back(backend.name);
  return names;
}

ExplainRequest parse_explain_request(const std::string& body, const RequestLimits& limits) {
  const Json json = request_object(body);
  ExplainRequest request;
  for (const auto& [key, value] : json.items()) {
    if (key == "model") {
      request.model = string_field(value, "model");
    } else if (key == "input") {
      request.input = string_field(value, "input");
    } else if (key == "beam") {
      request.beam = whole_field(value, "beam", 1, limits.max_beam, "--max-beam");
    } else if (key == "attribution") {
      request.attribution = bool_field(value, "attribution");
    } else if (key == "steps") {
      request.steps = whole_field(value, "steps", 1, limits.max_attribution_steps, "--max-attribution-steps");
    } else if (key == "precision") {
      request.precision = precision_field(value);
    } else {
      throw ApiError(400, "unknown field " + Json(key).dump() +
                              " (an explain request has model, input, beam, attribution, steps, precision)");
    }
  }
  if (!json.contains("input")) throw ApiError(400, "no \"input\": give the input to explain");
  if (!json.contains("steps")) request.steps = std::min(request.steps, limits.max_attribution_steps);
  return request;
}

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A query's name or value with its escapes undone ('+' is a space, %XX a byte).
std::string percent_decoded(const std::string& text) {
  std::string decoded;
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (text[at] == '+') {
      decoded += ' ';
    } else if (text[at] != '%') {
      decoded += text[at];
    } else if (at + 2 < text.size() && hex_value(text[at + 1]) >= 0 && hex_value(text[at + 2]) >= 0) {
      decoded += static_cast<char>(hex_value(text[at + 1]) * 16 + hex_value(text[at + 2]));
      at += 2;
    } else {
      throw ApiError(400, "the query or form has a '%' that is not followed by two hexadecimal digits");
    }
  }
  return decoded;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> form_fields(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> fields;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('&', at), text.size());
    const std::string pair = text.substr(at, end - at);
    at = end + 1;
    if (pair.empty()) continue;
    const std::size_t equals = pair.find('=');
    fields.emplace_back(percent_decoded(pair.substr(0, equals)),
                        equals == std::string::npos ? "" : percent_decoded(pair.substr(equals + 1)));
  }
  return fields;
}

ExamplesRequest parse_examples_query(const std::string& query) {
  ExamplesRequest request;
  bool model_given = false, count_given = false;
  for (const auto& [name, value] : form_fields(query)) {
    const std::string shown = nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    bool& given = name == "model" ? model_given : count_given;
    if (name != "model" && name != "count")
      throw ApiError(400, "unknown query parameter " + shown + " (GET /v1/examples takes model, count)");
    if (given) throw ApiError(400, "the query gives " + shown + " twice");
    given = true;
    if (name == "model") {
      request.model = value;
      continue;
    }
    std::size_t count = 0;
    const auto [end_of_number, error] = std::from_chars(value.data(), value.data() + value.size(), count);
    if (error != std::errc() || end_of_number != value.data() + value.size() || count < 1 || count > max_examples) {
      throw ApiError(400, "\"count\" must be a whole number from 1 to " + std::to_string(max_examples) + ", not " +
                              nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    request.count = count;
  }
  return request;
}

std::string decode_base64(const std::string& text) {
  if (text.size() % 4 != 0) {
    throw std::invalid_argument("not base64: " + std::to_string(text.size()) + " characters, not a multiple of 4");
  }
  std::string bytes;
  bytes.reserve(text.size() / 4 * 3);
  for (std::size_t at = 0; at < text.size(); at += 4) {
    const bool last = at + 4 == text.size();
    const std::size_t padding = last ? (text[at + 3] == '=') + (text[at + 2] == '=' && text[at + 3] == '=') : 0;
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int value = k >= 4 - padding ? 0 : base64_value(text[at + k]);
      if (value < 0) {
        throw std::invalid_argument("not base64: character " + std::to_string(at + k + 1) + " is not of its alphabet");
      }
      group = (group << 6) | static_cast<std::uint32_t>(value);
    }
    for (std::size_t k = 0; k < 3 - padding; ++k) bytes += static_cast<char>((group >> (16 - 8 * k)) & 0xff);
  }
  return bytes;
}

std::string encode_base64(const std::string& bytes) {
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t at = 0; at < bytes.size(); at += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - at);
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 3; ++k) group = (group << 8) | (k < n ? static_cast<unsigned char>(bytes[at + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) text += k <= n ? alphabet[(group >> (18 - 6 * k)) & 63] : '=';
  }
  return text;
}

std::string body_of(const nlohmann::ordered_json& json) {
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string error_body(const std::string& message) { return body_of({{"error", message}}); }

nlohmann::ordered_json model_json(const std::string& name, const ModelFile& file, std::size_t parameters) {
  nlohmann::ordered_json json;
  json["name"] = name;
  json["kind"] = std::string(file.model->format()).substr(std::string("attend-").size());
  json["task"] = file.task->name();
  const bool image = file.task->input() == InputKind::image;
  json["input"] = image ? "image" : "text";
  if (image) {
    json["image_size"] = {file.task->image_size().first, file.task->image_size().second};
  } else {
    json["source_vocabulary"] = file.source_vocabulary.size();
    json["max_input_length"] = file.task->settings.max_source_length;
  }
  json["target_vocabulary"] = file.target_vocabulary.size();
  json["parameters"] = parameters;
  json["description"] = file.model->describe();
  json["attention"] = file.model->has_attention();
  json["precision"] = decoding_precision(file);
  json["precisions"] = available_precisions();
  nlohmann::ordered_json training;
  if (file.training.is_object()) {
    for (const auto& [key, value] : file.training.items())
      if (key != "state") training[key] = value;
  }
  json["training"] = training;
  return json;
}

ReadInput read_input(const ModelFile& file, const std::string& input, std::size_t k) {
  const std::string place = "input " + std::to_string(k + 1);
  ReadInput read;
  try {
    if (file.task->input() == InputKind::image) {
      const auto [height, width] = file.task->image_size();
      read.image = data::parse_pgm(decode_base64(input), place, height, width);
    } else {
      read.source = file.task->encode_source(file.source_vocabulary, input);
      read.tokens = file.task->source_tokens(input);
    }
  } catch (const InputError& e) {
    read.error = place + ": " + e.what();
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    read.error = what.rfind(place, 0) == 0 ? what : place + ": " + what;
  }
  return read;
}

namespace {

// What an output's attention runs over and down, into `json`: the image's grid ("grid") or the input's tokens
// ("source"), and the output's tokens, the end token included when it ended ("target").
void axes_json(nlohmann::ordered_json& json, const ModelFile& file, const AttentionLayout& layout,
               const ReadInput& input, const models::Hypothesis& output) {
  const nlohmann::ordered_json axes = input_json(layout, input);
  for (const auto& [key, value] : axes.items()) json[key] = value;
  std::vector<std::string> rows;
  for (std::int64_t id : output.tokens) rows.push_back(file.target_vocabulary.token(id));
  if (output.finished) rows.push_back(file.target_vocabulary.token(models::eos_id));
  json["target"] = rows;
}

nlohmann::ordered_json attention_json(const ModelFile& file, const AttentionLayout& layout, const ReadInput& input,
                                      const models::Hypothesis& output) {
  nlohmann::ordered_json json;
  axes_json(json, file, layout, input, output);
  json["layers"] = layout.layers;
  json["heads"] = layout.heads;
  const std::size_t maps = layout.layers * layout.heads;
  nlohmann::ordered_json weights = nlohmann::ordered_json::array();
  for (std::size_t l = 0; l < layout.layers; ++l) {
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (std::size_t h = 0; h < layout.heads; ++h) {
      nlohmann::ordered_json matrix = nlohmann::ordered_json::array();
      for (const std::vector<float>& row : output.attention) {
        const std::size_t S = row.size() / maps;
        matrix.push_back(float_array(row.data() + (l * layout.heads + h) * S, S));
      }
      heads.push_back(std::move(matrix));
    }
    weights.push_back(std::move(heads));
  }
  json["weights"] = std::move(weights);
  return json;
}

}  // namespace

nlohmann::ordered_json output_json(const ModelFile& file, const AttentionLayout& layout, const ReadInput& input,
                                   const std::string& text_input, const models::Hypothesis& output,
                                   const PredictRequest& request) {
  const std::vector<std::string> tokens = file.target_vocabulary.decode(output.tokens);
  nlohmann::ordered_json json;
  json["output"] = file.task->join_target(tokens);
  if (request.scores) json["score"] = output.score;
  const std::string note = file.task->output_note(text_input, tokens);
  if (!note.empty()) json["note"] = note;
  if (request.attention) json["attention"] = attention_json(file, layout, input, output);
  return json;
}

namespace {

// One kind of attention: weights[layer][head][query][key].
nlohmann::ordered_json maps_json(const AttentionMaps& maps) {
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (std::size_t l = 0; l < maps.layers; ++l) {
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (std::size_t h = 0; h < maps.heads; ++h) {
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (std::size_t q = 0; q < maps.queries; ++q) {
        rows.push_back(
            float_array(maps.weights.data() + ((l * maps.heads + h) * maps.queries + q) * maps.keys, maps.keys));
      }
      heads.push_back(std::move(rows));
    }
    layers.push_back(std::move(heads));
  }
  return {{"name", maps.name}, {"layers", maps.layers}, {"heads", maps.heads}, {"weights", std::move(layers)}};
}

// One output token's attention row (every map side by side, as Hypothesis::attention's) as weights[layer][head][key];
// [] for an empty row.
nlohmann::ordered_json row_json(const std::vector<float>& row, const AttentionLayout& layout) {
  nlohmann::ordered_json attention = nlohmann::ordered_json::array();
  const std::size_t keys = row.size() / std::max<std::size_t>(layout.layers * layout.heads, 1);
  for (std::size_t l = 0; l < layout.layers && keys > 0; ++l) {
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (std::size_t h = 0; h < layout.heads; ++h)
      heads.push_back(float_array(row.data() + (l * layout.heads + h) * keys, keys));
    attention.push_back(std::move(heads));
  }
  return attention;
}

// The search's tree: per step its nodes {token, log_prob, parent, finished, attention[layer][head][key]}.
nlohmann::ordered_json tree_json(const ModelFile& file, const Explanation& explanation) {
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const auto& step : explanation.tree) {
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
    for (const models::SearchNode& node : step) {
      nodes.push_back({{"token", file.target_vocabulary.token(node.token)},
                       {"log_prob", node.log_prob},
                       {"parent", node.parent},
                       {"finished", node.finished},
                       {"attention", row_json(node.attention, explanation.layout)}});
    }
    steps.push_back(std::move(nodes));
  }
  return steps;
}

}  // namespace

nlohmann::ordered_json input_json(const AttentionLayout& layout, const ReadInput& input) {
  nlohmann::ordered_json json;
  if (layout.grid_rows > 0) {
    json["grid"] = {layout.grid_rows, layout.grid_columns};
  } else {
    json["source"] = input.tokens;
  }
  return json;
}

nlohmann::ordered_json token_json(const ModelFile& file, const AttentionLayout& layout, std::size_t index,
                                  const models::SettledToken& token, const std::vector<std::int64_t>& so_far,
                                  bool attention) {
  nlohmann::ordered_json json;
  json["index"] = index;
  json["token"] = file.target_vocabulary.token(token.token);
  json["text"] = file.task->join_target(file.target_vocabulary.decode(so_far));
  json["log_prob"] = token.log_prob;
  if (attention) json["attention"] = row_json(token.attention, layout);
  return json;
}

namespace {

// A (J, S) tensor as J rows.
nlohmann::ordered_json rows_json(const Tensor<float>& values) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const std::size_t S = values.shape()[1];
  for (std::size_t j = 0; j < values.shape()[0]; ++j) rows.push_back(float_array(values.data() + j * S, S));
  return rows;
}

// Each method's rows, and per row their rank correlation with the cross-attention (its last layer's heads averaged)
// when the model has one of the same shape.
nlohmann::ordered_json attribution_json(const Explanation& explanation) {
  std::vector<float> attention;  // (J, S)
  std::size_t J = 0, S = 0;
  const bool image = explanation.extras.contains("pixels");
  if (image) {  // an image model's attribution is over the pixels: set beside the attention spread over them
    const nlohmann::ordered_json& maps = explanation.extras["pixels"]["maps"];
    J = maps.size();
    S = J ? maps[0].size() : 0;
    for (const auto& map : maps)
      for (const auto& v : map) attention.push_back(v.get<float>());
  } else if (!explanation.attention.empty() && explanation.attention[0].name == "cross") {
    const AttentionMaps& cross = explanation.attention[0];
    J = cross.queries;
    S = cross.keys;
    attention.assign(J * S, 0.0f);
    const std::size_t last = cross.layers - 1;
    for (std::size_t h = 0; h < cross.heads; ++h) {
      const float* map = cross.weights.data() + (last * cross.heads + h) * J * S;
      for (std::size_t e = 0; e < J * S; ++e) attention[e] += map[e] / static_cast<float>(cross.heads);
    }
  }
  nlohmann::ordered_json methods = nlohmann::ordered_json::array();
  for (const models::Attribution<float>& a : explanation.attribution) {
    nlohmann::ordered_json method{{"name", models::to_string(a.method)}};
    if (a.method == models::AttributionMethod::integrated_gradients) method["steps"] = a.steps;
    method["rows"] = rows_json(a.rows);
    method["values"] = rows_json(a.values);
    if (!a.change.empty()) method["change"] = a.change;
    if (a.rows.shape()[0] == J && a.rows.shape()[1] == S) {
      nlohmann::ordered_json agreement = nlohmann::ordered_json::array();
      for (std::size_t j = 0; j < J; ++j) {
        agreement.push_back(models::rank_correlation(a.rows.data() + j * S, attention.data() + j * S, S));
      }
      method["agreement"] = std::move(agreement);
    }
    methods.push_back(std::move(method));
  }
  return {{"baseline", image ? "blank" : "padding"}, {"methods", std::move(methods)}};
}

}  // namespace

nlohmann::ordered_json explanation_json(const ModelFile& file, const ReadInput& input, const std::string& text_input,
                                        const Explanation& explanation) {
  const models::Hypothesis& output = explanation.output;
  const std::vector<std::string> tokens = file.target_vocabulary.decode(output.tokens);
  nlohmann::ordered_json json;
  json["output"] = file.task->join_target(tokens);
  json["score"] = output.score;
  json["log_prob"] = output.log_prob;
  json["finished"] = output.finished;
  const std::string note = file.task->output_note(text_input, tokens);
  if (!note.empty()) json["note"] = note;
  axes_json(json, file, explanation.layout, input, output);
  nlohmann::ordered_json attention = nlohmann::ordered_json::array();
  for (const AttentionMaps& maps : explanation.attention) attention.push_back(maps_json(maps));
  json["attention"] = std::move(attention);
  json["beam"] = tree_json(file, explanation);
  for (const auto& [name, extra] : explanation.extras.items()) json[name] = extra;  // the kind's own
  if (!explanation.attribution.empty()) json["attribution"] = attribution_json(explanation);
  return json;
}

nlohmann::ordered_json examples_json(const std::string& name, const ModelFile& file,
                                     const std::vector<Example>& examples, std::size_t count) {
  const bool image = file.task->input() == InputKind::image;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < std::min(count, examples.size()); ++k) {
    const Example& example = examples[k];
    nlohmann::ordered_json references = nlohmann::ordered_json::array();
    for (const auto& reference : example.references) references.push_back(file.task->join_target(reference));
    list.push_back(
        {{"input", image ? encode_base64(data::pgm_bytes(example.image)) : file.task->join_source(example.source)},
         {"references", std::move(references)}});
  }
  return {{"model", name}, {"split", "test"}, {"total", examples.size()}, {"examples", std::move(list)}};
}

}  // namespace attend::app::serve
