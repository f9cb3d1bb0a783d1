// What the serve suite's cases share: an `attend serve` process started on a free port and stopped by the test, an
// HTTP client (Boost.Beast, synchronous), raw connections for what no well-behaved client sends, and small models
// trained once for the whole suite.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "apps/serve/api.hpp"
#include "tests/cli/cli_helpers.hpp"

namespace serve_test {

using cli_test::read_file;
using cli_test::Run;
using cli_test::run_attend;
using cli_test::Scratch;
namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// An `attend serve` process: started with `args` (after "serve") and --port 0, ready once it printed the line with
// its address; stopped by SIGTERM when the test has not stopped it.
class Server {
 public:
  explicit Server(const std::string& args) {
    int out[2];
    BOOST_TEST_REQUIRE(pipe(out) == 0);
    const std::string command =
        "exec env OPENBLAS_NUM_THREADS=1 '" ATTEND_EXE "' serve --port 0 " + args + " 2> '" + err_path() + "'";
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      close(out[0]);
      close(out[1]);
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    out_ = out[0];
    ready_line = read_line(60000);
    const std::size_t colon = ready_line.rfind(':'), space = ready_line.find(' ', colon);
    if (ready_line.rfind("attend serve: listening on http://", 0) == 0 && colon != std::string::npos)
      port = static_cast<unsigned short>(std::stoi(ready_line.substr(colon + 1, space - colon - 1)));
  }
  ~Server() {
    if (pid_ > 0 && status_ == -2) stop();
    if (out_ >= 0) close(out_);
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Sends `signal_number` and waits for the exit: the exit status (-1: ended by a signal).
  int stop(int signal_number = SIGTERM) {
    kill(pid_, signal_number);
    return wait();
  }
  // Waits for the process to end by itself.
  int wait() {
    if (status_ != -2) return status_;
    int raw = 0;
    waitpid(pid_, &raw, 0);
    status_ = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return status_;
  }
  // Whether the process still runs.
  bool running() {
    if (status_ != -2) return false;
    int raw = 0;
    if (waitpid(pid_, &raw, WNOHANG) == 0) return true;
    status_ = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return false;
  }
  std::string log() const { return read_file(err_path()); }
  std::string rest_of_output() {  // standard output after the ready line, once the process ended
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = read(out_, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
    return text;
  }

  unsigned short port = 0;  // 0: it did not start
  std::string ready_line;

 private:
  std::string err_path() const { return scratch_.path("err"); }
  // One line of standard output within `ms` milliseconds (empty: none).
  std::string read_line(int ms) {
    std::string line;
    char c;
    while (line.empty() || line.back() != '\n') {
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, ms) <= 0 || read(out_, &c, 1) != 1) return line;
      line += c;
    }
    line.pop_back();
    return line;
  }

  Scratch scratch_;
  pid_t pid_ = -1;
  int out_ = -1;
  int status_ = -2;  // -2: running
};

struct Reply {
  int status = 0;
  std::string body;
  std::string content_type, allow, retry_after;
  bool keep_alive = true;
  std::map<std::string, std::string> headers;  // every header, by its name as sent
  nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
};

// One request on a new connection (a POST with `content_type`, none when empty).
inline Reply request(unsigned short port, http::verb verb, const std::string& target, const std::string& body = "",
                     const std::string& content_type = "application/json",
                     const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1");
  if (verb == http::verb::post && !content_type.empty()) req.set(http::field::content_type, content_type);
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = body;
  req.prepare_payload();
  http::write(socket, req);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);
  http::read(socket, buffer, parser);
  const auto& res = parser.get();
  Reply reply;
  reply.status = static_cast<int>(res.result_int());
  reply.body = res.body();
  reply.content_type = std::string(res[http::field::content_type]);
  reply.allow = std::string(res[http::field::allow]);
  reply.retry_after = std::string(res[http::field::retry_after]);
  reply.keep_alive = res.keep_alive();
  for (const auto& field : res) reply.headers[std::string(field.name_string())] = std::string(field.value());
  return reply;
}

inline Reply get(unsigned short port, const std::string& target) { return request(port, http::verb::get, target); }
inline Reply post(unsigned short port, const std::string& body, const std::string& target = "/v1/predict") {
  return request(port, http::verb::post, target, body);
}

// A raw TCP connection to the server, for what no HTTP library sends.
class Raw {
 public:
  explicit Raw(unsigned short port) : socket_(ioc_) { socket_.connect({net::ip::make_address("127.0.0.1"), port}); }
  // Sends bytes; false when the server has closed the connection.
  bool send(const std::string& bytes) {
    beast::error_code ec;
    net::write(socket_, net::buffer(bytes), ec);
    return !ec;
  }
  // Everything the server sends until it closes the connection, or until `ms` milliseconds pass without a byte;
  // closed() then says which.
  std::string receive(int ms) {
    std::string text;
    char buffer[4096];
    for (;;) {
      pollfd p{socket_.native_handle(), POLLIN, 0};
      if (poll(&p, 1, ms) <= 0) return text;
      const ssize_t n = ::recv(socket_.native_handle(), buffer, sizeof buffer, 0);
      if (n <= 0) {
        closed_ = true;
        return text;
      }
      text.append(buffer, static_cast<std::size_t>(n));
    }
  }
  // What the server sends within `ms` milliseconds (less when it closes the connection first).
  std::string receive_for(int ms) {
    std::string text;
    char buffer[4096];
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
      pollfd p{socket_.native_handle(), POLLIN, 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return text;
      const ssize_t n = ::recv(socket_.native_handle(), buffer, sizeof buffer, 0);
      if (n <= 0) {
        closed_ = true;
        return text;
      }
      text.append(buffer, static_cast<std::size_t>(n));
    }
  }
  bool closed() const { return closed_; }
  void close() {
    beast::error_code ec;
    socket_.close(ec);
  }

 private:
  net::io_context ioc_;
  tcp::socket socket_;
  bool closed_ = false;
};

// A POST of a JSON body as bytes on the wire.
inline std::string raw_post(const std::string& body, const std::string& version = "1.1",
                            const std::string& target = "/v1/predict") {
  return "POST " + target + " HTTP/" + version +
         "\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

// Bytes in base64, as a client sends an image (the server's own encoder, checked against RFC 4648 in test_units).
inline std::string base64(const std::string& bytes) { return attend::app::serve::encode_base64(bytes); }

// The value of a series in a Prometheus exposition ("attend_requests_total{code=\"200\"}"); -1 when absent.
inline double metric(const std::string& text, const std::string& series) {
  const std::size_t at = text.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
}

// The real clients of tests/clients (npm packages, installed there by scripts/setup).
const std::string clients = std::string(ATTEND_SOURCE_DIR) + "/tests/clients";

// A test's precondition: Node and the npm package `package` in tests/clients; otherwise skipped, saying which is
// missing.
struct NodeClient {
  std::string package;
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    std::string why;
    if (std::system("command -v node > /dev/null 2>&1") != 0) {
      why = "node is not installed (Debian: nodejs; scripts/setup installs it)";
    } else if (!cli_test::exists(clients + "/node_modules/" + package + "/package.json")) {
      why = "the npm package " + package + " is not installed in tests/clients (scripts/setup: npm ci there)";
    }
    boost::test_tools::assertion_result result(why.empty());
    if (!why.empty()) result.message() << "needs the npm client: " << why;
    return result;
  }
};

// The small models the suite serves, each trained once: dates with the recurrent model and with the Transformer,
// the vanilla decoder (no attention), and the digits captioner.
struct Models {
  std::string rnn, transformer, vanilla, digits, digits_folder;
};
const Models& models();

}  // namespace serve_test
