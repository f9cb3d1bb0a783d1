// A response of server-sent events (WHATWG HTML §9.2, text/event-stream) on one of attend serve's connections: the
// header with the first event, then each event as a chunk of its own (HTTP/1.1 chunked transfer; several queued events
// may share one), then the last chunk — no Content-Length, so nothing needs to be known in advance. One write at a
// time, each within the write deadline: a client that stops reading is cut off like one that stops sending. A comment
// line (": ping") goes out when nothing was written for the heartbeat's time, so proxies keep the connection. A read is
// kept pending for the whole stream, so a client that leaves is noticed at once, not at the next write. Used on the
// connection's strand only (the server posts events there from the batcher's worker).
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>

namespace attend::app::serve {

class EventStream : public std::enable_shared_from_this<EventStream> {
 public:
  struct Settings {
    std::chrono::milliseconds write_timeout{10000};  // for each chunk to be taken by the client
    std::chrono::milliseconds heartbeat{15000};      // quiet time after which ": ping" is written
  };
  // `stream` and `buffer` are the connection's (the bytes a client sends meanwhile, as a next request, go into
  // `buffer`), and must outlive the stream's end. `gone(reason)` is called once if the client leaves or a write fails
  // or times out (no more events are written); `ended(reusable)` once when nothing is pending any more: after the
  // last chunk (reusable: the connection can read its next request) or after `gone` (false: close it).
  EventStream(boost::beast::tcp_stream& stream, boost::beast::flat_buffer& buffer, Settings settings,
              std::function<void(const std::string&)> gone, std::function<void(bool)> ended);
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  // Makes the response's header (200, text/event-stream, no-cache, chunked) for a request of HTTP `version`, with
  // `headers` added (CORS), and starts watching the connection. The header goes out with the first chunk — an event,
  // a heartbeat or the last chunk — so that a client's first event comes in one write.
  void start(unsigned version, bool keep_alive, const std::vector<std::pair<std::string, std::string>>& headers);
  // Queues the event `name` with `data` (one line, as JSON dumped without indents: a newline at its end is dropped).
  // Ignored once finishing or gone.
  void send(const std::string& name, const std::string& data);
  // The last chunk goes out after what is queued; send() is ignored from here on.
  void finish();
  // send(name, data), then finish(): the stream's last event.
  void end_with(const std::string& name, const std::string& data) {
    send(name, data);
    finish();
  }
  bool finishing() const { return finishing_ || gone_called_; }

 private:
  void write_next();
  void write_last();
  template <class Chunk>
  void write(const Chunk& chunk, std::function<void(boost::beast::error_code)> then);
  void watch();
  void beat();
  void fail(const std::string& reason);
  void maybe_end();

  boost::beast::tcp_stream& stream_;
  boost::beast::flat_buffer& buffer_;
  Settings settings_;
  std::function<void(const std::string&)> gone_;
  std::function<void(bool)> ended_;
  boost::asio::steady_timer heartbeat_;
  std::string header_bytes_;  // the header, written with the first chunk
  std::deque<std::string> queue_;
  std::string writing_now_;  // the chunk being written (kept alive until its write completes)
  std::chrono::steady_clock::time_point last_write_;
  bool header_written_ = false, writing_ = false, watching_ = false, finishing_ = false, last_written_ = false;
  bool gone_called_ = false, ended_called_ = false;
};

}  // namespace attend::app::serve
