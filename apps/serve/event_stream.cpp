// A response of server-sent events (event_stream.hpp), on Beast 1.74's documented way to send chunks of one's own
// choosing: an empty_body response marked chunked, whose header's bytes a serializer gives and which go out with the
// first chunk, then make_chunk for each chunk and make_chunk_last to end — never an empty chunk, which would be the
// last one.
#include "apps/serve/event_stream.hpp"

#include <boost/asio/write.hpp>
#include <stdexcept>

namespace attend::app::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

namespace {

// A pending read fills at most this much of the connection's buffer (a pipelined next request); beyond, the stream
// stops watching, and a client's leaving shows at the next write instead.
constexpr std::size_t watched_bytes = 16 * 1024;

}  // namespace

EventStream::EventStream(beast::tcp_stream& stream, beast::flat_buffer& buffer, Settings settings,
                         std::function<void(const std::string&)> gone, std::function<void(bool)> ended)
    : stream_(stream),
      buffer_(buffer),
      settings_(settings),
      gone_(std::move(gone)),
      ended_(std::move(ended)),
      heartbeat_(stream.get_executor()) {}

void EventStream::start(unsigned version, bool keep_alive,
                        const std::vector<std::pair<std::string, std::string>>& headers) {
  http::response<http::empty_body> header(http::status::ok, version);
  header.set(http::field::server, "attend");
  header.set(http::field::content_type, "text/event-stream; charset=utf-8");
  header.set(http::field::cache_control, "no-cache");
  header.set("X-Accel-Buffering", "no");  // nginx: pass each event on as it comes
  for (const auto& [name, value] : headers) header.set(name, value);
  header.keep_alive(keep_alive);
  header.chunked(true);  // and no prepare_payload(), which would make it a Content-Length of 0
  // its bytes, from a serializer split after the header (Beast's documented way to get a header alone)
  http::response_serializer<http::empty_body> serializer(header);
  serializer.split(true);
  beast::error_code ec;
  while (!ec && !serializer.is_header_done()) {
    serializer.next(ec, [&](beast::error_code&, const auto& buffers) {
      header_bytes_ += beast::buffers_to_string(buffers);
      serializer.consume(beast::buffer_bytes(buffers));
    });
  }
  if (ec || !serializer.is_header_done()) throw std::logic_error("an event stream's header: " + ec.message());
  // each event goes out when written: without this, Nagle's algorithm holds a small write until the last one is
  // acknowledged, which a client's delayed acknowledgement puts off by 40 ms (measured: every stream took 44 ms)
  beast::error_code ignored;
  stream_.socket().set_option(net::ip::tcp::no_delay(true), ignored);
  stream_.expires_never();  // the request's read deadline would end the watch
  watch();
  last_write_ = std::chrono::steady_clock::now();
  beat();
}

void EventStream::send(const std::string& name, const std::string& data) {
  if (finishing()) return;
  std::size_t end = data.size();
  while (end > 0 && data[end - 1] == '\n') --end;  // a body's line end: the event's blank line ends it
  queue_.push_back("event: " + name + "\ndata: " + data.substr(0, end) + "\n\n");
  if (!writing_) write_next();
}

void EventStream::finish() {
  if (finishing()) return;
  finishing_ = true;
  if (!writing_) write_next();
}

// What is queued, as one chunk; then, when finishing, the last chunk. The header goes out with the first of them (one
// write, one wake-up of the client for its first event).
void EventStream::write_next() {
  if (gone_called_) return maybe_end();
  if (queue_.empty()) return finishing_ && !last_written_ ? write_last() : maybe_end();
  writing_now_.clear();
  for (const std::string& event : queue_) writing_now_ += event;
  queue_.clear();
  write(http::make_chunk(net::buffer(writing_now_)), [self = shared_from_this()](beast::error_code ec) {
    if (ec) return self->fail("writing failed: " + ec.message());
    self->write_next();
  });
}

void EventStream::write_last() {
  write(http::make_chunk_last(), [self = shared_from_this()](beast::error_code ec) {
    if (ec) return self->fail("writing the last chunk failed: " + ec.message());
    self->last_written_ = true;
    beast::error_code ignored;
    if (self->watching_) self->stream_.socket().cancel(ignored);  // the watch ends; then the stream
    self->maybe_end();
  });
}

// Writes `chunk` (after the header, the first time) within the write deadline, then calls `then`.
template <class Chunk>
void EventStream::write(const Chunk& chunk, std::function<void(beast::error_code)> then) {
  writing_ = true;
  stream_.expires_after(settings_.write_timeout);  // the write's timer only: a read is pending
  const auto written = [self = shared_from_this(), then = std::move(then)](beast::error_code ec, std::size_t) {
    self->writing_ = false;
    if (ec == beast::error::timeout)
      return self->fail("the client read nothing for the write deadline (--read-timeout)");
    if (!ec) self->last_write_ = std::chrono::steady_clock::now();
    self->header_bytes_.clear();  // written (or never to be)
    then(ec);
  };
  if (header_written_) return net::async_write(stream_, chunk, written);
  header_written_ = true;
  net::async_write(stream_, beast::buffers_cat(net::buffer(header_bytes_), chunk), written);
}

// A read kept pending: the client's leaving (end of file, a reset) ends the stream; bytes it sends are kept for the
// next request.
void EventStream::watch() {
  if (buffer_.size() >= watched_bytes) return;
  watching_ = true;
  stream_.async_read_some(buffer_.prepare(watched_bytes - buffer_.size()), [self = shared_from_this()](
                                                                               beast::error_code ec, std::size_t n) {
    self->watching_ = false;
    if (!ec) {
      self->buffer_.commit(n);
      if (!self->last_written_ && !self->gone_called_) return self->watch();
      return self->maybe_end();
    }
    // cancelled by the stream itself, or by a write's deadline (the write tells why)
    if (ec == net::error::operation_aborted && (self->last_written_ || self->gone_called_ || self->writing_))
      return self->maybe_end();
    self->fail("the client left");
  });
}

// ": ping" after a quiet heartbeat, until the stream finishes.
void EventStream::beat() {
  const auto now = std::chrono::steady_clock::now();
  // a heartbeat's time after the last write; once that has passed (a ping just queued, or a write slow to go), from now
  const auto after_last = last_write_ + settings_.heartbeat;
  heartbeat_.expires_at(after_last > now ? after_last : now + settings_.heartbeat);
  heartbeat_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->finishing()) return;
    if (!self->writing_ && self->queue_.empty() &&
        std::chrono::steady_clock::now() >= self->last_write_ + self->settings_.heartbeat) {
      self->queue_.push_back(": ping\n\n");
      self->write_next();
    }
    self->beat();
  });
}

void EventStream::fail(const std::string& reason) {
  if (gone_called_) return maybe_end();
  gone_called_ = true;
  queue_.clear();
  if (gone_) gone_(reason);
  stream_.cancel();  // the pending read, or write
  maybe_end();
}

void EventStream::maybe_end() {
  if (ended_called_ || writing_ || watching_ || (!gone_called_ && !last_written_)) return;
  ended_called_ = true;
  heartbeat_.cancel();
  const std::function<void(bool)> ended = std::move(ended_);
  gone_ = nullptr;  // the callbacks hold the connection: let it go
  ended_ = nullptr;
  if (ended) ended(!gone_called_);
}

}  // namespace attend::app::serve
