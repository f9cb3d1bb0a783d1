// What no client should send, and what no server should do under it: every bad request answered with its status and a
// JSON error that names the problem (one line of the log each), the limits held (body, inputs, connections, queue,
// slow and half-sent requests), and the server healthy after all of it. The rows of docs/reliability.md's server
// table.
#include <chrono>
#include <thread>

#include "tests/serve/serve_helpers.hpp"

using namespace serve_test;
using nlohmann::json;

namespace {

struct BadRequest {
  std::string name, body;
  int status;
  std::string says;  // part of the error message
};

std::vector<BadRequest> bad_requests() {
  std::string deep;
  for (int k = 0; k < 100000; ++k) deep += "[";
  std::string many = "{\"inputs\": [";
  for (int k = 0; k < 100000; ++k) many += std::string(k ? "," : "") + "\"1\"";
  many += "]}";
  return {
      {"malformed JSON", "{\"inputs\": [\"May 9\"", 400, "malformed JSON: "},
      {"not JSON at all", "inputs=May+9", 400, "malformed JSON: "},
      {"deep nesting", deep, 400, "nests deeper than a request"},
      {"deep nesting in a field", "{\"inputs\": [[[\"a\"]]]}", 400, "nests deeper than a request"},
      {"a huge number", "{\"inputs\": [\"May 9\"], \"beam\": 1e400}", 400, "number overflow parsing '1e400'"},
      {"a long number", "{\"inputs\": [\"May 9\"], \"beam\": 123456789012345678901234567890}", 400,
       "\"beam\" must be a whole number from 1 to 16"},
      {"a negative beam", "{\"inputs\": [\"May 9\"], \"beam\": -1}", 400, "\"beam\" must be a whole number"},
      {"a beam too wide", "{\"inputs\": [\"May 9\"], \"beam\": 17}", 400, "from 1 to 16 (--max-beam), not 17"},
      {"inputs not an array", "{\"inputs\": \"May 9\"}", 400, "\"inputs\" must be an array of strings, not string"},
      {"an input not a string", "{\"inputs\": [\"May 9\", 7]}", 400, "\"inputs\"[1] must be a string, not number"},
      {"no inputs", "{\"inputs\": []}", 400, "\"inputs\" is empty"},
      {"no inputs field", "{\"beam\": 2}", 400, "no \"inputs\""},
      {"scores not a boolean", "{\"inputs\": [\"May 9\"], \"scores\": \"yes\"}", 400,
       "\"scores\" must be true or false"},
      {"model not a string", "{\"inputs\": [\"May 9\"], \"model\": 1}", 400, "\"model\" must be a string"},
      {"not an object", "[\"May 9\"]", 400, "must be a JSON object, not array"},
      {"an unknown field", "{\"inputs\": [\"May 9\"], \"temperature\": 0.5}", 400, "unknown field \"temperature\""},
      {"invalid UTF-8", "{\"inputs\": [\"May \xff 9\"]}", 400, "malformed JSON: "},
      {"a lone surrogate", "{\"inputs\": [\"May \\ud800 9\"]}", 400, "malformed JSON: "},
      {"an unknown model", "{\"inputs\": [\"May 9\"], \"model\": \"other\"}", 404,
       "unknown model \"other\" (served: dates)"},
      {"100,000 inputs", many, 413, "100000 inputs: a request holds at most 64 (--max-inputs)"},
      {"a 10 MB body", "{\"inputs\": [\"" + std::string(10 << 20, '1') + "\"]}", 413,
       "larger than 1048576 bytes (--max-body)"},
  };
}

bool healthy(unsigned short port) { return get(port, "/healthz").status == 200; }

}  // namespace

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(every_bad_request_gets_its_status_and_a_json_error) {
  Server server("--model '" + models().rnn + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  const std::vector<BadRequest> rows = bad_requests();
  for (const BadRequest& row : rows) {
    BOOST_TEST_CONTEXT(row.name) {
      const Reply reply = post(server.port, row.body);
      BOOST_TEST(reply.status == row.status);
      BOOST_TEST(reply.content_type == "application/json");
      const json body = reply.json();
      BOOST_TEST_REQUIRE(body.is_object(), reply.body);
      BOOST_TEST(body["error"].get<std::string>().find(row.says) != std::string::npos, body["error"]);
      BOOST_TEST(healthy(server.port));
    }
  }
  const std::string metrics = get(server.port, "/metrics").body;
  BOOST_TEST(metric(metrics, "attend_requests_total{code=\"400\"}") == rows.size() - 3.0);
  BOOST_TEST(metric(metrics, "attend_inputs_decoded_total") == 0);
  BOOST_TEST(server.stop() == 0);
  BOOST_TEST(cli_test::count(server.log(), "\n") == rows.size() + 2, server.log());  // and "stopping", "stopped"
}

// Requests that are not HTTP, or not whole: answered 400, or the connection closed; the server goes on.
BOOST_AUTO_TEST_CASE(broken_http_and_half_sent_requests) {
  Server server("--model '" + models().rnn + "' --read-timeout-ms 1000");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  {
    Raw raw(server.port);
    raw.send("this is not HTTP\r\n\r\n");
    const std::string answer = raw.receive(5000);
    BOOST_TEST(answer.find("HTTP/1.1 400 Bad Request") == 0u, answer);
    BOOST_TEST(answer.find("malformed HTTP request") != std::string::npos, answer);
    BOOST_TEST(raw.closed());
  }
  {
    // headers too large
    Raw raw(server.port);
    raw.send("GET /healthz HTTP/1.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n");
    BOOST_TEST(raw.receive(5000).find("HTTP/1.1 431") == 0u);
  }
  {
    // half a request, then the client goes away
    Raw raw(server.port);
    raw.send("POST /v1/predict HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{\"inputs\": [");
    raw.close();
  }
  BOOST_TEST(healthy(server.port));
  {
    // a client that sends a byte every 200 ms is disconnected after the read timeout, while others are served
    Raw slow(server.port);
    const std::string request = "POST /v1/predict HTTP/1.1\r\nHost: a\r\nContent-Length: 40\r\n\r\n";
    const auto start = std::chrono::steady_clock::now();
    std::size_t sent = 0;
    while (sent < request.size() && slow.send(request.substr(sent, 1))) {
      ++sent;
      slow.receive(200);
      if (slow.closed()) break;
      if (sent == 3) BOOST_TEST(healthy(server.port));  // the others are not held up
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    BOOST_TEST(slow.closed());
    BOOST_TEST(sent < request.size());
    BOOST_TEST(seconds < 5.0);
  }
  BOOST_TEST(healthy(server.port));
  BOOST_TEST(server.log().find("no whole request within --read-timeout (1000 ms)") != std::string::npos, server.log());
}

// Beyond --max-connections, a request is answered 503 and its connection closed; the others go on.
BOOST_AUTO_TEST_CASE(too_many_connections_are_told_so) {
  Server server("--model '" + models().rnn + "' --max-connections 2");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  Raw first(server.port), second(server.port);
  first.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n");
  BOOST_TEST(first.receive(300).find("HTTP/1.1 200 OK") == 0u);
  second.receive(100);  // connected, idle
  const Reply third = get(server.port, "/healthz");
  BOOST_TEST(third.status == 503);
  BOOST_TEST(third.retry_after == "1");
  BOOST_TEST(third.json()["error"] == "too many connections (--max-connections 2); try again");
  second.close();
  first.close();
  // the server sees them closed on its next read of each (a while, in a sanitizer build on a busy machine)
  for (int k = 0; k < 500 && get(server.port, "/healthz").status != 200; ++k)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  BOOST_TEST(healthy(server.port));
}

// A request the queue cannot take is answered 503 with Retry-After, at once.
BOOST_AUTO_TEST_CASE(a_full_queue_answers_503) {
  Server server("--model '" + models().rnn + "' --max-queue 2");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  const Reply reply = post(server.port, json({{"inputs", {"May 9, 2018", "9.5.18", "2018-05-09"}}}).dump());
  BOOST_TEST(reply.status == 503);
  BOOST_TEST(reply.retry_after == "1");
  BOOST_TEST(reply.json()["error"] == "the queue is full (0 inputs wait, 3 more would pass --max-queue 2); try again");
  BOOST_TEST(post(server.port, json({{"inputs", {"May 9, 2018", "9.5.18"}}}).dump()).status == 200);
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
