// attend serve's batching across clients: one model's queue of inputs, and the worker thread that decodes them
// together — up to --max-batch inputs, waiting at most --max-wait-ms after the oldest for more to come — as `attend
// predict` decodes its inputs (decode_by_length: sorted by length, padded), so an answer is predict's on the same
// input, to the last bits that depend on a batch's shape (docs/reference/serve.md).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apps/model.hpp"
#include "apps/serve/metrics.hpp"

namespace attend::app::serve {

// One request's inputs, as the model reads them, and what to do with their outputs.
struct Job {
  std::vector<std::vector<std::int64_t>> sources;  // text models
  std::vector<data::Image> images;                 // image models
  std::size_t beam = 1;
  std::size_t alternatives = 0;       // other outputs of the beam to keep (SearchOptions::alternatives)
  bool attention = false;             // record every attention map (Model::record_every_attention)
  bool explain = false;               // one input for the explorer (Model::explain), decoded alone: `explained` gets it
  std::size_t attribution_steps = 0;  // explain: with gradient attribution, integrated gradients' points (0: none)
  std::string precision;              // explain: the products it is decoded with (precision/precision.hpp), "": the
                                      // batcher's
  // Called on the worker thread: the outputs in the inputs' order and what their attention rows hold (or the
  // explanation); or, when decoding failed, the reason.
  std::function<void(std::vector<models::Hypothesis>, AttentionLayout)> done;
  std::function<void(Explanation)> explained;
  std::function<void(const std::string&)> failed;
  // Called on the worker thread as the job's batch begins, with what its attention rows will hold; empty: not called.
  std::function<void(const AttentionLayout&)> decoding;
  // Streaming: told on the worker thread the tokens of input `input`'s output as they settle (SearchObserver::settled),
  // with what their attention rows hold; empty: not told.
  std::function<void(std::size_t input, std::size_t first, const std::vector<models::SettledToken>& tokens,
                     const AttentionLayout& layout)>
      settled;
  // Set from any thread when nobody waits for the outputs any more (the client left): the job's inputs stop being
  // decoded (their search ends at its next step; a job not yet decoded is not), and `failed` gets "cancelled" — on
  // the worker thread, or on the thread of a submit() that needs its place in a full queue.
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  std::chrono::steady_clock::time_point queued_at{};
  std::size_t size() const { return sources.size() + images.size(); }
};

struct BatchSettings {
  std::size_t max_batch = 32;                // inputs decoded together (a larger request is decoded alone)
  std::chrono::microseconds max_wait{5000};  // how long the oldest input waits for others
  std::size_t max_queue = 1024;              // inputs waiting, beyond which a request is refused
};

class Batcher {
 public:
  // `more_coming` says whether another request may arrive soon (a client connected and not waiting for an answer):
  // when none can, waiting for one is only delay, and the batch is decoded at once — a lone client is never slowed
  // down by --max-wait-ms. Empty: always wait.
  // The model decodes with `products` (its precision's; nullptr: float32), which must outlive the batcher. An explain
  // job that names another precision is decoded with that precision's products, made from the model's weights on
  // first use and kept by the batcher (one set a precision: int8's quantized copies, bf16's rounded ones).
  Batcher(Model& model, const Products* products, BatchSettings settings, Metrics& metrics,
          std::function<bool()> more_coming = {});
  ~Batcher();  // stop()
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;
  // Queues a job; false (and the job dropped) when the queue holds too many inputs to take it, once the cancelled jobs
  // in it have left their places (each fails "cancelled", here, and is counted).
  bool submit(std::unique_ptr<Job> job);
  // Inputs waiting.
  std::size_t queued() const;
  // Decodes what is queued, then ends the worker (idempotent).
  void stop();

 private:
  void work();
  std::vector<std::unique_ptr<Job>> next_batch(std::unique_lock<std::mutex>& lock);
  void give_up(const std::vector<std::unique_ptr<Job>>& jobs);
  void give_up(Job& job);
  void decode(std::vector<std::unique_ptr<Job>>& jobs);
  void explain(Job& job, const ModelInputs& inputs);
  const Products* products_for(const std::string& precision);

  Model& model_;
  const Products* products_;
  std::map<std::string, std::unique_ptr<Products>> other_products_;  // the worker's own, by precision
  BatchSettings settings_;
  Metrics& metrics_;
  std::function<bool()> more_coming_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::unique_ptr<Job>> queue_;
  std::size_t queued_inputs_ = 0;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace attend::app::serve
