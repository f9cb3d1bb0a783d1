// attend serve's HTTP server (server.hpp). Each connection is a Session on a strand of its own: it reads one request
// at a time within --read-timeout (headers and body together, so a client sending a byte a second is cut off), answers
// it, and reads the next while the client keeps the connection alive. A prediction is handed to its model's batcher;
// the answer is written when the worker has decoded it. Nothing a client sends throws out of a handler: the worst is
// a 500 answer and a line in the log.
#include "apps/serve/server.hpp"

#include <array>
#include <atomic>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "apps/serve/event_stream.hpp"
#include "apps/serve/explorer.hpp"
#include "apps/serve/libretranslate.hpp"

namespace attend::app::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

class Session;
using Clock = std::chrono::steady_clock;

// "GET /healthz": the routes, for 404's and 405's answers.
constexpr const char* api_summary =
    "GET / (the explorer), GET /healthz, GET /metrics, GET /v1/models, GET /v1/examples, POST /v1/predict, "
    "POST /v1/explain; LibreTranslate's POST /translate, POST /detect, GET /languages, GET /frontend/settings";

// What every session shares: the models and their batchers, the counters, the listening socket and the sessions.
struct Core {
  ServerSettings settings;
  std::vector<ServedModel> models;
  std::vector<std::size_t> parameters;
  std::vector<const ModelFile*> files;  // models[m].file
  std::vector<ServedPair> pairs;        // the models that translate, for LibreTranslate's API
  Metrics metrics;
  std::vector<std::unique_ptr<Batcher>> batchers;  // one a model
  net::io_context ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> guard;  // until the batchers are drained
  tcp::acceptor acceptor{net::make_strand(ioc)};
  net::steady_timer accept_pause{acceptor.get_executor()};
  net::signal_set signals{ioc, SIGINT, SIGTERM};
  std::mutex sessions_mutex;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions;
  std::atomic<bool> stopping{false};
  // connections open, and those whose request waits in a batcher: when every open one waits, no other request can
  // come soon, and a batcher decodes what it has at once (Batcher's more_coming)
  std::atomic<std::int64_t> open_sessions{0}, waiting_sessions{0};
  std::thread stopper;  // drains the batchers once stopping
  std::mutex log_mutex;
  // Each model's test split, read when first asked for (GET /v1/examples) on a thread of its own: reading a sentence
  // file takes a second or two, which no connection's thread should spend.
  std::mutex examples_mutex;
  std::vector<std::shared_ptr<const std::vector<Example>>> examples;  // one a model; empty until read
  net::thread_pool examples_reader{1};

  void log(const std::string& line) {
    const std::lock_guard<std::mutex> lock(log_mutex);
    std::cerr << "attend serve: " << line << std::endl;
  }
  std::string model_names() const {
    std::string names;
    for (const ServedModel& m : models) names += (names.empty() ? "" : ", ") + m.name;
    return names;
  }
  void accept(const std::shared_ptr<Core>& self);
  void begin_stop(const std::shared_ptr<Core>& self);
};

// Beast's string_view (Boost's) as the standard one.
std::string_view view(beast::string_view text) { return {text.data(), text.size()}; }

// A request's target as the log shows it: printable ASCII, at most 100 characters.
std::string printable(std::string_view text) {
  std::string shown;
  for (const char c : text.substr(0, 100)) shown += c >= 0x20 && c < 0x7f ? c : '?';
  return text.size() > 100 ? shown + "…" : shown;
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, std::shared_ptr<Core> core, bool over_limit)
      : stream_(std::move(socket)), core_(std::move(core)), over_limit_(over_limit) {
    beast::error_code ec;
    const tcp::endpoint peer = stream_.socket().remote_endpoint(ec);
    peer_ = ec ? "a client" : peer.address().to_string() + ":" + std::to_string(peer.port());
    core_->metrics.connection_opened();
    ++core_->open_sessions;
  }
  ~Session() {
    core_->metrics.connection_closed();
    --core_->open_sessions;
    const std::lock_guard<std::mutex> lock(core_->sessions_mutex);
    core_->sessions.erase(this);
  }
  void start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); });
  }
  // On the server's stop: a connection waiting for its next request is closed; one with a request under way is
  // closed once it is answered; a stream ends. `seen` is called once this connection has done so.
  void stop(std::function<void()> seen) {
    net::post(stream_.get_executor(), [self = shared_from_this(), seen = std::move(seen)] {
      self->stopping_ = true;
      if (self->idle_ && self->parser_ && !self->parser_->got_some() && self->buffer_.size() == 0)
        self->stream_.cancel();
      if (self->events_) {  // a stream ends with what was decoded and an error event; its decoding stops
        self->cancel_->store(true);
        self->events_->end_with("error", error_body("the server is stopping"));
      }
      seen();
    });
  }

 private:
  void read();
  void on_header(beast::error_code ec);
  void read_body();
  void on_read(beast::error_code ec);
  void route();
  void healthz();
  void metrics();
  void models();
  void examples();
  void predict();
  void explain();
  void page();
  void translate();
  void detect();
  void languages();
  void frontend_settings();
  std::string request_query() const;
  std::string allowed_origin() const;
  std::string request_content_type() const;
  std::size_t find_model(const std::string& name) const;
  std::shared_ptr<std::atomic<bool>> submit(std::size_t model, std::unique_ptr<Job> job);
  void stream_prediction(std::size_t model, std::shared_ptr<const PredictRequest> request,
                         std::shared_ptr<std::vector<ReadInput>> reads, std::unique_ptr<Job> job);
  void stream_ended(bool reusable);
  std::string outputs_body(std::size_t model, const PredictRequest& request, const std::vector<ReadInput>& reads,
                           std::vector<models::Hypothesis> outputs, const AttentionLayout& layout) const;
  void answer_outputs(std::size_t model, const PredictRequest& request, const std::vector<ReadInput>& reads,
                      std::vector<models::Hypothesis> outputs, const AttentionLayout& layout);
  std::vector<std::pair<std::string, std::string>> cors_headers(const char* allow) const;
  void fail(int status, const std::string& message, bool close = false, const char* allow = "");
  void answer(int status, std::string body, const char* content_type = "application/json", const char* allow = "");
  void on_write(bool close, beast::error_code ec);
  void watch(std::shared_ptr<std::atomic<bool>> cancelled);
  void linger();
  void drain();
  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<http::response<http::string_body>> response_;
  std::shared_ptr<EventStream> events_;        // the answer being streamed, if any
  std::shared_ptr<std::atomic<bool>> cancel_;  // and its job's cancellation
  // While a request's job is decoded: a read is kept pending (watch()), so that a client that leaves is noticed and
  // its job cancelled; the next request waits for the read to end.
  bool watching_ = false, answering_ = false, read_after_watch_ = false;
  std::array<char, 8192> discarded_{};
  std::shared_ptr<Core> core_;
  bool over_limit_;
  bool idle_ = false;      // waiting for a request's first byte
  bool stopping_ = false;  // the server stops: close after this answer
  bool close_after_ = false;
  bool preflight_ = false;  // the answer being written is one to OPTIONS
  std::string peer_, method_ = "?", target_ = "?";
  unsigned version_ = 11;
  Clock::time_point read_at_;
};

void Session::read() {
  parser_.emplace();
  parser_->header_limit(16 * 1024);
  parser_->body_limit(over_limit_ ? 0 : core_->settings.max_body);
  idle_ = true;
  if (stopping_ && buffer_.size() == 0) return close();
  stream_.expires_after(core_->settings.read_timeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
}

// After the headers: a client that waits for "100 Continue" (curl does for bodies over 1 KB) is told to go on.
void Session::on_header(beast::error_code ec) {
  idle_ = false;
  if (ec || parser_->is_done()) return on_read(ec);
  if (parser_->get()[http::field::expect] != "100-continue") return read_body();
  auto go_on = std::make_shared<http::response<http::empty_body>>(http::status::continue_, parser_->get().version());
  http::async_write(stream_, *go_on, [self = shared_from_this(), go_on](beast::error_code ec, std::size_t) {
    if (ec) return self->close();
    self->read_body();
  });
}

void Session::read_body() {
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
}

void Session::on_read(beast::error_code ec) {
  idle_ = false;
  read_at_ = Clock::now();
  if (ec == beast::error::timeout) {
    if (parser_->got_some())
      core_->log(peer_ + ": no whole request within --read-timeout (" +
                 std::to_string(core_->settings.read_timeout.count()) + " ms): connection closed");
    return close();
  }
  if (ec == http::error::end_of_stream || ec == net::error::operation_aborted || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == net::error::broken_pipe) {
    return close();
  }
  if (parser_->is_header_done()) {
    method_ = std::string(parser_->get().method_string());
    target_ = printable(view(parser_->get().target()));
    version_ = parser_->get().version();
  }
  if (over_limit_) {
    return fail(
        503,
        "too many connections (--max-connections " + std::to_string(core_->settings.max_connections) + "); try again",
        true);
  }
  if (ec == http::error::body_limit) {
    return fail(413, "the body is larger than " + std::to_string(core_->settings.max_body) + " bytes (--max-body)",
                true);
  }
  if (ec == http::error::header_limit) return fail(431, "the request's headers are larger than 16 KB", true);
  if (ec) return fail(400, "malformed HTTP request: " + ec.message(), true);
  try {
    route();
  } catch (const ApiError& e) {
    fail(e.status, e.what());
  } catch (const std::exception& e) {
    fail(500, std::string("internal error: ") + e.what(), true);
  }
}

void Session::route() {
  struct Route {
    const char* path;
    http::verb verb;
    void (Session::*handle)();
  };
  static const Route routes[] = {{"/healthz", http::verb::get, &Session::healthz},
                                 {"/metrics", http::verb::get, &Session::metrics},
                                 {"/v1/models", http::verb::get, &Session::models},
                                 {"/v1/examples", http::verb::get, &Session::examples},
                                 {"/v1/predict", http::verb::post, &Session::predict},
                                 {"/v1/explain", http::verb::post, &Session::explain},
                                 {"/translate", http::verb::post, &Session::translate},
                                 {"/detect", http::verb::post, &Session::detect},
                                 {"/languages", http::verb::get, &Session::languages},
                                 {"/frontend/settings", http::verb::get, &Session::frontend_settings},
                                 {"/", http::verb::get, &Session::page},
                                 {"/index.html", http::verb::get, &Session::page},
                                 {"/explorer.css", http::verb::get, &Session::page},
                                 {"/explorer.js", http::verb::get, &Session::page}};
  const std::string_view target = view(parser_->get().target());
  const std::string_view path = target.substr(0, target.find('?'));
  for (const Route& r : routes) {
    if (path != r.path) continue;
    if (parser_->get().method() == r.verb) return (this->*r.handle)();
    if (parser_->get().method() == http::verb::options) {  // a browser's preflight (CORS), or a client asking
      preflight_ = true;
      return answer(204, "", "", r.verb == http::verb::get ? "GET, OPTIONS" : "POST, OPTIONS");
    }
    const char* allow = r.verb == http::verb::get ? "GET" : "POST";
    return fail(405, method_ + " " + r.path + ": the method is not allowed (use " + allow + ")", false, allow);
  }
  fail(404, "no such path: " + printable(path) + " (the API: " + api_summary + ")");
}

// The explorer's page and its files, as compiled in.
void Session::page() {
  const std::string_view target = view(parser_->get().target());
  const EmbeddedFile* file = explorer_file(target.substr(0, target.find('?')));
  if (file == nullptr) throw ApiError(404, "no such page");
  answer(200, std::string(file->body), file->content_type);
}

void Session::healthz() { answer(200, body_of({{"status", core_->stopping ? "stopping" : "ok"}})); }

void Session::metrics() {
  std::map<std::string, std::size_t> queued;
  for (std::size_t m = 0; m < core_->models.size(); ++m) queued[core_->models[m].name] = core_->batchers[m]->queued();
  answer(200, core_->metrics.text(queued), "text/plain; version=0.0.4; charset=utf-8");
}

void Session::models() {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t m = 0; m < core_->models.size(); ++m)
    list.push_back(model_json(core_->models[m].name, core_->models[m].file, core_->parameters[m]));
  answer(200, body_of({{"models", list}}));
}

// The first inputs of a model's test split, read on the examples' thread: a model whose data cannot be made (a sentence
// file moved or changed since training) is a 404 naming the file.
void Session::examples() {
  const std::string_view target = view(parser_->get().target());
  const std::size_t mark = target.find('?');
  const ExamplesRequest request =
      parse_examples_query(mark == std::string_view::npos ? "" : std::string(target.substr(mark + 1)));
  const std::size_t model = find_model(request.model);
  // the answer is posted back to this connection; the guard keeps the io_context running until it is
  auto work = std::make_shared<net::executor_work_guard<net::io_context::executor_type>>(core_->ioc.get_executor());
  net::post(core_->examples_reader, [self = shared_from_this(), model, request, work] {
    Core& core = *self->core_;
    const ServedModel& served = core.models[model];
    int status = 200;
    std::string body;
    try {
      std::shared_ptr<const std::vector<Example>> examples;
      {
        const std::lock_guard<std::mutex> lock(core.examples_mutex);
        examples = core.examples[model];
      }
      if (!examples) {
        examples = std::make_shared<const std::vector<Example>>(
            served.file.task->held_out(*served.file.task->make_data(), "test"));
        const std::lock_guard<std::mutex> lock(core.examples_mutex);
        core.examples[model] = examples;
      }
      body = body_of(examples_json(served.name, served.file, *examples, request.count));
    } catch (const std::exception& e) {
      status = 404;
      body = "model " + served.name + " has no examples: " + e.what();
    }
    net::post(self->stream_.get_executor(), [self, status, body = std::move(body), work]() mutable {
      if (status == 200) return self->answer(200, std::move(body));
      self->fail(status, body);
    });
  });
}

// The served model a request names (its place), or the only one.
std::size_t Session::find_model(const std::string& name) const {
  if (name.empty() && core_->models.size() > 1) {
    throw ApiError(400, "no \"model\": " + std::to_string(core_->models.size()) + " models are served (" +
                            core_->model_names() + ")");
  }
  std::size_t model = 0;
  if (!name.empty()) {
    while (model < core_->models.size() && core_->models[model].name != name) ++model;
    if (model == core_->models.size()) {
      throw ApiError(404, "unknown model " +
                              nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                              " (served: " + core_->model_names() + ")");
    }
  }
  return model;
}

void Session::predict() {
  const PredictRequest request = parse_predict_request(parser_->get().body(), core_->settings.request);
  const std::size_t model = find_model(request.model);
  const ServedModel& served = core_->models[model];
  if (request.attention && !served.file.model->has_attention())
    throw ApiError(400, "\"attention\": model " + served.name + " (" + served.file.model->describe() +
                            ") has no attention weights");
  auto reads = std::make_shared<std::vector<ReadInput>>();
  auto job = std::make_unique<Job>();
  for (std::size_t k = 0; k < request.inputs.size(); ++k) {
    reads->push_back(read_input(served.file, request.inputs[k], k));
    if (!reads->back().error.empty()) continue;
    if (served.file.task->input() == InputKind::image) {
      job->images.push_back(std::move(reads->back().image));
    } else {
      job->sources.push_back(reads->back().source);
    }
  }
  const auto shared_request = std::make_shared<PredictRequest>(request);
  job->beam = request.beam;
  job->attention = request.attention;
  if (request.stream) return stream_prediction(model, shared_request, reads, std::move(job));
  if (job->size() == 0) return answer_outputs(model, request, *reads, {}, {});
  auto self = shared_from_this();
  job->done = [self, model, shared_request, reads](std::vector<models::Hypothesis> outputs, AttentionLayout layout) {
    --self->core_->waiting_sessions;
    net::post(self->stream_.get_executor(), [self, model, shared_request, reads, outputs = std::move(outputs), layout] {
      self->answer_outputs(model, *shared_request, *reads, outputs, layout);
    });
  };
  watch(submit(model, std::move(job)));
}

// A prediction streamed (docs/reference/serve.md, "Streaming"): what cannot be decoded is refused as any request is,
// before the stream begins; then each token as it settles ("token"), and the answer /v1/predict gives ("done") — or
// an "error" event. The tokens' events are written on the worker thread, the stream's writes on this connection's.
void Session::stream_prediction(std::size_t model, std::shared_ptr<const PredictRequest> request,
                                std::shared_ptr<std::vector<ReadInput>> reads, std::unique_ptr<Job> job) {
  if (!reads->front().error.empty()) throw ApiError(400, reads->front().error);
  if (version_ < 11) throw ApiError(400, "\"stream\": a stream needs HTTP/1.1 (its chunks)");
  auto self = shared_from_this();
  auto so_far = std::make_shared<std::vector<std::int64_t>>();
  if (request->attention) {  // what the rows run over, before the first row (the batch's layout, on the worker)
    job->decoding = [self, reads](const AttentionLayout& layout) {
      net::post(self->stream_.get_executor(), [self, event = body_of(input_json(layout, reads->front()))] {
        if (self->events_) self->events_->send("input", event);
      });
    };
  }
  job->settled = [self, model, request, so_far](std::size_t, std::size_t first,
                                                const std::vector<models::SettledToken>& tokens,
                                                const AttentionLayout& layout) {
    std::vector<std::string> events;
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      so_far->push_back(tokens[t].token);
      events.push_back(body_of(
          token_json(self->core_->models[model].file, layout, first + t, tokens[t], *so_far, request->attention)));
    }
    net::post(self->stream_.get_executor(), [self, events = std::move(events)] {
      for (const std::string& event : events)
        if (self->events_) self->events_->send("token", event);
    });
  };
  job->done = [self, model, request, reads](std::vector<models::Hypothesis> outputs, AttentionLayout layout) {
    --self->core_->waiting_sessions;
    std::string body, event = "done";
    try {
      body = self->outputs_body(model, *request, *reads, std::move(outputs), layout);
    } catch (const std::exception& e) {
      body = error_body(std::string("internal error: ") + e.what());
      event = "error";
    }
    net::post(self->stream_.get_executor(), [self, body = std::move(body), event] {
      if (!self->events_) return;
      self->events_->end_with(event, body);
    });
  };
  cancel_ = submit(model, std::move(job));  // a full queue is a 503, as for any request
  const EventStream::Settings settings{core_->settings.read_timeout, core_->settings.heartbeat};
  events_ = std::make_shared<EventStream>(
      stream_, buffer_, settings,
      [self](const std::string& reason) {
        self->cancel_->store(true);
        self->core_->log(self->peer_ + " " + self->method_ + " " + self->target_ + ": stream ended: " + reason);
      },
      [self](bool reusable) { self->stream_ended(reusable); });
  const bool keep_alive = !(stopping_ || core_->stopping || !parser_->keep_alive());
  events_->start(version_, keep_alive, cors_headers(""));
}

// After a stream's last chunk (reusable) the connection reads its next request; after a failed stream it closes.
void Session::stream_ended(bool reusable) {
  core_->metrics.request(200, std::chrono::duration<double>(Clock::now() - read_at_).count());
  events_.reset();
  cancel_.reset();
  if (!reusable || stopping_ || core_->stopping || !parser_->keep_alive()) return close();
  read();
}

// One input, decoded alone with everything the explorer shows of it.
void Session::explain() {
  const ExplainRequest request = parse_explain_request(parser_->get().body(), core_->settings.request);
  const std::size_t model = find_model(request.model);
  const ServedModel& served = core_->models[model];
  auto read = std::make_shared<ReadInput>(read_input(served.file, request.input, 0));
  if (!read->error.empty()) throw ApiError(400, read->error);
  auto job = std::make_unique<Job>();
  if (served.file.task->input() == InputKind::image) {
    job->images.push_back(std::move(read->image));  // the answer needs only the tokens
  } else {
    job->sources.push_back(read->source);
  }
  job->beam = request.beam;
  job->explain = true;
  job->attribution_steps = request.attribution ? request.steps : 0;
  job->precision = request.precision;
  auto self = shared_from_this();
  const std::string text = served.file.task->input() == InputKind::text ? request.input : "";
  const std::string precision = request.precision.empty() ? decoding_precision(served.file) : request.precision;
  job->explained = [self, model, read, text, precision](Explanation explanation) {
    --self->core_->waiting_sessions;
    net::post(self->stream_.get_executor(), [self, model, read, text, precision, explanation = std::move(explanation)] {
      try {
        const ServedModel& served = self->core_->models[model];
        nlohmann::ordered_json json = explanation_json(served.file, *read, text, explanation);
        json = {{"model", served.name}, {"precision", precision}, {"explanation", std::move(json)}};
        self->answer(200, body_of(json));
      } catch (const std::exception& e) {
        self->fail(500, std::string("internal error: ") + e.what(), true);
      }
    });
  };
  watch(submit(model, std::move(job)));
}

// The value of Access-Control-Allow-Origin for this request: its Origin when --cors-origin allows it ("*" for any),
// else "" (no CORS header: a browser keeps the answer from the page).
std::string Session::allowed_origin() const {
  const auto& origins = core_->settings.cors_origins;
  if (origins.empty() || !parser_ || !parser_->is_header_done()) return "";
  const std::string origin(view(parser_->get()[http::field::origin]));
  if (origin.empty()) return "";
  for (const std::string& allowed : origins) {
    if (allowed == "*") return "*";
    if (allowed == origin) return origin;
  }
  return "";
}

// The CORS headers of an answer (none when the request's origin is not allowed); a preflight's name the methods and
// headers a page may use.
std::vector<std::pair<std::string, std::string>> Session::cors_headers(const char* allow) const {
  std::vector<std::pair<std::string, std::string>> headers;
  const std::string origin = allowed_origin();
  if (origin.empty()) return headers;
  headers.emplace_back("Access-Control-Allow-Origin", origin);
  if (origin != "*") headers.emplace_back("Vary", "Origin");
  if (preflight_) {
    headers.emplace_back("Access-Control-Allow-Methods", allow);
    headers.emplace_back("Access-Control-Allow-Headers", "Authorization, Content-Type");
    headers.emplace_back("Access-Control-Max-Age", "86400");
  }
  return headers;
}

std::string Session::request_query() const {
  const std::string_view target = view(parser_->get().target());
  const std::size_t mark = target.find('?');
  return mark == std::string_view::npos ? "" : std::string(target.substr(mark + 1));
}

std::string Session::request_content_type() const {
  return std::string(view(parser_->get()[http::field::content_type]));
}

// LibreTranslate's POST /translate (libretranslate.hpp): the texts decoded by the chosen model's batcher, greedily,
// as one job; a text the model cannot read is the request's 400.
void Session::translate() {
  const TranslateRequest request =
      parse_translate_request(request_content_type(), request_query(), parser_->get().body(), core_->settings.request);
  check_api_key(core_->settings.api_keys, request.api_key);
  const ChosenPair chosen = choose_pair(request, core_->pairs, core_->files);
  const std::size_t model = core_->pairs[chosen.pair].model;
  const ModelFile& file = core_->models[model].file;
  auto job = std::make_unique<Job>();
  for (std::size_t k = 0; k < request.q.size(); ++k) {
    ReadInput read = read_input(file, request.q[k], k);
    if (!read.error.empty()) throw ApiError(400, read.error);
    job->sources.push_back(std::move(read.source));
  }
  // with alternatives, a beam of one more (LibreTranslate's hypotheses(text, N + 1)): its best is the translation
  job->beam = request.alternatives > 0 ? request.alternatives + 1 : 1;
  job->alternatives = request.alternatives;
  auto self = shared_from_this();
  auto shared_request = std::make_shared<const TranslateRequest>(request);
  job->done = [self, model, shared_request, chosen](std::vector<models::Hypothesis> outputs, AttentionLayout) {
    --self->core_->waiting_sessions;
    net::post(self->stream_.get_executor(), [self, model, shared_request, chosen, outputs = std::move(outputs)] {
      try {
        const ModelFile& file = self->core_->models[model].file;
        const auto text = [&file](const std::vector<std::int64_t>& tokens) {
          return file.task->join_target(file.target_vocabulary.decode(tokens));
        };
        std::vector<std::string> texts;
        std::vector<std::vector<std::string>> others;
        for (const models::Hypothesis& output : outputs) {
          texts.push_back(text(output.tokens));
          others.emplace_back();
          for (const auto& tokens : output.alternatives) others.back().push_back(text(tokens));
        }
        self->answer(200, body_of(translate_json(*shared_request, chosen, self->core_->pairs, texts, others)));
      } catch (const std::exception& e) {
        self->fail(500, std::string("internal error: ") + e.what(), true);
      }
    });
  };
  watch(submit(model, std::move(job)));
}

void Session::detect() {
  const DetectRequest request =
      parse_detect_request(request_content_type(), request_query(), parser_->get().body(), core_->settings.request);
  check_api_key(core_->settings.api_keys, request.api_key);
  if (core_->pairs.empty()) throw ApiError(400, "no model served here translates between named languages");
  answer(200, body_of(detect_json(request, core_->pairs, core_->files)));
}

void Session::languages() { answer(200, body_of(languages_json(core_->pairs))); }

void Session::frontend_settings() {
  answer(200, body_of(frontend_settings_json(core_->pairs, !core_->settings.api_keys.empty())));
}

// Hands a job to the model's batcher; its `failed` answers 500. Returns the job's `cancelled`, which the session sets
// when its client leaves. Throws ApiError 503 when the queue cannot take it.
std::shared_ptr<std::atomic<bool>> Session::submit(std::size_t model, std::unique_ptr<Job> job) {
  auto self = shared_from_this();
  std::shared_ptr<std::atomic<bool>> cancelled = job->cancelled;
  job->failed = [self, cancelled](const std::string& message) {
    --self->core_->waiting_sessions;
    if (cancelled->load()) return;  // nobody waits: the stream that asked is over
    net::post(self->stream_.get_executor(), [self, message] {
      if (!self->events_) return self->fail(500, message, true);
      if (self->events_->finishing()) return;  // cancelled: the stream is over already
      self->core_->log(self->peer_ + " " + self->method_ + " " + self->target_ + " → error event: " + message);
      self->events_->end_with("error", error_body(message));
    });
  };
  const std::size_t inputs = job->size();
  ++core_->waiting_sessions;
  if (!core_->batchers[model]->submit(std::move(job))) {
    --core_->waiting_sessions;
    if (core_->stopping) throw ApiError(503, "the server is stopping");
    throw ApiError(503, "the queue is full (" + std::to_string(core_->batchers[model]->queued()) + " inputs wait, " +
                            std::to_string(inputs) + " more would pass --max-queue " +
                            std::to_string(core_->settings.batch.max_queue) + "); try again");
  }
  return cancelled;
}

// The answer of /v1/predict: each input's output, or its own error, in the inputs' order.
std::string Session::outputs_body(std::size_t model, const PredictRequest& request, const std::vector<ReadInput>& reads,
                                  std::vector<models::Hypothesis> outputs, const AttentionLayout& layout) const {
  const ServedModel& served = core_->models[model];
  const bool text = served.file.task->input() == InputKind::text;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  std::size_t at = 0;
  for (std::size_t k = 0; k < reads.size(); ++k) {
    if (!reads[k].error.empty()) {
      list.push_back({{"error", reads[k].error}});
    } else {
      list.push_back(output_json(served.file, layout, reads[k], text ? request.inputs[k] : "", outputs[at++], request));
    }
  }
  return body_of({{"model", served.name}, {"outputs", list}});
}

void Session::answer_outputs(std::size_t model, const PredictRequest& request, const std::vector<ReadInput>& reads,
                             std::vector<models::Hypothesis> outputs, const AttentionLayout& layout) {
  try {
    answer(200, outputs_body(model, request, reads, std::move(outputs), layout));
  } catch (const std::exception& e) {
    fail(500, std::string("internal error: ") + e.what(), true);
  }
}

void Session::fail(int status, const std::string& message, bool close, const char* allow) {
  core_->log(peer_ + " " + method_ + " " + target_ + " → " + std::to_string(status) + ": " + message);
  close_after_ = close_after_ || close;
  answer(status, error_body(message), "application/json", allow);
}

void Session::answer(int status, std::string body, const char* content_type, const char* allow) {
  if (!stream_.socket().is_open()) return;  // the client left while its request was decoded: nobody to answer
  if (watching_ && !answering_) {           // the watch ends: what it read stays in the buffer for the next request
    answering_ = true;
    stream_.cancel();
  }
  const bool close =
      close_after_ || stopping_ || core_->stopping || !parser_->is_header_done() || !parser_->keep_alive();
  response_ = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(status), version_);
  response_->set(http::field::server, "attend");
  if (*content_type) response_->set(http::field::content_type, content_type);
  if (*allow) response_->set(http::field::allow, allow);
  for (const auto& [name, value] : cors_headers(allow)) response_->set(name, value);
  preflight_ = false;
  if (status == 503) response_->set(http::field::retry_after, "1");
  response_->body() = std::move(body);
  response_->keep_alive(!close);
  if (status != 204) response_->prepare_payload();  // a 204 has no body, and no Content-Length (RFC 9110)
  core_->metrics.request(status, std::chrono::duration<double>(Clock::now() - read_at_).count());
  stream_.expires_after(core_->settings.read_timeout);
  http::async_write(stream_, *response_, [self = shared_from_this(), close](beast::error_code ec, std::size_t) {
    self->on_write(close, ec);
  });
}

void Session::on_write(bool close, beast::error_code ec) {
  response_.reset();
  if (ec) return this->close();
  if (close) return parser_->is_done() ? this->close() : linger();
  if (watching_) {  // the cancelled watch has not ended yet: it reads on when it does
    read_after_watch_ = true;
    return;
  }
  read();
}

// A read kept pending while the request's job is decoded: the client's next requests (pipelined) go into the buffer
// as the parser would take them; a client that leaves (end of stream, reset) cancels the job — queued, its inputs are
// not decoded; being decoded, they stop at the next step; an explanation's attribution stops at its next pass (the
// batcher counts them in attend_inputs_cancelled_total) — and nothing is answered. No deadline meanwhile: the decoding
// takes what it takes. Ends when the answer is written (answer() cancels it).
void Session::watch(std::shared_ptr<std::atomic<bool>> cancelled) {
  constexpr std::size_t watched_bytes = 64 * 1024;  // beyond this, a pipelining client waits for the answer
  if (buffer_.size() >= watched_bytes) return;
  watching_ = true;
  answering_ = false;
  stream_.expires_never();
  stream_.async_read_some(
      buffer_.prepare(watched_bytes - buffer_.size()),
      [self = shared_from_this(), cancelled = std::move(cancelled)](beast::error_code ec, std::size_t n) {
        self->watching_ = false;
        if (!ec) self->buffer_.commit(n);
        if (self->answering_) {
          self->answering_ = false;
          if (self->read_after_watch_) {
            self->read_after_watch_ = false;
            self->read();
          }
          return;
        }
        if (!ec) return self->watch(cancelled);
        cancelled->store(true);
        self->core_->log(self->peer_ + " " + self->method_ + " " + self->target_ + ": the client left (" +
                         ec.message() + "): its inputs are cancelled");
        self->close();
      });
}

// Closing on a client that is still sending (a body over --max-body) would reset the connection, and the client
// could lose the answer: the server stops sending, reads and drops what comes until the client closes or
// --read-timeout passes, then closes.
void Session::linger() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream_.expires_after(core_->settings.read_timeout);  // once: a client that sends on and on is cut off
  drain();
}

void Session::drain() {
  stream_.async_read_some(net::buffer(discarded_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec) return self->close();
    self->drain();
  });
}

void Core::accept(const std::shared_ptr<Core>& self) {
  acceptor.async_accept(net::make_strand(ioc), [self](beast::error_code ec, tcp::socket socket) {
    if (self->stopping) return;
    if (ec) {
      // out of file descriptors, or the like: say so, and try again a little later rather than spin
      self->log("accepting a connection failed: " + ec.message());
      self->accept_pause.expires_after(std::chrono::milliseconds(100));
      self->accept_pause.async_wait([self](beast::error_code) {
        if (!self->stopping) self->accept(self);
      });
      return;
    }
    std::size_t open = 0;
    {
      const std::lock_guard<std::mutex> lock(self->sessions_mutex);
      open = self->sessions.size();
    }
    // beyond the limit a connection is told so (503); far beyond it, closed at once
    if (open < 2 * self->settings.max_connections) {
      auto session = std::make_shared<Session>(std::move(socket), self, open >= self->settings.max_connections);
      {
        const std::lock_guard<std::mutex> lock(self->sessions_mutex);
        self->sessions[session.get()] = session;
      }
      session->start();
    }
    self->accept(self);
  });
}

// No new connection; idle ones closed, the others once answered; the batchers decode what they hold, then the
// io_context runs out of work and run() returns.
void Core::begin_stop(const std::shared_ptr<Core>& self) {
  if (stopping.exchange(true)) return;
  log("stopping: no new connections; answering the requests under way");
  net::post(acceptor.get_executor(), [self] {
    beast::error_code ignored;
    self->acceptor.close(ignored);
    self->accept_pause.cancel();
    self->signals.cancel(ignored);
  });
  std::vector<std::shared_ptr<Session>> open;
  {
    const std::lock_guard<std::mutex> lock(sessions_mutex);
    for (const auto& [raw, weak] : sessions)
      if (auto session = weak.lock()) open.push_back(session);
  }
  // the batchers stop (decoding what they hold) once every connection has seen the stop — a stream's input is then
  // cancelled, not decoded
  auto unseen = std::make_shared<std::atomic<std::size_t>>(open.size() + 1);
  auto all_seen = std::make_shared<std::promise<void>>();
  const auto seen = [unseen, all_seen] {
    if (--*unseen == 0) all_seen->set_value();
  };
  for (const auto& session : open) session->stop(seen);
  seen();
  stopper = std::thread([self, all_seen] {
    all_seen->get_future().wait_for(std::chrono::seconds(5));
    for (const auto& batcher : self->batchers) batcher->stop();
    net::post(self->ioc, [self] { self->guard.reset(); });
  });
}

}  // namespace

struct Server::State {
  std::shared_ptr<Core> core = std::make_shared<Core>();
};

Server::Server(std::vector<ServedModel> models, const ServerSettings& settings) : state_(std::make_shared<State>()) {
  Core& core = *state_->core;
  core.settings = settings;
  core.models = std::move(models);
  core.examples.resize(core.models.size());
  for (ServedModel& m : core.models) {
    core.files.push_back(&m.file);
    core.parameters.push_back(m.file.model->module().parameter_count());
    core.batchers.push_back(
        std::make_unique<Batcher>(*m.file.model, m.file.products.get(), settings.batch, core.metrics,
                                  [&core] { return core.open_sessions.load() > core.waiting_sessions.load(); }));
  }
  core.pairs = served_pairs(core.files);
  const std::string address = settings.host + ":" + std::to_string(settings.port);
  beast::error_code ec;
  // an address, not a name to look up: a server binds one of its own interfaces
  const net::ip::address ip = net::ip::make_address(settings.host == "localhost" ? "127.0.0.1" : settings.host, ec);
  if (ec) {
    throw InputError("--host " + settings.host +
                     ": not an IP address (give one of this machine's, as 127.0.0.1, 0.0.0.0, ::1 or localhost)");
  }
  const tcp::endpoint endpoint(ip, static_cast<unsigned short>(settings.port));
  core.acceptor.open(endpoint.protocol(), ec);
  if (!ec) core.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) core.acceptor.bind(endpoint, ec);
  if (!ec) core.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    throw InputError("--port " + std::to_string(settings.port) + ": cannot listen on " + address + ": " + ec.message());
}

Server::~Server() {
  Core& core = *state_->core;
  if (core.stopper.joinable()) core.stopper.join();
  core.examples_reader.join();
  for (const auto& batcher : core.batchers) batcher->stop();
}

unsigned Server::port() const { return state_->core->acceptor.local_endpoint().port(); }

void Server::run() {
  const std::shared_ptr<Core>& core = state_->core;
  core->guard.emplace(core->ioc.get_executor());
  core->accept(core);
  core->signals.async_wait([core](beast::error_code ec, int) {
    if (!ec) core->begin_stop(core);
  });
  std::thread second([core] { core->ioc.run(); });
  core->ioc.run();
  second.join();
  if (core->stopper.joinable()) core->stopper.join();
  core->examples_reader.join();
}

void Server::stop() {
  const std::shared_ptr<Core>& core = state_->core;
  core->begin_stop(core);
}

}  // namespace attend::app::serve
