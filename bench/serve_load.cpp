// Load on an HTTP server that speaks attend serve's API (docs/reference/serve.md): N clients, each on a kept-alive
// connection, send POST /v1/predict with the next inputs of a file for T seconds, as fast as they are answered. Prints
// one JSON line: requests and sentences answered, sentences/s, latency percentiles, errors by kind, and — given the
// server's process id — its resident memory, sampled every second. A benchmark, not a test: bench/compare_serve runs
// it against attend serve and the PyTorch server of bench/torch_serve.py, alternately.
// With --stream F a fraction F of the requests streams ("stream": true, one input each): their latency runs to the
// stream's end, and the time to their first token event is reported apart. --leavers L adds L clients whose requests
// stream and who close the connection at their first token event. With --pid, the server's GET /metrics is read at the
// end, once every client closed: its open connections and inputs cancelled.
//   serve_load --port P --inputs FILE [--clients N] [--seconds T] [--warmup S] [--per-request K] [--beam K]
//              [--model NAME] [--pid PID] [--rss-window S] [--stream F] [--leavers L]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cmath>
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
  double stream = 0;        // the fraction of requests that stream
  std::size_t leavers = 0;  // clients that stream and leave at the first token
  int pid = 0;
};

// What the clients measured after the warm-up.
struct Tally {
  std::mutex mutex;
  std::vector<double> latencies;    // seconds
  std::vector<double> first_token;  // seconds to a stream's first token event
  std::vector<double> streamed;     // latencies of the streams
  std::size_t requests = 0, sentences = 0, left = 0;
  std::map<std::string, std::size_t> errors;  // "status 503", "connection: …", "input error"
};

// One request's outcome.
struct Outcome {
  std::size_t answered = 0;  // inputs answered with an output
  std::string error;
  std::optional<Clock::time_point> first_token;  // a stream's
  bool left = false;                             // the client closed the stream at its first token
};

// The outputs of a /v1/predict answer's body (`error` set when it is not one).
void count_outputs(const std::string& body, std::size_t expected, Outcome& outcome) {
  const nlohmann::json answer = nlohmann::json::parse(body, nullptr, false);
  if (!answer.is_object() || !answer.contains("outputs")) {
    outcome.error = "not an answer";
    return;
  }
  for (const auto& output : answer["outputs"]) outcome.answered += output.contains("output") ? 1 : 0;
  if (outcome.answered != expected) outcome.error = "input error";
}

// A stream's events as they come, until its end (or, when `leave`, its first token event): the time of the first
// token, and the "done" event's answer counted.
void read_stream(tcp::socket& socket, beast::flat_buffer& buffer, bool leave, Outcome& outcome) {
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  http::read_header(socket, buffer, parser);
  if (parser.get().result_int() != 200) outcome.error = "status " + std::to_string(parser.get().result_int());
  std::string text;
  char chunk[8192];
  while (!parser.is_done()) {
    parser.get().body().data = chunk;
    parser.get().body().size = sizeof chunk;
    beast::error_code ec;
    http::read_some(socket, buffer, parser, ec);  // what came (read() would wait to fill `chunk`)
    if (ec && ec != http::error::need_buffer) throw beast::system_error(ec);
    text.append(chunk, sizeof chunk - parser.get().body().size);
    if (!outcome.first_token && text.find("event: token\n") != std::string::npos) {
      outcome.first_token = Clock::now();
      if (leave) {
        outcome.left = true;
        return;
      }
    }
  }
  const std::size_t done = text.rfind("event: done\ndata: ");
  if (!outcome.error.empty()) return;
  if (done == std::string::npos) {
    outcome.error = text.find("event: error") != std::string::npos ? "error event" : "no done event";
    return;
  }
  count_outputs(text.substr(done + 18, text.find('\n', done + 18) - done - 18), 1, outcome);
}

// One request on the client's connection (made when there is none; dropped after an error, or when the server or the
// client closes it).
Outcome ask(const Settings& s, const std::string& body, std::size_t inputs, bool stream, bool leave,
            net::io_context& ioc, std::optional<tcp::socket>& socket, beast::flat_buffer& buffer) {
  http::request<http::string_body> req{http::verb::post, "/v1/predict", 11};
  req.set(http::field::host, s.host);
  req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  Outcome outcome;
  try {
    if (!socket) {
      socket.emplace(ioc);
      socket->connect({net::ip::make_address(s.host), static_cast<unsigned short>(s.port)});
      buffer.clear();
    }
    http::write(*socket, req);
    if (stream) {
      read_stream(*socket, buffer, leave, outcome);
      if (outcome.left) socket.reset();
      return outcome;
    }
    http::response<http::string_body> res;
    http::read(*socket, buffer, res);
    if (res.result_int() != 200) outcome.error = "status " + std::to_string(res.result_int());
    if (!res.keep_alive()) socket.reset();
    if (outcome.error.empty()) count_outputs(res.body(), inputs, outcome);
  } catch (const std::exception& e) {
    outcome.error = std::string("connection: ") + e.what();
    socket.reset();
  }
  return outcome;
}

// One client: a kept-alive connection (opened again after an error), requests until `end`; a leaver streams every
// request and leaves at its first token.
void client(const Settings& s, const std::vector<std::string>& inputs, std::atomic<std::size_t>& next,
            Clock::time_point counted_from, Clock::time_point end, Tally& tally, bool leaver) {
  net::io_context ioc;
  std::optional<tcp::socket> socket;
  beast::flat_buffer buffer;
  for (std::size_t k = 0; Clock::now() < end; ++k) {
    // streams spread evenly: request k streams when k·F passes a whole number
    const bool stream =
        leaver || std::floor(static_cast<double>(k + 1) * s.stream) > std::floor(static_cast<double>(k) * s.stream);
    const std::size_t count = stream ? 1 : s.per_request;
    nlohmann::json body = {{"inputs", nlohmann::json::array()}, {"beam", s.beam}};
    if (!s.model.empty()) body["model"] = s.model;
    if (stream) body["stream"] = true;
    for (std::size_t i = 0; i < count; ++i) body["inputs"].push_back(inputs[next++ % inputs.size()]);
    const auto start = Clock::now();
    const Outcome outcome = ask(s, body.dump(), count, stream, leaver, ioc, socket, buffer);
    const auto done = Clock::now();
    if (start < counted_from || done > end) continue;
    const auto seconds = [start](Clock::time_point t) { return std::chrono::duration<double>(t - start).count(); };
    const std::lock_guard<std::mutex> lock(tally.mutex);
    if (!outcome.error.empty()) ++tally.errors[outcome.error];
    if (outcome.first_token) tally.first_token.push_back(seconds(*outcome.first_token));
    if (leaver) {
      tally.left += outcome.left;
      continue;
    }
    ++tally.requests;
    tally.sentences += outcome.answered;
    tally.latencies.push_back(seconds(done));
    if (stream) tally.streamed.push_back(seconds(done));
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
  if (s.stream > 0 || s.leavers > 0) {
    json["stream"] = s.stream;
    json["leavers"] = s.leavers;
    json["streams"] = tally.streamed.size();
    json["streams_left"] = tally.left;
    json["first_token_p50_ms"] = 1000 * percentile(tally.first_token, 0.5);
    json["first_token_p99_ms"] = 1000 * percentile(tally.first_token, 0.99);
    json["stream_p50_ms"] = 1000 * percentile(tally.streamed, 0.5);
    json["stream_p99_ms"] = 1000 * percentile(tally.streamed, 0.99);
  }
  if (s.pid > 0) {
    // the mean RSS of the first and of the last window after the warm-up, one sample a second
    const auto window = std::min(rss.size() / 2, static_cast<std::size_t>(s.rss_window));
    json["rss_first_window_mb"] = mean(rss, 0, window);
    json["rss_last_window_mb"] = mean(rss, rss.size() - window, rss.size());
    json["rss_peak_mb"] = memory_mb(s.pid, "VmHWM");
  }
  return json;
}

// The server's open connections and inputs cancelled (GET /metrics), once the clients' connections had a second to
// close; -1 when it cannot be read.
void add_server_counts(const Settings& s, nlohmann::json& json) {
  std::this_thread::sleep_for(std::chrono::seconds(1));
  double open = -1, cancelled = -1;
  try {
    net::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect({net::ip::make_address(s.host), static_cast<unsigned short>(s.port)});
    http::request<http::string_body> req{http::verb::get, "/metrics", 11};
    req.set(http::field::host, s.host);
    http::write(socket, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    const auto value = [&res](const std::string& series) {
      const std::size_t at = res.body().find("\n" + series + " ");
      return at == std::string::npos ? -1.0 : std::stod(res.body().substr(at + series.size() + 2));
    };
    open = value("attend_open_connections") - 1;  // this one
    cancelled = value("attend_inputs_cancelled_total");
  } catch (const std::exception&) {
  }
  json["server_open_connections_at_end"] = open;
  json["server_inputs_cancelled"] = cancelled;
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
  app.add_option("--stream", s.stream, "the fraction of requests that stream (one input each)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--leavers", s.leavers, "more clients, whose streams they leave at the first token")
      ->check(CLI::Range(0, 4096));
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
  for (std::size_t c = 0; c < s.clients + s.leavers; ++c)
    clients.emplace_back([&, c] { client(s, inputs, next, counted_from, end, tally, c >= s.clients); });
  std::vector<double> rss;
  while (Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    if (s.pid > 0 && Clock::now() > counted_from) rss.push_back(memory_mb(s.pid, "VmRSS"));
  }
  for (std::thread& t : clients) t.join();
  nlohmann::json json = report(s, tally, rss);
  if (s.pid > 0) add_server_counts(s, json);
  std::cout << json.dump() << std::endl;
  return 0;
}
