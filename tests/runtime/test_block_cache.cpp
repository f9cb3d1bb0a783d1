// The per-thread cache of tensor storage (runtime/block_cache.hpp), installed for this suite by main.cpp: a freed block
// is reused by the next tensor of its size class, empty tensors take no block, the cache limit is kept, blocks of sizes
// no longer asked for are freed before the thread's memory grows past 5/4 of its largest in-use, a request of 64 KiB or
// more takes a cached block of a class up to four times its size, and training-like loops — the same graph every step,
// or batches of varying lengths — reach a steady state where every allocation is served from the cache (memory stays
// flat). Chapter: docs/performance.md ("Memory").
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/block_cache.hpp"
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

BOOST_AUTO_TEST_CASE(a_request_takes_a_cached_block_of_a_larger_class) {
  if (!tensor_cache_enabled()) {
    BOOST_TEST_MESSAGE("AddressSanitizer build: no cache");
    return;
  }
  std::thread([] {
    const float* block = nullptr;
    { block = Tensor<float>(Shape{30000}).data(); }  // 120,000 bytes: class 131,072, cached when freed
    const TensorMemoryStats before = tensor_memory_stats();
    {
      const Tensor<float> shorter(Shape{25000});  // 100,000 bytes: class 114,688, none of its own cached
      BOOST_TEST(shorter.data() == block);
      BOOST_TEST(tensor_memory_stats().cache_hits == before.cache_hits + 1);
      BOOST_TEST(tensor_memory_stats().in_use == before.in_use + 131072);  // counted as the block it is
    }
    // freed into its own class again: the counts return, and a request of that class gets it
    BOOST_TEST(tensor_memory_stats().cached == before.cached);
    BOOST_TEST(tensor_memory_stats().in_use == before.in_use);
    { BOOST_TEST(Tensor<float>(Shape{30000}).data() == block); }
    release_cached_tensor_memory();
    // at most four times the size: a request of 240,000 bytes (class 262,144) does not take a cached 1,310,720
    { block = Tensor<float>(Shape{300000}).data(); }
    { BOOST_TEST(Tensor<float>(Shape{60000}).data() != block); }
    { BOOST_TEST(Tensor<float>(Shape{70000}).data() == block); }  // 280,000 bytes (class 327,680) does
    // and blocks under 64 KiB keep to their own class
    release_cached_tensor_memory();
    { block = Tensor<float>(Shape{12000}).data(); }              // class 49,152
    { BOOST_TEST(Tensor<float>(Shape{9000}).data() != block); }  // class 40,960
    release_cached_tensor_memory();
  }).join();
}

BOOST_AUTO_TEST_CASE(batches_of_varying_lengths_reach_a_steady_state) {
  // a long batch's blocks serve the shorter ones after it: from then on no block comes from the system, though every
  // other phase asks for a class of its own (without this, the 5/4 rule freed one phase's blocks for the next's)
  std::thread([] {
    const auto phase = [](std::size_t floats) {
      std::vector<Tensor<float>> blocks;
      for (int i = 0; i < 20; ++i) blocks.emplace_back(Shape{floats});
    };
    phase(30000);  // 120,000 bytes
    const TensorMemoryStats before = tensor_memory_stats();
    for (int i = 0; i < 5; ++i) {
      phase(25000);  // 100,000 bytes
      phase(21000);  // 84,000 bytes
      phase(30000);
    }
    const TensorMemoryStats after = tensor_memory_stats();
    BOOST_TEST(after.allocations - before.allocations == 300u);
    if (tensor_cache_enabled()) BOOST_TEST(after.cache_hits - before.cache_hits == 300u);
    BOOST_TEST(after.in_use == before.in_use);
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
