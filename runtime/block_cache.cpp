// The per-thread cache of tensor storage blocks (block_cache.hpp). Size classes: 64-byte blocks up to 256 bytes, then
// four classes per power of two (2^k, 1.25·2^k, 1.5·2^k, 1.75·2^k), so a block of its own class is at most 25% larger
// than asked for (one of a larger class, given to a request of 64 KiB or more, at most 5 times). (The largest class,
// 2^49 bytes, is beyond any machine.) The cache of a thread is freed when the thread ends; a block
// freed after that (by a static object's destructor) goes straight back to the system.
//
// How much a cache keeps. A training loop asks for the same sizes at every step, but not only those: batches of other
// lengths, a validation between epochs, a decoding ask for other size classes. A cache that keeps every freed block
// holds the blocks of all of them at once (the translation chapter's training: 0.82 GB peak RSS against 0.55 GB when
// no block of a size no longer asked for is kept). So before a block comes from the system, a thread whose in-use plus
// cached bytes exceed 5/4 of its largest in-use so far frees cached blocks worth the request, of the size classes
// asked for least recently first. The 1/4 of slack keeps the batches of other lengths served from the cache: with no
// slack, the same training takes 4.4–4.7× the page faults and runs 3–5% slower; with it, 1.5× and the same speed
// (docs/performance.md, "Every core and several processes").
#include "runtime/block_cache.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "autograd/tensor.hpp"

namespace attend {

namespace {

// Under AddressSanitizer every block goes straight back to the system, so that a read of a freed tensor is reported
// instead of landing in a recycled block.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool cache_enabled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool cache_enabled = false;
#else
constexpr bool cache_enabled = true;
#endif
#else
constexpr bool cache_enabled = true;
#endif

constexpr std::size_t alignment = 64;
constexpr std::size_t class_count = 4 * 41;
// Blocks of classes from 64 KiB on carry a header (the first 64 bytes, before the numbers) that names their class, so
// that a request may be given a block of a larger class (see cache_allocate) and the block still goes back to its own.
// Without the cache (AddressSanitizer) no block has one, so that the sanitizer sees a write just before a block.
constexpr std::size_t large_class_bytes = cache_enabled ? std::size_t(1) << 16 : ~std::size_t(0);
constexpr std::size_t header = alignment;
// How far up a request of a large class may look for a cached block: eight classes, at most four times its size.
constexpr std::size_t classes_up = 8;

std::atomic<std::size_t> global_cache_limit{std::size_t(1) << 30};

// The size class of a request: its index and the block size it stands for.
struct SizeClass {
  std::size_t index, bytes;
};

SizeClass size_class(std::size_t bytes) {
  if (bytes <= 256) return {0, 256};
  std::size_t k = 8;  // 2^8 = 256 < bytes
  while ((std::size_t(1) << (k + 1)) < bytes) ++k;
  // bytes is in (2^k, 2^(k+1)]: four classes 1.25, 1.5, 1.75, 2 times 2^k
  const std::size_t base = std::size_t(1) << k, quarter = base / 4;
  const std::size_t q = (bytes - base + quarter - 1) / quarter;  // 1..4
  return {1 + 4 * (k - 8) + (q - 1), base + q * quarter};
}

// Gives a block of class `index` back to the system (below).
void release(void* block, std::size_t index);

struct Cache {
  std::vector<std::vector<void*>> free_blocks = std::vector<std::vector<void*>>(class_count);
  std::vector<std::uint64_t> last_request = std::vector<std::uint64_t>(class_count);  // of each class, in requests
  std::uint64_t requests = 0;
  std::size_t high_water = 0;  // the largest in_use so far (unlike stats.peak_in_use, never reset)
  TensorMemoryStats stats;
  ~Cache();
  void count_in_use(std::size_t bytes) {
    stats.in_use += bytes;
    if (stats.in_use > stats.peak_in_use) stats.peak_in_use = stats.in_use;
    if (stats.in_use > high_water) high_water = stats.in_use;
  }
  void free_last_block(std::size_t c) {
    std::vector<void*>& list = free_blocks[c];
    release(list.back(), c);
    list.pop_back();
    stats.cached -= size_of_class(c);
  }
  void trim(std::size_t limit) {
    for (std::size_t c = class_count; c-- > 0 && stats.cached > limit;)
      while (!free_blocks[c].empty() && stats.cached > limit) free_last_block(c);
  }
  // Called before a block of class `wanted` comes from the system (see the top of this file).
  void make_room(std::size_t wanted, std::size_t bytes) {
    if (4 * (stats.in_use + stats.cached) <= 5 * high_water) return;
    std::size_t freed = 0;
    while (freed < bytes) {
      std::size_t oldest = class_count;
      for (std::size_t c = 0; c < class_count; ++c)
        if (c != wanted && !free_blocks[c].empty() && (oldest == class_count || last_request[c] < last_request[oldest]))
          oldest = c;
      if (oldest == class_count) return;
      while (!free_blocks[oldest].empty() && freed < bytes) {
        free_last_block(oldest);
        freed += size_of_class(oldest);
      }
    }
  }
  static std::size_t size_of_class(std::size_t c) {
    if (c == 0) return 256;
    const std::size_t k = 8 + (c - 1) / 4, q = (c - 1) % 4 + 1;
    const std::size_t base = std::size_t(1) << k;
    return base + q * (base / 4);
  }
};

thread_local bool cache_alive = false;  // trivially destructible: readable even after the cache is gone
thread_local Cache cache;

Cache::~Cache() {
  cache_alive = false;
  trim(0);
}

Cache* this_thread_cache() {
  Cache* c = &cache;  // constructs it on first use in this thread
  cache_alive = true;
  return c;
}

// A cached block of class `wanted` or, for a large class, of the smallest of the classes_up classes above it that has
// one; class_count when there is none.
std::size_t class_to_serve(const Cache& c, std::size_t wanted) {
  if (!c.free_blocks[wanted].empty()) return wanted;
  if (Cache::size_of_class(wanted) < large_class_bytes) return class_count;
  for (std::size_t up = wanted + 1; up <= wanted + classes_up && up < class_count; ++up)
    if (!c.free_blocks[up].empty()) return up;
  return class_count;
}

// A block of class `index` from the system (a large one with its header written), or nullptr.
void* system_block(std::size_t index) {
  const std::size_t bytes = Cache::size_of_class(index);
  if (bytes < large_class_bytes) return std::aligned_alloc(alignment, bytes);
  auto* base = static_cast<unsigned char*>(std::aligned_alloc(alignment, header + bytes));
  if (base == nullptr) return nullptr;
  *reinterpret_cast<std::size_t*>(base) = index;
  return base + header;
}

// What std::free takes for a block of a class of `class_bytes`: the block, or for a large one its header.
void* system_pointer(void* block, std::size_t class_bytes) {
  return class_bytes < large_class_bytes ? block : static_cast<unsigned char*>(block) - header;
}

// What std::free takes for a block, and the block's class, given the size it was asked for.
std::pair<void*, std::size_t> system_pointer_and_class(void* block, std::size_t bytes) {
  const SizeClass sc = size_class(bytes == 0 ? 1 : bytes);
  void* base = system_pointer(block, sc.bytes);
  return {base, sc.bytes < large_class_bytes ? sc.index : *static_cast<const std::size_t*>(base)};
}

void release(void* block, std::size_t index) { std::free(system_pointer(block, Cache::size_of_class(index))); }

// A request of 64 KiB or more that the cache cannot serve with a block of its own class takes a cached block of a
// larger class (up to four times its size) before room is made or the system asked: batches of other lengths ask for
// sizes a few classes apart at every step, and without this the blocks of one length were freed to make room for the
// next one's, each new block a run of fresh pages (a page fault every 4 KiB: ~2,200 faults and a fifth of a translation
// training step on 2 threads; docs/performance.md, "Every core and several processes").
void* cache_allocate(std::size_t bytes) {
  const SizeClass sc = size_class(bytes == 0 ? 1 : bytes);
  if (sc.index >= class_count) throw std::bad_alloc();
  Cache* c = this_thread_cache();
  ++c->stats.allocations;
  c->last_request[sc.index] = ++c->requests;
  if (const std::size_t served = cache_enabled ? class_to_serve(*c, sc.index) : class_count; served != class_count) {
    const std::size_t served_bytes = Cache::size_of_class(served);
    c->count_in_use(served_bytes);
    void* block = c->free_blocks[served].back();
    c->free_blocks[served].pop_back();
    c->stats.cached -= served_bytes;
    ++c->stats.cache_hits;
    return block;
  }
  c->count_in_use(sc.bytes);
  c->make_room(sc.index, sc.bytes);
  void* block = system_block(sc.index);
  if (block == nullptr) {
    // give the cache back and try once more before failing
    c->trim(0);
    block = system_block(sc.index);
    if (block == nullptr) {
      c->stats.in_use -= sc.bytes;
      throw std::bad_alloc();
    }
  }
  return block;
}

void cache_deallocate(void* block, std::size_t bytes) noexcept {
  if (block == nullptr) return;
  const auto [system_pointer, index] = system_pointer_and_class(block, bytes);
  if (!cache_alive) {
    std::free(system_pointer);
    return;
  }
  Cache* c = &cache;
  const std::size_t class_bytes = Cache::size_of_class(index);
  c->stats.in_use = c->stats.in_use >= class_bytes ? c->stats.in_use - class_bytes : 0;
  if (!cache_enabled || c->stats.cached + class_bytes > global_cache_limit) {
    std::free(system_pointer);
    return;
  }
  try {
    c->free_blocks[index].push_back(block);
    c->stats.cached += class_bytes;
  } catch (...) {
    std::free(system_pointer);
  }
}

}  // namespace

void use_block_cache() { set_storage_source({cache_allocate, cache_deallocate}); }

TensorMemoryStats tensor_memory_stats() { return this_thread_cache()->stats; }

void reset_tensor_memory_peak() {
  Cache* c = this_thread_cache();
  c->stats.peak_in_use = c->stats.in_use;
}

void release_cached_tensor_memory() { this_thread_cache()->trim(0); }

bool tensor_cache_enabled() { return cache_enabled; }

std::size_t tensor_cache_limit() { return global_cache_limit; }

void set_tensor_cache_limit(std::size_t bytes) {
  global_cache_limit = bytes;
  this_thread_cache()->trim(bytes);
}

}  // namespace attend
