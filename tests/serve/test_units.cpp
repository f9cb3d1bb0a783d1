// attend serve's parts without a server: the request's reading, base64, the Prometheus exposition, and the batcher
// with a model that records how it was called.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "apps/commands.hpp"
#include "apps/serve/api.hpp"
#include "apps/serve/batcher.hpp"
#include "apps/serve/metrics.hpp"
#include "autograd/blas.hpp"
#include "nn/layers.hpp"
#include "tests/serve/serve_helpers.hpp"

using namespace attend::app;
using namespace attend::app::serve;

namespace {

// A model that decodes a source into itself (its tokens), and records the sizes of the batches it was given.
class EchoModel : public Model {
 public:
  const char* format() const override { return "attend-echo"; }
  attend::nn::Module<float>& module() override { return layer_; }
  nlohmann::json config_json() const override { return {}; }
  std::string describe() const override { return "echo"; }
  attend::Variable<float> loss(attend::Tape<float>&, const TrainingBatch&) override {
    throw std::logic_error("no training");
  }
  std::vector<attend::models::Hypothesis> decode(const ModelInputs& inputs,
                                                 const attend::models::SearchOptions& search) override {
    if (inputs.sources.front().front() == 99) throw std::runtime_error("a 99");
    std::vector<attend::models::Hypothesis> outputs;
    for (const auto& source : inputs.sources) {
      attend::models::Hypothesis h;
      h.tokens = source;
      h.score = static_cast<double>(search.beam_width);
      outputs.push_back(h);
    }
    const std::lock_guard<std::mutex> lock(mutex);
    batches.push_back(inputs.sources.size());
    return outputs;
  }
  std::string picture(const PictureInput&, const std::vector<std::string>&, const attend::models::Hypothesis&,
                      const std::string&) const override {
    return "";
  }
  std::mutex mutex;
  std::vector<std::size_t> batches;

 private:
  attend::Rng rng_{1};
  attend::nn::Linear<float> layer_{1, 1, rng_};
};

// A model whose every output is token 4 again and again, never ended: searched (models/search.hpp) to 1,000 tokens
// unless stopped. Counts its decoder's steps.
class EndlessModel : public EchoModel {
 public:
  std::vector<attend::models::Hypothesis> decode(const ModelInputs& inputs,
                                                 const attend::models::SearchOptions& search) override {
    struct Endless : attend::models::Stepper<float> {
      std::size_t rows, steps = 0;
      attend::Tape<float> tape;
      void expand(std::size_t k) override { rows *= k; }
      std::atomic<std::size_t>* live = nullptr;
      std::chrono::microseconds pause{0};
      Step step(const attend::Ids&) override {
        ++steps;
        ++*live;
        if (pause.count() > 0) std::this_thread::sleep_for(pause);
        attend::Tensor<float> logits(attend::Shape{rows, 6}, 0.0f);
        for (std::size_t r = 0; r < rows; ++r) logits.data()[r * 6 + 4] = 3.0f;
        for (std::size_t r = 0; r < rows; ++r) logits.data()[r * 6 + attend::models::eos_id] = -100.0f;
        return {tape.constant(logits), attend::Variable<float>()};
      }
      void reorder(const std::vector<std::int64_t>&) override {}
    } stepper;
    stepper.rows = inputs.sources.size();
    stepper.live = &steps;
    stepper.pause = pause;
    attend::models::SearchOptions options = search;
    options.max_length = 1000;
    return attend::models::decode(stepper, std::vector<std::int64_t>(stepper.rows, 1), options, 1000);
  }
  std::atomic<std::size_t> steps{0};   // the decoder's steps so far
  std::chrono::microseconds pause{0};  // how long a step takes
};

// A job of `sources`, whose outputs (or error) arrive in the returned future.
std::unique_ptr<Job> job(std::vector<std::vector<std::int64_t>> sources, std::size_t beam,
                         std::promise<std::vector<attend::models::Hypothesis>>& done) {
  auto j = std::make_unique<Job>();
  j->sources = std::move(sources);
  j->beam = beam;
  j->done = [&done](std::vector<attend::models::Hypothesis> outputs, AttentionLayout) {
    done.set_value(std::move(outputs));
  };
  j->failed = [&done](const std::string& message) {
    done.set_exception(std::make_exception_ptr(std::runtime_error(message)));
  };
  return j;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(units)

BOOST_AUTO_TEST_CASE(a_request_is_read_with_its_defaults) {
  const PredictRequest r = parse_predict_request(R"({"inputs": ["a", "b"]})", {});
  BOOST_TEST(r.inputs == std::vector<std::string>({"a", "b"}), boost::test_tools::per_element());
  BOOST_TEST(r.model.empty());
  BOOST_TEST(r.beam == 1u);
  BOOST_TEST(!r.scores);
  BOOST_TEST(!r.attention);
  const PredictRequest all =
      parse_predict_request(R"({"model": "m", "inputs": ["a"], "beam": 4, "scores": true, "attention": true})", {});
  BOOST_TEST(all.model == "m");
  BOOST_TEST(all.beam == 4u);
  BOOST_TEST(all.scores);
  BOOST_TEST(all.attention);
  // the limits are the caller's
  RequestLimits limits;
  limits.max_inputs = 2;
  limits.max_beam = 3;
  BOOST_CHECK_NO_THROW(parse_predict_request(R"({"inputs": ["a", "b"], "beam": 3})", limits));
  BOOST_CHECK_EXCEPTION(parse_predict_request(R"({"inputs": ["a", "b", "c"]})", limits), ApiError,
                        [](const ApiError& e) { return e.status == 413; });
  BOOST_CHECK_EXCEPTION(parse_predict_request(R"({"inputs": ["a"], "beam": 4})", limits), ApiError,
                        [](const ApiError& e) { return e.status == 400; });
  BOOST_CHECK_EXCEPTION(parse_predict_request(R"({"inputs": ["a"], "beam": 2.0})", limits), ApiError,
                        [](const ApiError& e) { return std::string(e.what()).find("not 2.0") != std::string::npos; });
}

// GET /v1/examples's query: its defaults, escapes undone, and each thing wrong named.
BOOST_AUTO_TEST_CASE(an_examples_query_is_read_with_its_defaults) {
  const ExamplesRequest none = parse_examples_query("");
  BOOST_TEST(none.model.empty());
  BOOST_TEST(none.count == 20u);
  const ExamplesRequest both = parse_examples_query("count=7&model=spa%2Deng+v2%C3%A9&");
  BOOST_TEST(both.model == "spa-eng v2\xC3\xA9");
  BOOST_TEST(both.count == 7u);
  BOOST_TEST(parse_examples_query("count=1000").count == 1000u);
  const std::pair<const char*, const char*> bad[] = {
      {"count=0", "\"count\" must be a whole number from 1 to 1000, not \"0\""},
      {"count=1001", "not \"1001\""},
      {"count=-1", "not \"-1\""},
      {"count=2x", "not \"2x\""},
      {"count=", "not \"\""},
      {"beam=2", "unknown query parameter \"beam\" (GET /v1/examples takes model, count)"},
      {"model=a&model=b", "the query gives \"model\" twice"},
      {"model=a%2", "a '%' that is not followed by two hexadecimal digits"},
      {"model=%zz", "a '%' that is not followed by two hexadecimal digits"},
  };
  for (const auto& row : bad) {
    const char* query = row.first;  // not a structured binding: a lambda may not capture one in C++17
    const char* message = row.second;
    BOOST_CHECK_EXCEPTION(parse_examples_query(query), ApiError, [&](const ApiError& e) {
      BOOST_TEST_INFO(query << ": " << e.what());
      return e.status == 400 && std::string(e.what()).find(message) != std::string::npos;
    });
  }
}

BOOST_AUTO_TEST_CASE(base64_decodes_as_rfc_4648_says) {
  // RFC 4648 §10's test vectors
  const std::vector<std::pair<std::string, std::string>> vectors = {{"", ""},
                                                                    {"Zg==", "f"},
                                                                    {"Zm8=", "fo"},
                                                                    {"Zm9v", "foo"},
                                                                    {"Zm9vYg==", "foob"},
                                                                    {"Zm9vYmE=", "fooba"},
                                                                    {"Zm9vYmFy", "foobar"}};
  for (const auto& [text, bytes] : vectors) {
    BOOST_TEST(decode_base64(text) == bytes);
    BOOST_TEST(encode_base64(bytes) == text);
  }
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  BOOST_TEST(decode_base64(serve_test::base64(all)) == all);
  for (const std::string bad : {"Zg=", "Zg=a", "Z===", "Zm9v\nYg==", "Zm9v Yg=", "Zg==Zg=="}) {
    BOOST_CHECK_THROW(decode_base64(bad), std::invalid_argument);
  }
}

BOOST_AUTO_TEST_CASE(the_exposition_counts_what_happened) {
  Metrics metrics;
  metrics.request(200, 0.003);
  metrics.request(200, 0.2);
  metrics.request(400, 20.0);
  metrics.batch(3);
  metrics.batch(40);
  metrics.connection_opened();
  const std::string text = "\n" + metrics.text({{"a\"b", 5}});
  using serve_test::metric;
  BOOST_TEST(metric(text, "attend_requests_total{code=\"200\"}") == 2);
  BOOST_TEST(metric(text, "attend_requests_total{code=\"400\"}") == 1);
  BOOST_TEST(metric(text, "attend_request_duration_seconds_bucket{le=\"0.001\"}") == 0);
  BOOST_TEST(metric(text, "attend_request_duration_seconds_bucket{le=\"0.005\"}") == 1);
  BOOST_TEST(metric(text, "attend_request_duration_seconds_bucket{le=\"0.25\"}") == 2);
  BOOST_TEST(metric(text, "attend_request_duration_seconds_bucket{le=\"10\"}") == 2);
  BOOST_TEST(metric(text, "attend_request_duration_seconds_bucket{le=\"+Inf\"}") == 3);
  BOOST_TEST(metric(text, "attend_request_duration_seconds_sum") == 20.203, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(metric(text, "attend_batch_size_bucket{le=\"4\"}") == 1);
  BOOST_TEST(metric(text, "attend_batch_size_bucket{le=\"64\"}") == 2);
  BOOST_TEST(metric(text, "attend_inputs_decoded_total") == 43);
  BOOST_TEST(metric(text, "attend_queue_inputs{model=\"a\\\"b\"}") == 5);  // the label's quote escaped
  BOOST_TEST(metric(text, "attend_open_connections") == 1);
  BOOST_TEST(text.find("# TYPE attend_request_duration_seconds histogram\n") != std::string::npos);
  BOOST_TEST(text.find("\nattend_request_duration_seconds_bucket{le=\"0.0025\"}") != std::string::npos, text);
}

// Jobs queued while the worker waits are decoded together, up to the batch's size; another beam width waits for a
// batch of its own; each job gets its own outputs in order; a full queue refuses; a failing decode fails its jobs.
BOOST_AUTO_TEST_CASE(the_batcher_decodes_jobs_together_and_apart) {
  EchoModel model;
  Metrics metrics;
  BatchSettings settings;
  settings.max_batch = 4;
  settings.max_wait = std::chrono::seconds(2);  // ample time to queue the others beside the first
  settings.max_queue = 8;
  Batcher batcher(model, nullptr, settings, metrics);
  std::vector<std::promise<std::vector<attend::models::Hypothesis>>> done(5);
  BOOST_TEST(batcher.submit(job({{1}, {2}}, 1, done[0])));
  BOOST_TEST(batcher.submit(job({{3}}, 2, done[1])));  // another beam: not with the others
  BOOST_TEST(batcher.submit(job({{4}}, 1, done[2])));
  BOOST_TEST(batcher.submit(job({{5}, {6}}, 1, done[3])));  // would make 5: the next batch
  // more than the queue holds, whatever the worker has taken from it yet: refused
  BOOST_TEST(!batcher.submit(job({{7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}}, 1, done[4])));
  const auto first = done[0].get_future().get();
  BOOST_TEST(first.size() == 2u);
  BOOST_TEST(first[0].tokens == std::vector<std::int64_t>{1});
  BOOST_TEST(first[1].tokens == std::vector<std::int64_t>{2});
  BOOST_TEST(done[2].get_future().get()[0].tokens == std::vector<std::int64_t>{4});
  const auto beam = done[1].get_future().get();
  BOOST_TEST(beam[0].score == 2.0);  // decoded with its own beam width
  BOOST_TEST(done[3].get_future().get().size() == 2u);
  BOOST_TEST(model.batches == std::vector<std::size_t>({3, 1, 2}), boost::test_tools::per_element());
  std::promise<std::vector<attend::models::Hypothesis>> failing;
  BOOST_TEST(batcher.submit(job({{99}}, 1, failing)));
  BOOST_CHECK_EXCEPTION(failing.get_future().get(), std::runtime_error,
                        [](const std::runtime_error& e) { return std::string(e.what()) == "decoding failed: a 99"; });
  // stopping decodes what is queued first
  std::promise<std::vector<attend::models::Hypothesis>> last;
  BOOST_TEST(batcher.submit(job({{10}}, 1, last)));
  batcher.stop();
  BOOST_TEST(last.get_future().get()[0].tokens == std::vector<std::int64_t>{10});
  BOOST_TEST(!batcher.submit(job({{11}}, 1, last)));
}

// An endless model's batcher taking each job at once, for the cancellation tests.
struct EndlessBatcher {
  EndlessModel model;
  Metrics metrics;
  std::promise<std::vector<attend::models::Hypothesis>> done;
  Batcher batcher{model, nullptr, BatchSettings{32, std::chrono::milliseconds(0)}, metrics};  // stopped first
  // The job fails as "cancelled", and the metric counts it.
  void check_cancelled() {
    BOOST_CHECK_EXCEPTION(done.get_future().get(), std::runtime_error,
                          [](const std::runtime_error& e) { return std::string(e.what()) == "cancelled"; });
    BOOST_TEST(serve_test::metric("\n" + metrics.text({}), "attend_inputs_cancelled_total") == 1);
  }
};

// A streaming job is told its tokens as they settle; cancelled meanwhile, its decoding stops at the next step (the
// others' goes on), it fails as "cancelled", and the metric counts it.
BOOST_FIXTURE_TEST_CASE(a_cancelled_job_stops_decoding, EndlessBatcher) {
  auto streaming = job({{5}}, 1, done);
  std::vector<std::size_t> told;
  streaming->settled = [&told, cancelled = streaming->cancelled](std::size_t input, std::size_t first,
                                                                 const std::vector<attend::models::SettledToken>& t,
                                                                 const AttentionLayout&) {
    BOOST_TEST(input == 0u);
    BOOST_TEST(first == told.size());
    for (const auto& token : t) told.push_back(static_cast<std::size_t>(token.token));
    if (told.size() == 3) cancelled->store(true);
  };
  BOOST_TEST(batcher.submit(std::move(streaming)));
  check_cancelled();
  BOOST_TEST(told == std::vector<std::size_t>({4, 4, 4}), boost::test_tools::per_element());
  BOOST_TEST(model.steps.load() == 3u);  // not the 1,000 it would have run
}

// A job that does not stream (its client waits for the whole answer) stops too when cancelled mid-decoding: at the
// next step, failing "cancelled", counted.
BOOST_FIXTURE_TEST_CASE(a_cancelled_job_stops_decoding_without_a_stream, EndlessBatcher) {
  auto plain = job({{5}}, 1, done);
  const std::shared_ptr<std::atomic<bool>> cancelled = plain->cancelled;
  model.pause = std::chrono::milliseconds(2);  // a step: 1,000 of them take 2 s
  BOOST_TEST(batcher.submit(std::move(plain)));
  while (model.steps.load() < 3) std::this_thread::sleep_for(std::chrono::microseconds(100));
  cancelled->store(true);
  check_cancelled();
  BOOST_TEST(model.steps.load() < 100u);  // not the 1,000 it would have run
}

// Cancelled jobs give up their places in a full queue: a job that finds the queue full takes them (they fail as
// "cancelled" and are counted), and is refused only when the jobs still wanted fill it.
BOOST_AUTO_TEST_CASE(cancelled_jobs_give_up_their_places_in_the_queue) {
  EchoModel model;
  Metrics metrics;
  BatchSettings settings;
  settings.max_wait = std::chrono::seconds(60);
  settings.max_queue = 5;
  std::atomic<bool> others{true};
  Batcher batcher(model, nullptr, settings, metrics, [&others] { return others.load(); });
  // the worker takes a beam-1 job and waits for more of its kind; the beam-2 jobs stay queued meanwhile
  std::promise<std::vector<attend::models::Hypothesis>> first;
  BOOST_TEST(batcher.submit(job({{1}}, 1, first)));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<std::promise<std::vector<attend::models::Hypothesis>>> queued(6);
  std::vector<std::shared_ptr<std::atomic<bool>>> cancel;
  for (std::size_t k = 0; k < 4; ++k) {
    auto j = job({{static_cast<std::int64_t>(10 + k)}}, 2, queued[k]);
    cancel.push_back(j->cancelled);
    BOOST_TEST(batcher.submit(std::move(j)));
  }
  BOOST_TEST(batcher.queued() == 4u);
  BOOST_TEST(!batcher.submit(job({{14}, {17}}, 2, queued[4])));  // 6 would pass 5, and all 4 are wanted
  cancel[1]->store(true);
  cancel[2]->store(true);
  BOOST_TEST(batcher.submit(job({{15}, {16}}, 2, queued[5])));  // the two cancelled leave their places
  BOOST_TEST(batcher.queued() == 4u);
  for (const std::size_t k : {1u, 2u})
    BOOST_CHECK_EXCEPTION(queued[k].get_future().get(), std::runtime_error,
                          [](const std::runtime_error& e) { return std::string(e.what()) == "cancelled"; });
  BOOST_TEST(serve_test::metric("\n" + metrics.text({}), "attend_inputs_cancelled_total") == 2);
  others = false;  // the rest is decoded, once a last job wakes the worker
  std::promise<std::vector<attend::models::Hypothesis>> last;
  BOOST_TEST_REQUIRE(batcher.submit(job({{2}}, 1, last)));
  auto decoded = first.get_future();
  BOOST_TEST_REQUIRE((decoded.wait_for(std::chrono::seconds(30)) == std::future_status::ready));
  BOOST_TEST(decoded.get()[0].tokens == std::vector<std::int64_t>{1});
  BOOST_TEST(last.get_future().get()[0].tokens == std::vector<std::int64_t>{2});
  BOOST_TEST(queued[0].get_future().get()[0].tokens == std::vector<std::int64_t>{10});
  BOOST_TEST(queued[3].get_future().get()[0].tokens == std::vector<std::int64_t>{13});
  BOOST_TEST(queued[5].get_future().get().size() == 2u);
}

// A batcher waits for more inputs only while another request can come: told that none can, it decodes at once,
// however long --max-wait-ms is; told that one can, it waits for it.
BOOST_AUTO_TEST_CASE(a_lone_client_is_not_kept_waiting) {
  EchoModel model;
  Metrics metrics;
  BatchSettings settings;
  settings.max_wait = std::chrono::seconds(60);
  std::atomic<bool> others{false};
  Batcher batcher(model, nullptr, settings, metrics, [&others] { return others.load(); });
  std::promise<std::vector<attend::models::Hypothesis>> first;
  BOOST_TEST(batcher.submit(job({{1}}, 1, first)));
  BOOST_TEST((first.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready));
  // with another client connected, the next job waits for its request and goes with it
  std::promise<std::vector<attend::models::Hypothesis>> second, third;
  others = true;
  BOOST_TEST(batcher.submit(job({{2}}, 1, second)));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  others = false;
  BOOST_TEST(batcher.submit(job({{3}}, 1, third)));
  BOOST_TEST((third.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready));
  BOOST_TEST(second.get_future().get()[0].tokens == std::vector<std::int64_t>{2});
  BOOST_TEST(model.batches == std::vector<std::size_t>({1, 2}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(batches)

// decode_by_length gives decode_batch the sources sorted by length (little padding), at most batch_size of them, and
// puts the outputs back in the sources' order.
BOOST_AUTO_TEST_CASE(sources_of_similar_length_go_together) {
  const std::vector<std::vector<std::int64_t>> sources{{1, 1}, {2}, {3, 3}, {4, 4, 4}, {5, 5}, {6}, {7, 7}};
  std::vector<std::vector<std::size_t>> chunks;  // the lengths of each chunk's sources
  const auto outputs = decode_by_length(
      sources, 3, {}, [&](const std::vector<std::vector<std::int64_t>>& chunk, const attend::models::SearchOptions&) {
        chunks.emplace_back();
        std::vector<attend::models::Hypothesis> decoded;
        for (const auto& source : chunk) {
          chunks.back().push_back(source.size());
          attend::models::Hypothesis h;
          h.tokens = source;
          decoded.push_back(h);
        }
        return decoded;
      });
  const std::vector<std::vector<std::size_t>> expected{{1, 1, 2}, {2, 2, 2}, {3}};
  BOOST_TEST((chunks == expected));
  for (std::size_t k = 0; k < sources.size(); ++k)
    BOOST_TEST(outputs[k].tokens == sources[k], boost::test_tools::per_element());
}

// decode_batches with search.threads > 1 decodes every batch once, longest (last) first, on that many threads at once,
// each with one OpenBLAS thread and a search of one thread; it restores OpenBLAS's count, rethrows a batch's exception
// after every thread stopped, refuses search trees for several batches; one thread or one batch runs them in order
// on the caller's settings.
BOOST_AUTO_TEST_CASE(batches_run_on_the_threads_asked_for) {
  const std::thread::id caller = std::this_thread::get_id();
  attend::models::SearchOptions search;
  search.threads = 3;
  set_threads(2);
  std::mutex mutex;
  std::vector<std::size_t> done;
  std::set<std::thread::id> ids;
  std::atomic<int> running{0}, most{0};
  decode_batches(7, search, [&](std::size_t b, const attend::models::SearchOptions& each) {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      done.push_back(b);  // in the order they start
    }
    const int now = ++running;
    for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    BOOST_TEST(each.threads == 1u);
    BOOST_TEST(attend::blas_threads() == 1);
    const std::lock_guard<std::mutex> lock(mutex);
    ids.insert(std::this_thread::get_id());
    --running;
  });
  BOOST_TEST(attend::blas_threads() == 2);
  BOOST_TEST(ids.size() == 3u);
  BOOST_TEST(ids.count(caller) == 1u);  // the caller's thread decodes too
  BOOST_TEST(most.load() == 3);
  // longest first: the first batch to start is one of the three last (each thread takes its second only after its
  // first, so before any start no thread has taken a fourth)
  BOOST_TEST(done.front() >= 4u);
  std::sort(done.begin(), done.end());
  const std::vector<std::size_t> all{0, 1, 2, 3, 4, 5, 6};
  BOOST_TEST(done == all, boost::test_tools::per_element());

  // an exception in a batch: rethrown, the others stopped, OpenBLAS's count restored
  std::atomic<int> calls{0};
  BOOST_CHECK_EXCEPTION(decode_batches(100, search,
                                       [&](std::size_t b, const attend::models::SearchOptions&) {
                                         ++calls;
                                         if (b == 98) throw std::runtime_error("batch 98 failed");
                                         std::this_thread::sleep_for(std::chrono::milliseconds(5));
                                       }),
                        std::runtime_error,
                        [](const std::runtime_error& e) { return std::string(e.what()) == "batch 98 failed"; });
  BOOST_TEST(calls.load() < 10);
  BOOST_TEST(attend::blas_threads() == 2);

  std::vector<attend::models::SearchTree> trees;
  search.trees = &trees;
  BOOST_CHECK_THROW(decode_batches(2, search, [](std::size_t, const attend::models::SearchOptions&) {}),
                    std::invalid_argument);
  // one batch (trees allowed) or one thread: in order, on the caller's thread and settings
  for (const std::size_t threads : {std::size_t{3}, std::size_t{1}}) {
    search.threads = threads;
    const std::size_t batches = threads == 1 ? 4 : 1;
    std::vector<std::size_t> order;
    decode_batches(batches, search, [&](std::size_t b, const attend::models::SearchOptions& each) {
      BOOST_TEST(each.threads == threads);
      BOOST_TEST(each.trees == &trees);
      BOOST_TEST(attend::blas_threads() == 2);
      BOOST_TEST((std::this_thread::get_id() == caller));
      order.push_back(b);
    });
    BOOST_TEST(order.size() == batches);
    for (std::size_t b = 0; b < order.size(); ++b) BOOST_TEST(order[b] == b);
  }
  set_threads(1);
}

BOOST_AUTO_TEST_SUITE_END()
