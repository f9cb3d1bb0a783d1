// Internal (not installed): reading a field of a model configuration's JSON object with an error that names it, for
// the configurations of seq2seq.hpp and captioner.hpp.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace attend::models {

// json[name] as a V; throws std::invalid_argument "model config: missing field \"name\"" or "... has the wrong type".
template <class V>
V config_field(const nlohmann::json& json, const char* name) {
  if (!json.contains(name)) throw std::invalid_argument(std::string("model config: missing field \"") + name + "\"");
  try {
    return json.at(name).get<V>();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(std::string("model config: field \"") + name + "\" has the wrong type (" +
                                json.at(name).dump() + ")");
  }
}

}  // namespace attend::models
