// What no client should send, and what no server should do under it: every bad request answered with its status and a
// JSON error that names the problem (one line of the log each), the limits held (body, inputs, connections, queue,
// slow and half-sent requests), and the server healthy after all of it. The rows of docs/reliability.md's two server
// tables (bad bodies, bad connections) are this file's data.
#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include "tests/serve/serve_helpers.hpp"

using namespace serve_test;
using nlohmann::json;

namespace {

// A body written in the table's notation: `text` pieces, each maybe followed by "× N" (N with thousands commas) and
// joined by " + "; "\xHH" in a piece is that byte.
std::string body_of(const std::string& cell) {
  std::string body;
  std::size_t at = 0;
  for (const std::string& piece : cli_test::quoted_parts(cell)) {
    std::string bytes;
    for (std::size_t k = 0; k < piece.size(); ++k) {
      if (piece.compare(k, 2, "\\x") == 0 && k + 3 < piece.size()) {
        bytes += static_cast<char>(std::stoi(piece.substr(k + 2, 2), nullptr, 16));
        k += 3;
      } else {
        bytes += piece[k];
      }
    }
    at = cell.find('`' + piece + '`', at) + piece.size() + 2;
    const std::size_t next = cell.find('`', at);
    const std::string between = cell.substr(at, next == std::string::npos ? std::string::npos : next - at);
    std::size_t times = 1;
    if (between.find("×") != std::string::npos) {
      std::string digits;
      for (const char c : between)
        if (c >= '0' && c <= '9') digits += c;
      times = std::stoul(digits);
    }
    for (std::size_t n = 0; n < times; ++n) body += bytes;
  }
  return body;
}

bool healthy(unsigned short port) { return get(port, "/healthz").status == 200; }

// Within 10 s, true once `holds` does (a connection a client closed, or one the server lingers on before closing,
// is counted until the server next reads it: a while, in a sanitizer build on a busy machine).
bool soon(const std::function<bool()>& holds) {
  for (int k = 0; k < 500; ++k) {
    try {
      if (holds()) return true;
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// No connection open but the one asking.
bool settled(unsigned short port) {
  return soon([port] { return metric(get(port, "/metrics").body, "attend_open_connections") == 1; });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(every_bad_body_gets_its_status_and_a_json_error) {
  const auto rows = cli_test::table_after("reliability.md", "<!-- serve bad-body table");
  BOOST_TEST_REQUIRE(rows.size() >= 20u, "docs/reliability.md's bad-body table has " << rows.size() << " rows");
  Server server("--model '" + models().rnn + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  std::size_t refused_400 = 0;
  for (const std::vector<std::string>& row : rows) {
    BOOST_TEST_CONTEXT(row[0]) {
      BOOST_TEST_REQUIRE(row.size() == 4u);
      const int status = std::stoi(row[2]);
      refused_400 += status == 400;
      const Reply reply = post(server.port, body_of(row[1]));
      BOOST_TEST(reply.status == status);
      BOOST_TEST(reply.content_type == "application/json");
      const json body = reply.json();
      BOOST_TEST_REQUIRE(body.is_object(), reply.body);
      for (const std::string& says : cli_test::quoted_parts(row[3]))
        BOOST_TEST(body["error"].get<std::string>().find(says) != std::string::npos, body["error"]);
      BOOST_TEST(healthy(server.port));
    }
  }
  const std::string metrics = get(server.port, "/metrics").body;
  BOOST_TEST(metric(metrics, "attend_requests_total{code=\"400\"}") == refused_400);
  BOOST_TEST(metric(metrics, "attend_inputs_decoded_total") == 0);
  BOOST_TEST(server.stop() == 0);
  BOOST_TEST(cli_test::count(server.log(), "\n") == rows.size() + 2, server.log());  // and "stopping", "stopped"
}

namespace {

// What a client of the bad-connection table got: "STATUS[, Retry-After]" when an answer came, ", closed" or "closed"
// when the server closed the connection, "nothing" when neither; and the bytes of the answer.
struct Outcome {
  std::string answer, text;
};

Outcome outcome_of(const std::string& received, bool closed) {
  std::string answer;
  if (received.rfind("HTTP/1.1 ", 0) == 0) answer = received.substr(9, 3);
  if (received.find("\r\nRetry-After:") != std::string::npos) answer += ", Retry-After";
  if (closed) answer += answer.empty() ? "closed" : ", closed";
  return {answer.empty() ? "nothing" : answer, received};
}

Outcome one_shot(unsigned short port, const std::string& bytes) {
  Raw raw(port);
  raw.send(bytes);
  const std::string received = raw.receive(5000);
  return outcome_of(received, raw.closed());
}

Outcome half_sent(unsigned short port) {
  Raw raw(port);
  raw.send("POST /v1/predict HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{\"inputs\": [");
  const std::string received = raw.receive(300);
  raw.close();
  return outcome_of(received, false);
}

// A byte every 200 ms: disconnected after the read timeout (1 s), while another client is served meanwhile.
Outcome slow_client(unsigned short port) {
  Raw slow(port);
  const std::string request = "POST /v1/predict HTTP/1.1\r\nHost: a\r\nContent-Length: 40\r\n\r\n";
  const auto start = std::chrono::steady_clock::now();
  std::string received;
  std::size_t sent = 0;
  while (sent < request.size() && slow.send(request.substr(sent, 1))) {
    ++sent;
    received += slow.receive(200);
    if (slow.closed()) break;
    if (sent == 3) BOOST_TEST(healthy(port));  // the others are not held up
  }
  BOOST_TEST(sent < request.size());
  BOOST_TEST(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 5.0);
  return outcome_of(received, slow.closed());
}

// Two connections open (one answered, one idle), then a third.
Outcome third_connection(unsigned short port) {
  Raw first(port), second(port);
  first.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n");
  BOOST_TEST(first.receive(300).find("HTTP/1.1 200 OK") == 0u);
  second.receive(100);  // connected, idle
  return one_shot(port, "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n");
}

Outcome overfull_queue(unsigned short port) {
  const Reply reply = post(port, json({{"inputs", {"May 9, 2018", "9.5.18", "2018-05-09"}}}).dump());
  std::string received = "HTTP/1.1 " + std::to_string(reply.status) + " \r\n";
  if (!reply.retry_after.empty()) received += "Retry-After: " + reply.retry_after + "\r\n";
  return outcome_of(received + "\r\n" + reply.body, !reply.keep_alive);
}

}  // namespace

// The rows of the bad-connection table: each client in turn against one server, which answers as the row says and
// stays healthy; a row the test has no client for fails, and so does a client the table has no row for.
BOOST_AUTO_TEST_CASE(every_bad_connection_gets_its_answer) {
  const std::map<std::string, std::function<Outcome(unsigned short)>> clients = {
      {"not HTTP", [](unsigned short port) { return one_shot(port, "this is not HTTP\r\n\r\n"); }},
      {"headers too large",
       [](unsigned short port) {
         return one_shot(port, "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n");
       }},
      {"half-sent, then gone", half_sent},
      {"slow client", slow_client},
      {"too many connections", third_connection},
      {"more than the queue holds", overfull_queue},
  };
  const auto rows = cli_test::table_after("reliability.md", "<!-- serve bad-connection table");
  BOOST_TEST(rows.size() == clients.size());
  Server server("--model '" + models().rnn + "' --read-timeout-ms 1000 --max-connections 2 --max-queue 2");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  for (const std::vector<std::string>& row : rows) {
    BOOST_TEST_CONTEXT(row[0]) {
      BOOST_TEST_REQUIRE(row.size() == 4u);
      const auto client = clients.find(row[0]);
      BOOST_TEST_REQUIRE((client != clients.end()), "no client for this row");
      BOOST_TEST_REQUIRE(settled(server.port));
      const Outcome got = client->second(server.port);
      BOOST_TEST(got.answer == row[2]);
      BOOST_TEST(settled(server.port));
      BOOST_TEST(healthy(server.port));
      // (a timeout closes the socket before the server's handler writes its log line)
      for (const std::string& says : cli_test::quoted_parts(row[3])) {
        BOOST_TEST(soon([&] { return (got.text + server.log()).find(says) != std::string::npos; }),
                   says << " in neither " << got.text << " nor the log: " << server.log());
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(lifecycle)

// SIGTERM with requests under way: each is answered, new connections are refused, and the exit status is 0.
BOOST_AUTO_TEST_CASE(sigterm_answers_the_requests_under_way_and_exits_0) {
  for (const int signal_number : {SIGTERM, SIGINT}) {
    Server server("--model '" + models().rnn + "' --max-wait-ms 5000 --max-batch 64");
    BOOST_TEST_REQUIRE(server.port != 0, server.log());
    std::vector<int> statuses(4, 0);
    std::vector<std::thread> clients;
    for (std::size_t c = 0; c < statuses.size(); ++c) {
      clients.emplace_back([&, c] {
        statuses[c] = post(server.port, json({{"inputs", {"May 9, 2018"}}}).dump()).status;
      });
    }
    // and a client that keeps its connection open between requests (for the read timeout's 10 s)
    Raw idle(server.port);
    idle.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n");
    BOOST_TEST(idle.receive(300).find("HTTP/1.1 200 OK") == 0u);
    // queued by then (1.5 s, for a sanitizer build on a busy machine): the worker waits 5 s for more
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const auto start = std::chrono::steady_clock::now();
    BOOST_TEST(server.stop(signal_number) == 0);
    for (std::thread& t : clients) t.join();
    BOOST_TEST(statuses == std::vector<int>(4, 200), boost::test_tools::per_element());
    BOOST_TEST(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 5.0);
    idle.receive(1000);
    BOOST_TEST(idle.closed());  // closed by the server, not left to its timeout
    BOOST_TEST(server.log().find("stopping: no new connections") != std::string::npos, server.log());
    BOOST_CHECK_THROW(get(server.port, "/healthz"), std::exception);
  }
}

// A port in use: one line naming it, exit 2. A model that does not load: exit 2 before listening.
BOOST_AUTO_TEST_CASE(a_busy_port_or_a_bad_model_is_one_line_and_exit_2) {
  Server first("--model '" + models().rnn + "'");
  BOOST_TEST_REQUIRE(first.port != 0, first.log());
  const std::string port = std::to_string(first.port);
  const Run busy = run_attend("serve --model '" + models().rnn + "' --port " + port);
  cli_test::check_usage_error(busy, {"--port " + port + ": cannot listen on 127.0.0.1:" + port, "in use"});
  BOOST_TEST(busy.out.empty());
  Scratch scratch;
  { std::ofstream(scratch.path("broken.safetensors")) << "not a checkpoint"; }
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--model '" + scratch.path("none.safetensors") + "'", "no such file"},
           {"--model '" + scratch.path("broken.safetensors") + "'", "broken.safetensors"},
           {"--model '" + models().rnn + "' --model '" + models().rnn + "'", "a model named dates is served already"},
           {"--model '" + models().rnn + "' --host example.org", "--host example.org: not an IP address"},
       }) {
    const Run run = run_attend("serve --port 0 " + args);
    cli_test::check_usage_error(run, {says});
    BOOST_TEST(run.out.empty(), run.out);  // no "listening" line
  }
  BOOST_TEST(healthy(first.port));
}

BOOST_AUTO_TEST_SUITE_END()
