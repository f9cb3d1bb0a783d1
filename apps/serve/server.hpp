// attend serve's HTTP server (Boost.Beast over Boost.Asio): the routes of the JSON API (api.hpp), each model's batcher
// (batcher.hpp), the limits on what a client may send or hold, and a clean stop on SIGINT or SIGTERM: no new
// connection, every request already read answered, then run() returns.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "apps/model_file.hpp"
#include "apps/serve/api.hpp"
#include "apps/serve/batcher.hpp"

namespace attend::app::serve {

struct ServerSettings {
  std::string host = "127.0.0.1";
  unsigned port = 8080;               // 0: any free port (port() says which)
  std::size_t max_body = 1 << 20;     // bytes of a request's body (413 beyond)
  std::size_t max_connections = 256;  // open at once; beyond, a request is answered 503 and the connection closed
  std::chrono::milliseconds read_timeout{10000};  // to read a whole request (headers and body), and to write an answer
                                                  // (each chunk of a stream)
  std::chrono::milliseconds heartbeat{15000};     // a stream's quiet time after which ": ping" goes out
  RequestLimits request;
  BatchSettings batch;
  // LibreTranslate's /translate and /detect require one of these as "api_key" (400 without one, 403 for another, as
  // LibreTranslate answers); empty: no key asked.
  std::vector<std::string> api_keys;
  // Origins whose browser pages may call the server (CORS): a request whose Origin header is one of them ("*": any) is
  // answered with Access-Control-Allow-Origin set to it, and its preflight (OPTIONS) with the methods and headers it
  // may use. Empty: no CORS header at all.
  std::vector<std::string> cors_origins;
};

// A model the server answers for, by name.
struct ServedModel {
  std::string name;
  ModelFile file;
};

class Server {
 public:
  // Binds the address; throws InputError naming it when that fails (a busy port, an unknown host).
  Server(std::vector<ServedModel> models, const ServerSettings& settings);
  ~Server();
  unsigned port() const;
  // Serves until stop() or SIGINT/SIGTERM; returns once every connection is closed and every batcher stopped.
  void run();
  // Stops as a signal does (from any thread).
  void stop();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace attend::app::serve
