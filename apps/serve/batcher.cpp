// attend serve's batching across clients (batcher.hpp).
#include "apps/serve/batcher.hpp"

#include <algorithm>

#include "precision/precision.hpp"

namespace attend::app::serve {

namespace {

// What the search tells a batch's inputs and asks of them, passed to their jobs: input b of the batch is input b −
// first_[owner_[b]] of job owner_[b].
class JobsObserver : public models::SearchObserver {
 public:
  JobsObserver(const std::vector<std::unique_ptr<Job>>& jobs, const AttentionLayout& layout, Metrics& metrics)
      : jobs_(jobs), layout_(layout), metrics_(metrics), counted_(jobs.size(), 0) {
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      first_.push_back(owner_.size());
      owner_.insert(owner_.end(), jobs[j]->size(), j);
      streams_ = streams_ || bool(jobs[j]->settled);
    }
  }
  // Settled tokens are found only when a job streams (the others' clients wait for the whole answer).
  bool tells() const override { return streams_; }
  bool wanted(std::size_t b) override {
    const std::size_t j = owner_[b];
    if (!jobs_[j]->cancelled->load()) return true;
    if (!counted_[j]) metrics_.cancelled(jobs_[j]->size());
    counted_[j] = 1;
    return false;
  }
  void settled(std::size_t b, std::size_t first, const std::vector<models::SettledToken>& tokens) override {
    const Job& job = *jobs_[owner_[b]];
    if (job.settled && !job.cancelled->load()) job.settled(b - first_[owner_[b]], first, tokens, layout_);
  }

 private:
  const std::vector<std::unique_ptr<Job>>& jobs_;
  const AttentionLayout& layout_;
  Metrics& metrics_;
  std::vector<std::size_t> owner_, first_;
  std::vector<std::uint8_t> counted_;
  bool streams_ = false;
};

// The jobs nobody waits for any more, taken out of `jobs` (a queue or a batch).
template <class Jobs>
std::vector<std::unique_ptr<Job>> take_cancelled(Jobs& jobs) {
  std::vector<std::unique_ptr<Job>> cancelled;
  for (auto it = jobs.begin(); it != jobs.end();) {
    if (!(*it)->cancelled->load()) {
      ++it;
      continue;
    }
    cancelled.push_back(std::move(*it));
    it = jobs.erase(it);
  }
  return cancelled;
}

}  // namespace

Batcher::Batcher(Model& model, const Products* products, BatchSettings settings, Metrics& metrics,
                 std::function<bool()> more_coming)
    : model_(model),
      products_(products),
      settings_(settings),
      metrics_(metrics),
      more_coming_(std::move(more_coming)),
      worker_([this] { work(); }) {}

Batcher::~Batcher() { stop(); }

bool Batcher::submit(std::unique_ptr<Job> job) {
  std::vector<std::unique_ptr<Job>> dropped;  // cancelled while queued: their places go to this one
  bool taken = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_ && queued_inputs_ + job->size() > settings_.max_queue) {
      dropped = take_cancelled(queue_);
      for (const auto& gone : dropped) queued_inputs_ -= gone->size();
    }
    if (!stopping_ && queued_inputs_ + job->size() <= settings_.max_queue) {
      job->queued_at = std::chrono::steady_clock::now();
      queued_inputs_ += job->size();
      queue_.push_back(std::move(job));
      taken = true;
    }
  }
  give_up(dropped);
  if (taken) ready_.notify_one();
  return taken;
}

// Each job fails "cancelled", counted.
void Batcher::give_up(const std::vector<std::unique_ptr<Job>>& jobs) {
  for (const auto& job : jobs) give_up(*job);
}

void Batcher::give_up(Job& job) {
  metrics_.cancelled(job.size());
  job.failed("cancelled");
}

std::size_t Batcher::queued() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return queued_inputs_;
}

void Batcher::stop() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_one();
  if (worker_.joinable()) worker_.join();
}

void Batcher::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left
    std::vector<std::unique_ptr<Job>> jobs = next_batch(lock);
    lock.unlock();
    decode(jobs);
    lock.lock();
  }
}

// The oldest job and every queued one of the same beam width that fits beside it, taken from the queue as they come
// until the batch is full, the oldest has waited max_wait, or no other request can come (more_coming_).
std::vector<std::unique_ptr<Job>> Batcher::next_batch(std::unique_lock<std::mutex>& lock) {
  std::vector<std::unique_ptr<Job>> jobs;
  if (queue_.front()->explain) {  // alone
    queued_inputs_ -= queue_.front()->size();
    jobs.push_back(std::move(queue_.front()));
    queue_.pop_front();
    return jobs;
  }
  const std::size_t beam = queue_.front()->beam;
  const auto deadline = queue_.front()->queued_at + settings_.max_wait;
  std::size_t inputs = 0;
  for (bool last = false;; last = ready_.wait_until(lock, deadline) == std::cv_status::timeout) {
    for (auto it = queue_.begin(); it != queue_.end();) {
      const std::size_t size = (*it)->size();
      if ((*it)->explain || (*it)->beam != beam || (inputs > 0 && inputs + size > settings_.max_batch)) {
        ++it;
        continue;
      }
      inputs += size;
      queued_inputs_ -= size;
      jobs.push_back(std::move(*it));
      it = queue_.erase(it);
    }
    if (last || stopping_ || inputs >= settings_.max_batch || std::chrono::steady_clock::now() >= deadline ||
        (more_coming_ && !more_coming_())) {
      break;
    }
  }
  return jobs;
}

void Batcher::decode(std::vector<std::unique_ptr<Job>>& jobs) {
  give_up(take_cancelled(jobs));  // a job nobody waits for any more is not decoded
  if (jobs.empty()) return;
  ModelInputs inputs;
  bool attention = false;
  std::size_t alternatives = 0;  // the most any job asks (a job asking fewer uses its first ones)
  for (const auto& job : jobs) {
    inputs.sources.insert(inputs.sources.end(), job->sources.begin(), job->sources.end());
    for (const data::Image& image : job->images) inputs.images.push_back(&image);
    attention = attention || job->attention;
    alternatives = std::max(alternatives, job->alternatives);
  }
  if (jobs.front()->explain) return explain(*jobs.front(), inputs);
  std::vector<models::Hypothesis> outputs;
  AttentionLayout layout;
  try {
    model_.record_every_attention(attention);
    layout = model_.attention_layout();
    for (const auto& job : jobs)
      if (job->decoding) job->decoding(layout);
    models::SearchOptions search{jobs.front()->beam, 0, 1.0};
    search.products = products_;
    search.alternatives = alternatives;
    // asked whether each input is still wanted (a job's client may leave); told what settled when a job streams
    JobsObserver observer(jobs, layout, metrics_);
    search.observer = &observer;
    outputs = model_.decode(inputs, search);
  } catch (const std::exception& e) {
    for (const auto& job : jobs) job->failed(std::string("decoding failed: ") + e.what());
    return;
  }
  metrics_.batch(outputs.size());
  std::size_t at = 0;
  for (const auto& job : jobs) {
    std::vector<models::Hypothesis> own(
        std::make_move_iterator(outputs.begin() + static_cast<std::ptrdiff_t>(at)),
        std::make_move_iterator(outputs.begin() + static_cast<std::ptrdiff_t>(at + job->size())));
    at += job->size();
    if (job->cancelled->load()) {
      job->failed("cancelled");
    } else {
      job->done(std::move(own), layout);
    }
  }
}

// The products of `precision` ("": the batcher's; float32: nullptr, OpenBLAS).
const Products* Batcher::products_for(const std::string& precision) {
  const std::string own = products_ ? products_->name() : "float32";
  if (precision.empty() || precision == own) return products_;
  if (precision == "float32") return nullptr;
  std::unique_ptr<Products>& made = other_products_[precision];
  try {
    if (!made) made = make_products(precision, matrices_of(model_.module().parameters()));
  } catch (const std::exception& e) {  // a weight the precision cannot take (int8: one holding a NaN)
    throw std::runtime_error("precision " + precision + " cannot decode this model: " + e.what());
  }
  return made.get();
}

void Batcher::explain(Job& job, const ModelInputs& inputs) {
  Explanation explanation;
  try {
    models::SearchOptions search{job.beam, 0, 1.0};
    search.products = products_for(job.precision);
    explanation = model_.explain(inputs, search);
  } catch (const std::exception& e) {
    return job.failed(std::string("decoding failed: ") + e.what());
  }
  try {
    if (job.attribution_steps > 0) {
      const std::shared_ptr<std::atomic<bool>> cancelled = job.cancelled;
      explanation.attribution = model_.attribute(inputs, explanation.output, job.attribution_steps,
                                                 [cancelled] { return !cancelled->load(); });
    }
  } catch (const models::AttributionStopped&) {  // the client left: the rest of its passes are not run
    return give_up(job);
  } catch (const std::exception& e) {
    return job.failed(std::string("attribution failed: ") + e.what());
  }
  if (job.cancelled->load()) return job.failed("cancelled");  // done, but nobody waits: not counted as stopped
  metrics_.batch(1);
  job.explained(std::move(explanation));
}

}  // namespace attend::app::serve
