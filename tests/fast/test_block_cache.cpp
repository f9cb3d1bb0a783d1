// The per-thread cache of tensor storage (fast/block_cache.hpp), installed for this suite by main.cpp: a freed block is
// reused by the next tensor of its size class, empty tensors take no block, the cache limit is kept, blocks of sizes no
// longer asked for are freed before the thread's memory grows past 5/4 of its largest in-use, and a training-like loop
// reaches a steady state where every allocation is served from the cache (memory stays flat). Chapter:
// docs/performance.md ("Memory").
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "fast/block_cache.hpp"
#include "tests/autograd/helpers.hpp"

using namespace attend;

BOOST_AUTO_TEST_SUITE(tensor_memory)

// A block must go back to the source it came from, so the source is chosen once, before the first tensor.
BOOST_AUTO_TEST_CASE(the_source_is_chosen_before_the_first_tensor) {
  use_block_cache();  // again: harmless
  const StorageSource cache = storage_source();
  const Tensor<float> held(Shape{10});
  auto other = [](std::size_t bytes) { return std::aligned_alloc(64, (bytes + 63) / 64 * 64); };
  BOOST_CHECK_EXCEPTION(set_storage_source({other, cache.deallocate}), std::logic_error, [](const std::logic_error& e) {
    return std::string(e.what()).find("before the first tensor") != std::string::npos;
  });
  BOOST_TEST((storage_source().allocate == cache.allocate));
}

BOOST_AUTO_TEST_CASE(a_freed_block_is_reused) {
  if (!tensor_cache_enabled()) {
    BOOST_TEST_MESSAGE("AddressSanitizer build: no cache, nothing is reused");
    BOOST_TEST(tensor_memory_stats().cached == 0u);
    return;
  }
  const float* first = nullptr;
  {
    Tensor<float> t(Shape{1000});
    first = t.data();
  }
  const TensorMemoryStats before = tensor_memory_stats();
  Tensor<float> again(Shape{990});  // same size class (4,000 and 3,960 bytes → 4,096)
  BOOST_TEST(again.data() == first);
  BOOST_TEST(tensor_memory_stats().cache_hits == before.cache_hits + 1);
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(again.data()) % 64 == 0);
}

BOOST_AUTO_TEST_CASE(empty_tensors_take_no_block) {
  const TensorMemoryStats before = tensor_memory_stats();
  std::vector<Tensor<float>> empties(100);
  BOOST_TEST(tensor_memory_stats().in_use == before.in_use);
  BOOST_TEST(tensor_memory_stats().allocations == before.allocations);
}

BOOST_AUTO_TEST_CASE(in_use_counts_blocks_until_freed) {
  const TensorMemoryStats before = tensor_memory_stats();
  {
    Tensor<double> t(Shape{512});  // 4,096 bytes, a class of its own
    BOOST_TEST(tensor_memory_stats().in_use == before.in_use + 4096);
    BOOST_TEST(tensor_memory_stats().peak_in_use >= before.in_use + 4096);
  }
  BOOST_TEST(tensor_memory_stats().in_use == before.in_use);
}

BOOST_AUTO_TEST_CASE(the_cache_limit_is_kept) {
  const std::size_t old_limit = tensor_cache_limit();
  { std::vector<Tensor<float>> many(20, Tensor<float>(Shape{25000})); }  // 20 blocks of 100 kB freed into the cache
  if (tensor_cache_enabled()) BOOST_TEST(tensor_memory_stats().cached >= 20 * 100000u);
  set_tensor_cache_limit(150000);
  BOOST_TEST(tensor_memory_stats().cached <= 150000u);
  { std::vector<Tensor<float>> many(20, Tensor<float>(Shape{25000})); }
  BOOST_TEST(tensor_memory_stats().cached <= 150000u);
  release_cached_tensor_memory();
  BOOST_TEST(tensor_memory_stats().cached == 0u);
  set_tensor_cache_limit(old_limit);
}

BOOST_AUTO_TEST_CASE(blocks_of_sizes_no_longer_asked_for_make_room) {
  if (!tensor_cache_enabled()) {
    BOOST_TEST_MESSAGE("AddressSanitizer build: no cache");
    return;
  }
  // on a thread of its own, so that its largest in-use so far is this test's
  std::thread([] {
    const std::size_t a = 114688, b = 131072;  // the size classes of 100,000 and 120,000 bytes
    { std::vector<Tensor<float>> phase(20, Tensor<float>(Shape{25000})); }  // one phase's blocks, then freed
    BOOST_TEST(tensor_memory_stats().cached == 21 * a);                     // the 20 and the one they were copied from
    {
      std::vector<Tensor<float>> next(20, Tensor<float>(Shape{30000}));  // another phase: other sizes
      const TensorMemoryStats now = tensor_memory_stats();
      BOOST_TEST(now.in_use == 20 * b);
      BOOST_TEST(now.cached < 21 * a);  // the first phase's blocks made room
      BOOST_TEST(4 * (now.in_use + now.cached) <= 5 * 21 * b + 4 * b);
    }
    // the sizes asked for last are kept: the same phase again is served from the cache
    const std::size_t hits = tensor_memory_stats().cache_hits;
    { std::vector<Tensor<float>> again(20, Tensor<float>(Shape{30000})); }
    BOOST_TEST(tensor_memory_stats().cache_hits == hits + 21);
    release_cached_tensor_memory();
  }).join();
}

BOOST_AUTO_TEST_CASE(a_training_loop_reaches_a_steady_state) {
  // the same graph every step: after the first step, every allocation comes from the cache and in_use returns to
  // where it started
  Parameter<float> W(Tensor<float>(Shape{16, 8}, 0.1f));
  Tape<float> tape;
  auto step = [&] {
    tape.clear();
    Variable<float> x = tape.constant(Tensor<float>(Shape{4, 8}, 0.5f));
    tape.backward(sum(tanh(linear(x, tape.param(W)))));
  };
  step();
  step();
  const TensorMemoryStats before = tensor_memory_stats();
  for (int i = 0; i < 10; ++i) step();
  const TensorMemoryStats after = tensor_memory_stats();
  BOOST_TEST(after.allocations > before.allocations);
  if (tensor_cache_enabled())
    BOOST_TEST(after.cache_hits - before.cache_hits == after.allocations - before.allocations);
  BOOST_TEST(after.in_use == before.in_use);
}

BOOST_AUTO_TEST_CASE(a_tensor_may_be_freed_by_another_thread) {
  Tensor<float> t(Shape{300});
  std::thread other([moved = std::move(t)]() mutable { moved = Tensor<float>(); });
  other.join();
  Tensor<float> after(Shape{300});  // still works on this thread
  BOOST_TEST(after.size() == 300u);
}

BOOST_AUTO_TEST_SUITE_END()
