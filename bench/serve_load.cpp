// Load on an HTTP server that speaks attend serve's API (docs/reference/serve.md): N clients, each on a kept-alive
// connection, send POST /v1/predict with the next inputs of a file for T seconds, as fast as they are answered. Prints
// one JSON line: requests and sentences answered, sentences/s, latency percentiles, errors by kind, and — given the
// server's process id — its resident memory, sampled every second. A benchmark, not a test: bench/compare_serve runs
// it against attend serve and the PyTorch server of bench/torch_serve.py, alternately.
//   serve_load --port P --inputs FILE [--clients N] [--seconds T] [--warmup S] [--per-request K] [--beam K]
//              [--model NAME] [--pid PID] [--rss-window S]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

struct Settings {
  std::string host = "127.0.0.1", inputs_path, model;
  unsigned port = 8080;
  std::size_t clients = 1, per_request = 1, beam = 1;
  double seconds = 10, warmup = 2, rss_window = 60;
  int pid = 0;
};

// What the clients measured after the warm-up.
struct Tally {
  std::mutex mutex;
  std::vector<double> latencies;  // seconds
  std::size_t requests = 0, sentences = 0;
  std::map<std::string, std::size_t> errors;  // "status 503", "connection: …", "input error"
};

// One client: a kept-alive connection (opened again after an error), requests until `end`.
void client(const Settings& s, const std::vector<std::string>& inputs, std::atomic<std::size_t>& next,
            Clock::time_point counted_from, Clock::time_point end, Tally& tally) {
  net::io_context ioc;
  std::optional<tcp::socket> socket;
  beast::flat_buffer buffer;
  while (Clock::now() < end) {
    nlohmann::json body = {{"inputs", nlohmann::json::array()}, {"beam", s.beam}};
    if (!s.model.empty()) body["model"] = s.model;
    for (std::size_t k = 0; k < s.per_request; ++k) body["inputs"].push_back(inputs[next++ % inputs.size()]);
    http::request<http::string_body> req{http::verb::post, "/v1/predict", 11};
    req.set(http::field::host, s.host);
    req.set(http::field::content_type, "application/json");
    req.body() = body.dump();
    req.prepare_payload();
    const auto start = Clock::now();
    std::string error;
    std::size_t answered = 0;
    try {
      if (!socket) {
        socket.emplace(ioc);
        socket->connect({net::ip::make_address(s.host), static_cast<unsigned short>(s.port)});
        buffer.clear();
      }
      http::write(*socket, req);
      http::response<http::string_body> res;
      http::read(*socket, buffer, res);
      if (res.result_int() != 200) error = "status " + std::to_string(res.result_int());
      if (!res.keep_alive()) socket.reset();
      const nlohmann::json answer = nlohmann::json::parse(res.body(), nullptr, false);
      if (error.empty() && answer.is_object() && answer.contains("outputs")) {
        for (const auto& output : answer["outputs"]) answered += output.contains("output") ? 1 : 0;
        if (answered != s.per_request) error = "input error";
      } else if (error.empty()) {
        error = "not an answer";
      }
    } catch (const std::exception& e) {
      error = std::string("connection: ") + e.what();
      socket.reset();
    }
    const auto done = Clock::now();
    if (start < counted_from || done > end) continue;
    const std::lock_guard<std::mutex> lock(tally.mutex);
    ++tally.requests;
    tally.sentences += answered;
    tally.latencies.push_back(std::chrono::duration<double>(done - start).count());
    if (!error.empty()) ++tally.errors[error];
  }
}

// A process's resident memory in MB (VmRSS, or VmHWM: the peak), 0 when it cannot be read.
double memory_mb(int pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1)) / 1024.0;
  }
  return 0;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}

double mean(const std::vector<double>& values, std::size_t begin, std::size_t end) {
  double total = 0;
  for (std::size_t k = begin; k < end; ++k) total += values[k];
  return end > begin ? total / static_cast<double>(end - begin) : 0;
}

nlohmann::json report(const Settings& s, Tally& tally, const std::vector<double>& rss) {
  nlohmann::json json = {{"clients", s.clients},
                         {"seconds", s.seconds},
                         {"per_request", s.per_request},
                         {"beam", s.beam},
                         {"requests", tally.requests},
                         {"sentences", tally.sentences},
                         {"sentences_per_second", static_cast<double>(tally.sentences) / s.seconds},
                         {"p50_ms", 1000 * percentile(tally.latencies, 0.5)},
                         {"p99_ms", 1000 * percentile(tally.latencies, 0.99)},
                         {"errors", tally.errors}};
  if (s.pid > 0) {
    // the mean RSS of the first and of the last window after the warm-up, one sample a second
    const auto window = std::min(rss.size() / 2, static_cast<std::size_t>(s.rss_window));
    json["rss_first_window_mb"] = mean(rss, 0, window);
    json["rss_last_window_mb"] = mean(rss, rss.size() - window, rss.size());
    json["rss_peak_mb"] = memory_mb(s.pid, "VmHWM");
  }
  return json;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"load on a server of attend serve's API"};
  app.add_option("--host", s.host);
  app.add_option("--port", s.port)->required();
  app.add_option("--inputs", s.inputs_path, "one input a line")->required();
  app.add_option("--clients", s.clients)->check(CLI::Range(1, 4096));
  app.add_option("--seconds", s.seconds, "measured time")->check(CLI::Range(0.1, 86400.0));
  app.add_option("--warmup", s.warmup, "seconds of load before the measured time")->check(CLI::Range(0.0, 3600.0));
  app.add_option("--per-request", s.per_request, "inputs in one request")->check(CLI::Range(1, 4096));
  app.add_option("--beam", s.beam)->check(CLI::Range(1, 64));
  app.add_option("--model", s.model);
  app.add_option("--pid", s.pid, "the server's process, for its memory");
  app.add_option("--rss-window", s.rss_window, "seconds of each window the memory report compares");
  CLI11_PARSE(app, argc, argv);
  std::vector<std::string> inputs;
  std::ifstream file(s.inputs_path);
  for (std::string line; std::getline(file, line);)
    if (!line.empty()) inputs.push_back(line);
  if (inputs.empty()) {
    std::cerr << "serve_load: no inputs in " << s.inputs_path << "\n";
    return 2;
  }
  const auto counted_from =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s.warmup));
  const auto end = counted_from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s.seconds));
  Tally tally;
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> clients;
  for (std::size_t c = 0; c < s.clients; ++c)
    clients.emplace_back([&] { client(s, inputs, next, counted_from, end, tally); });
  std::vector<double> rss;
  while (Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    if (s.pid > 0 && Clock::now() > counted_from) rss.push_back(memory_mb(s.pid, "VmRSS"));
  }
  for (std::thread& t : clients) t.join();
  std::cout << report(s, tally, rss).dump() << std::endl;
  return 0;
}
