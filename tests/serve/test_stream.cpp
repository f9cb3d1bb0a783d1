// POST /v1/predict with "stream": true (docs/reference/serve.md, "Streaming"): server-sent events, one for each output
// token as it settles, then the answer /v1/predict gives; refused as any request before the stream begins; comment
// lines while nothing else goes out; a client that leaves stops its input's decoding; SIGTERM ends a stream with an
// error event.
#include <boost/asio/read.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <optional>
#include <thread>

#include "apps/serve/event_stream.hpp"
#include "tests/serve/serve_helpers.hpp"

using namespace serve_test;
using json = nlohmann::json;

namespace {

struct Event {
  std::string name;  // "" for a comment line
  std::string data;  // the comment's text for a comment line
};

// The events of a text/event-stream body, in order, comments included.
std::vector<Event> events_of(const std::string& body) {
  std::vector<Event> events;
  std::size_t at = 0;
  for (std::size_t end; (end = body.find("\n\n", at)) != std::string::npos; at = end + 2) {
    Event event;
    const std::string block = body.substr(at, end - at);
    std::size_t line_at = 0;
    for (std::size_t line_end = 0; line_at <= block.size(); line_at = line_end + 1) {
      line_end = block.find('\n', line_at);
      if (line_end == std::string::npos) line_end = block.size();
      const std::string line = block.substr(line_at, line_end - line_at);
      if (line.rfind(": ", 0) == 0) event.data = line.substr(2);
      if (line.rfind("event: ", 0) == 0) event.name = line.substr(7);
      if (line.rfind("data: ", 0) == 0) event.data = line.substr(6);
    }
    events.push_back(event);
  }
  BOOST_TEST(at == body.size(), "the body ends with a whole event");
  return events;
}

std::vector<Event> named(const std::vector<Event>& events, const std::string& name) {
  std::vector<Event> kept;
  for (const Event& e : events)
    if (e.name == name) kept.push_back(e);
  return kept;
}

// A request's bytes for a raw connection.
json stream_request(const std::string& input, std::size_t beam, bool attention, bool stream) {
  json request = {{"inputs", {input}}, {"beam", beam}, {"scores", true}, {"attention", attention}};
  if (stream) request["stream"] = true;
  return request;
}

// An EventStream on one end of a loopback connection, the test's client on the other, on one io_context: what the
// stream's callbacks were told.
struct StreamPair {
  explicit StreamPair(attend::app::serve::EventStream::Settings settings, int buffer_bytes = 0) {
    namespace net = boost::asio;
    net::ip::tcp::acceptor acceptor(ioc, {net::ip::make_address("127.0.0.1"), 0});
    if (buffer_bytes > 0) client.open(net::ip::tcp::v4());
    if (buffer_bytes > 0) client.set_option(net::socket_base::receive_buffer_size(buffer_bytes));
    client.connect(acceptor.local_endpoint());
    server.emplace(acceptor.accept());
    if (buffer_bytes > 0) server->socket().set_option(net::socket_base::send_buffer_size(buffer_bytes));
    events = std::make_shared<attend::app::serve::EventStream>(
        *server, buffer, settings, [this](const std::string& why) { gone = why; },
        [this](bool reusable) { ended = reusable; });
    events->start(11, true, {});
  }
  // What the client has received by now (without waiting).
  std::string received() {
    std::string bytes(client.available(), '\0');
    if (!bytes.empty()) boost::asio::read(client, boost::asio::buffer(bytes));
    return bytes;
  }
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket client{ioc};
  std::optional<boost::beast::tcp_stream> server;
  boost::beast::flat_buffer buffer;
  std::shared_ptr<attend::app::serve::EventStream> events;
  std::string gone;
  std::optional<bool> ended;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(stream)

// The header waits for the first event and goes out with it (a client's first token comes in one write); the last
// chunk ends the stream, and the connection can serve a next request.
BOOST_AUTO_TEST_CASE(the_header_goes_out_with_the_first_event) {
  StreamPair pair({std::chrono::milliseconds(1000), std::chrono::milliseconds(60000)});
  pair.ioc.run_for(std::chrono::milliseconds(100));
  BOOST_TEST(pair.received().empty());
  pair.events->send("token", R"({"index":0})");
  pair.ioc.run_for(std::chrono::milliseconds(100));
  const std::string first = pair.received();
  BOOST_TEST(first.rfind("HTTP/1.1 200 OK\r\n", 0) == 0u, first);
  BOOST_TEST(first.find("Transfer-Encoding: chunked\r\n") != std::string::npos, first);
  // the header's end, then the event's chunk (32 bytes: 0x20), and nothing else
  const std::string chunk = "\r\n\r\n20\r\nevent: token\ndata: {\"index\":0}\n\n\r\n";
  BOOST_TEST(first.size() > chunk.size());
  BOOST_TEST(first.find(chunk) == first.size() - chunk.size(), first);
  pair.events->finish();
  pair.ioc.run_for(std::chrono::milliseconds(100));
  BOOST_TEST(pair.received() == "0\r\n\r\n");
  BOOST_TEST((pair.ended == std::optional<bool>(true)));
  BOOST_TEST(pair.gone.empty());
  // a stream that ends without an event: its header and last chunk together
  StreamPair empty({std::chrono::milliseconds(1000), std::chrono::milliseconds(60000)});
  empty.events->finish();
  empty.ioc.run_for(std::chrono::milliseconds(100));
  const std::string whole = empty.received();
  BOOST_TEST(whole.rfind("HTTP/1.1 200 OK\r\n", 0) == 0u, whole);
  BOOST_TEST(whole.find("\r\n\r\n0\r\n\r\n") == whole.size() - 9, whole);
  BOOST_TEST((empty.ended == std::optional<bool>(true)));
}

// A client that stops reading: once the sockets' buffers are full, a write it does not take within the write deadline
// ends the stream, told why, and the connection is not used again.
BOOST_AUTO_TEST_CASE(a_client_that_stops_reading_is_cut_off_at_the_write_deadline) {
  StreamPair pair({std::chrono::milliseconds(200), std::chrono::milliseconds(60000)}, 4096);
  const auto start = std::chrono::steady_clock::now();
  pair.events->send("token", std::string(4 << 20, 'x'));  // far more than the buffers hold
  pair.ioc.run_for(std::chrono::seconds(10));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST(pair.gone == "the client read nothing for the write deadline (--read-timeout)");
  BOOST_TEST((pair.ended == std::optional<bool>(false)));
  BOOST_TEST(seconds >= 0.2);
  BOOST_TEST(seconds < 5.0);
}

// With the attention, the input's tokens first; every token once, in order, each with the output so far and its
// attention row; then "done" carries the very body
// /v1/predict answers for the same request unstreamed, whose output is `attend predict`'s.
BOOST_AUTO_TEST_CASE(a_stream_tells_each_token_then_the_answer_predict_gives) {
  for (const std::string& model : {models().rnn, models().transformer}) {
    Server server("--model '" + model + "'");
    BOOST_TEST_REQUIRE(server.port != 0, server.log());
    const std::vector<std::string> inputs{"march 3 2001", "12/25/1999", "friday, july 4, 1975"};
    std::string lines;
    for (const std::string& input : inputs) lines += input + "\n";
    for (const std::size_t beam : {1u, 3u}) {
      const Run run = run_attend("predict --beam " + std::to_string(beam) + " --model '" + model + "'", lines);
      BOOST_TEST_REQUIRE(run.status == 0, run.err);
      const std::vector<std::string> predicted = cli_test::lines_of(run.out);
      for (std::size_t k = 0; k < inputs.size(); ++k) {
        BOOST_TEST_CONTEXT(model << ", beam " << beam << ", " << inputs[k]) {
          const bool attention = k != 1;
          Reply streamed = post(server.port, stream_request(inputs[k], beam, attention, true).dump());
          BOOST_TEST_REQUIRE(streamed.status == 200, streamed.body);
          BOOST_TEST(streamed.content_type == "text/event-stream; charset=utf-8");
          BOOST_TEST(streamed.headers["Transfer-Encoding"] == "chunked");
          BOOST_TEST(streamed.headers.count("Content-Length") == 0u);
          BOOST_TEST(streamed.headers["Cache-Control"] == "no-cache");
          const std::vector<Event> events = events_of(streamed.body);
          BOOST_TEST_REQUIRE(!events.empty());
          BOOST_TEST(events.back().name == "done");
          BOOST_TEST(named(events, "done").size() == 1u);
          const Reply whole = post(server.port, stream_request(inputs[k], beam, attention, false).dump());
          BOOST_TEST(events.back().data + "\n" == whole.body);  // the body's line
          const json answer = json::parse(events.back().data)["outputs"][0];
          BOOST_TEST(answer["output"].get<std::string>() == predicted[k]);
          // with the attention, what its rows run over comes first
          BOOST_TEST(named(events, "input").size() == (attention ? 1u : 0u));
          if (attention) BOOST_TEST(events.front().name == "input");
          if (attention) BOOST_TEST(json::parse(events.front().data)["source"] == answer["attention"]["source"]);
          const std::vector<Event> tokens = named(events, "token");
          BOOST_TEST_REQUIRE(!tokens.empty());
          for (std::size_t j = 0; j < tokens.size(); ++j) {
            const json token = json::parse(tokens[j].data);
            BOOST_TEST(token["index"] == j);
            BOOST_TEST(token["log_prob"].get<double>() <= 0.0);
            BOOST_TEST(token["token"] == (attention ? answer["attention"]["target"][j] : token["token"]));
            if (attention) BOOST_TEST(token["attention"].size() == answer["attention"]["weights"].size());
            for (std::size_t l = 0; attention && l < token["attention"].size(); ++l)
              for (std::size_t h = 0; h < token["attention"][l].size(); ++h)
                BOOST_TEST(token["attention"][l][h] == answer["attention"]["weights"][l][h][j]);
            BOOST_TEST(token.contains("attention") == attention);
          }
          BOOST_TEST(json::parse(tokens.back().data)["text"] == answer["output"]);
        }
      }
    }
    // the streams are counted as the requests they are
    BOOST_TEST(metric(get(server.port, "/metrics").body, "attend_requests_total{code=\"200\"}") == 12);
  }
}

// What cannot be streamed is refused before the stream begins, as a JSON error (an EventSource then fails without
// reconnecting); after a stream the connection serves the next request.
BOOST_AUTO_TEST_CASE(a_stream_is_refused_as_any_request_and_keeps_the_connection) {
  Server server("--model '" + models().rnn + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  const Reply two = post(server.port, R"({"inputs": ["1 2 2000", "3 4 2001"], "stream": true})");
  BOOST_TEST(two.status == 400);
  BOOST_TEST(two.json()["error"] == "\"stream\": a stream answers one input, and \"inputs\" holds 2");
  const Reply bad = post(server.port, R"({"inputs": ["1 2 2000"], "stream": "yes"})");
  BOOST_TEST(bad.status == 400);
  BOOST_TEST(bad.json()["error"].get<std::string>().find("\"stream\"") != std::string::npos, bad.body);
  Raw old(server.port);
  BOOST_TEST(old.send(raw_post(R"({"inputs": ["1 2 2000"], "stream": true})", "1.0")));
  const std::string refused = old.receive(20000);
  BOOST_TEST(refused.rfind("HTTP/1.0 400", 0) == 0u, refused);
  BOOST_TEST(refused.find("a stream needs HTTP/1.1") != std::string::npos, refused);
  // two requests on one connection: a stream, then a plain one
  Raw again(server.port);
  BOOST_TEST(
      again.send(raw_post(R"({"inputs": ["1 2 2000"], "stream": true})") + raw_post(R"({"inputs": ["1 2 2000"]})")));
  const std::string both = again.receive(3000);
  const std::size_t last_chunk = both.find("\r\n0\r\n\r\n");
  BOOST_TEST_REQUIRE(last_chunk != std::string::npos, both);
  BOOST_TEST(both.find("event: done") < last_chunk);
  BOOST_TEST(both.find("HTTP/1.1 200 OK", last_chunk) != std::string::npos, both);
  BOOST_TEST(both.find("{\"model\":\"dates\"", last_chunk) != std::string::npos, both);
  BOOST_TEST(!again.closed());
}

// While the input waits (here: for a batch, as another connection is open) comment lines go out at the heartbeat; a
// client that leaves then is dropped: its input is never decoded, and counted as cancelled.
BOOST_AUTO_TEST_CASE(a_waiting_stream_beats_and_a_client_that_leaves_cancels_its_input) {
  Server server("--model '" + models().rnn + "' --max-wait-ms 1500 --heartbeat-ms 50");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  Raw idle(server.port);  // another client connected: the batcher waits --max-wait-ms for its request
  Raw client(server.port);
  BOOST_TEST(client.send(raw_post(R"({"inputs": ["1 2 2000"], "stream": true})")));
  const std::string first = client.receive_for(400);
  BOOST_TEST(first.rfind("HTTP/1.1 200 OK", 0) == 0u, first);
  BOOST_TEST(first.find(": ping\n\n") != std::string::npos, first);
  BOOST_TEST(first.find("event: token") == std::string::npos, first);
  client.close();
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  const std::string metrics = get(server.port, "/metrics").body;
  BOOST_TEST(metric(metrics, "attend_inputs_cancelled_total") == 1);
  BOOST_TEST(metric(metrics, "attend_inputs_decoded_total") == 0);
  BOOST_TEST(server.log().find("stream ended: the client left") != std::string::npos, server.log());
  // the stream was answered (200); its cancelled job is nobody's error
  BOOST_TEST(metric(metrics, "attend_requests_total{code=\"500\"}") == -1, metrics);
  BOOST_TEST(server.log().find("→ 500") == std::string::npos, server.log());
}

// SIGTERM: a stream under way ends with an error event and its last chunk; the server then exits cleanly.
BOOST_AUTO_TEST_CASE(sigterm_ends_a_stream_with_an_error_event) {
  Server server("--model '" + models().rnn + "' --max-wait-ms 5000 --heartbeat-ms 100");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  Raw idle(server.port);
  Raw client(server.port);
  BOOST_TEST(client.send(raw_post(R"({"inputs": ["1 2 2000"], "stream": true})")));
  // the stream has begun: its header went out with its first heartbeat (its batch waits for the idle client)
  const std::string begun = client.receive_for(400);
  BOOST_TEST(begun.rfind("HTTP/1.1 200 OK\r\n", 0) == 0u, begun);
  BOOST_TEST(begun.find(": ping\n\n") != std::string::npos, begun);
  idle.close();
  BOOST_TEST(server.stop() == 0, server.log());
  const std::string rest = client.receive(20000);
  BOOST_TEST(rest.find("event: error\ndata: {\"error\":\"the server is stopping\"}\n\n") != std::string::npos, rest);
  BOOST_TEST(rest.find("event: done") == std::string::npos, rest);
  BOOST_TEST(rest.size() >= 5u);
  BOOST_TEST(rest.substr(rest.size() - 5) == "0\r\n\r\n", rest);
  BOOST_TEST(client.closed());
}

// A real client, the npm package `eventsource` (browsers' EventSource for Node), reads a stream: the same tokens and
// answer as read by hand; a refusal fails it with the status, not reconnecting.
BOOST_AUTO_TEST_CASE(the_npm_eventsource_client_reads_a_stream,
                     *boost::unit_test::precondition(NodeClient{"eventsource"})) {
  Server server("--model '" + models().transformer + "'");
  BOOST_TEST_REQUIRE(server.port != 0, server.log());
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port) + "/v1/predict";
  const std::string body = stream_request("12/25/1999", 1, true, true).dump();
  const auto client = [&](const std::string& request) {
    const Run run = run_attend("'" + clients + "/eventsource.mjs' " + url + " '" + request + "'", "", "node");
    BOOST_TEST(run.status == 0, run.err);
    return json::parse(run.out, nullptr, false);
  };
  const json read = client(body);
  const std::vector<Event> events = events_of(post(server.port, body).body);
  BOOST_TEST_REQUIRE(!events.empty());
  BOOST_TEST(read["done"] == json::parse(events.back().data));
  const std::vector<Event> tokens = named(events, "token");
  BOOST_TEST(tokens.size() > 3u);
  BOOST_TEST_REQUIRE(read["tokens"].size() == tokens.size());
  for (std::size_t j = 0; j < tokens.size(); ++j) BOOST_TEST(read["tokens"][j] == json::parse(tokens[j].data));
  BOOST_TEST(read["error"].is_null());
  const json refused = client(R"({"inputs": ["1 2 2000", "3 4 2001"], "stream": true})");
  BOOST_TEST(refused["failed"]["code"] == 400, refused.dump());
  BOOST_TEST(refused["tokens"].empty());
  // the refused stream was asked once: the client did not post it again
  BOOST_TEST(metric(get(server.port, "/metrics").body, "attend_requests_total{code=\"400\"}") == 1);
}

BOOST_AUTO_TEST_SUITE_END()
