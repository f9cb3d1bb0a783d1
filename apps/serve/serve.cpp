// `attend serve` (commands.hpp): the models loaded, the server bound, one line saying where it listens, and serving
// until SIGINT or SIGTERM.
#include <iostream>

#include "apps/commands.hpp"
#include "apps/serve/libretranslate.hpp"
#include "apps/serve/server.hpp"

namespace attend::app {

namespace {

// A model's name: its file's name without the folder and the extension (models/spa-eng.safetensors → spa-eng).
std::string model_name(const std::string& path) {
  const std::string file = path.substr(path.find_last_of('/') + 1);
  const std::size_t dot = file.find_last_of('.');
  return dot == 0 || dot == std::string::npos ? file : file.substr(0, dot);
}

}  // namespace

int run_serve(const ServeOptions& options) {
  set_threads(options.threads);
  std::vector<serve::ServedModel> models;
  for (const std::string& path : options.model_paths) {
    const std::string name = model_name(path);
    for (const serve::ServedModel& m : models) {
      if (m.name == name)
        throw InputError("--model " + path + ": a model named " + name + " is served already (names are file names)");
    }
    models.push_back({name, load_model_file(path)});
  }
  std::vector<ModelFile*> files;
  for (serve::ServedModel& m : models) files.push_back(&m.file);
  // each model's products (int8's quantized copies) move into the server with it
  use_decoding_precision(options.precision, files, "serve");
  serve::ServerSettings settings;
  settings.host = options.host;
  settings.port = options.port;
  settings.max_body = options.max_body;
  settings.max_connections = options.max_connections;
  settings.read_timeout = std::chrono::milliseconds(options.read_timeout_ms);
  settings.heartbeat = std::chrono::milliseconds(options.heartbeat_ms);
  settings.request = {options.max_inputs, options.max_beam, options.max_attribution_steps};
  settings.batch = {options.max_batch, std::chrono::microseconds(options.max_wait_ms * 1000), options.max_queue};
  if (!options.api_key_file.empty()) settings.api_keys = serve::read_api_keys(options.api_key_file);
  for (const std::string& origin : options.cors_origins) {
    if (origin != "*" && origin.find("://") == std::string::npos)
      throw InputError("--cors-origin " + origin + ": an origin is a scheme and a host (https://example.org), or *");
  }
  settings.cors_origins = options.cors_origins;
  std::string names;
  for (const serve::ServedModel& m : models) names += (names.empty() ? "" : ", ") + m.name;
  serve::Server server(std::move(models), settings);
  const bool v6 = options.host.find(':') != std::string::npos;
  std::cout << "attend serve: listening on http://" << (v6 ? "[" + options.host + "]" : options.host) << ":"
            << server.port() << " (" << names << ")" << std::endl;
  server.run();
  std::cerr << "attend serve: stopped" << std::endl;
  return 0;
}

}  // namespace attend::app
