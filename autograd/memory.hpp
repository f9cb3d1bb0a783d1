// Where tensor storage comes from: a per-thread cache of freed blocks, so that a training loop, which allocates the
// same tensors at every step, reuses warm memory instead of asking the kernel for fresh pages each time (a fresh page
// costs a page fault and a clearing of 4 KiB: measured at ~20% of a small model's training step with plain malloc,
// see docs/performance.md). Blocks are grouped in size classes (four per power of two), 64-byte aligned; a freed block
// goes back to the cache of the thread that frees it, and is given to the next allocation of its class. A thread keeps
// cached blocks of sizes no longer asked for only while its in-use plus cached bytes stay within 5/4 of its largest
// in-use so far (beyond that, a request the cache cannot serve first frees the least recently asked-for sizes), and
// at most tensor_cache_limit() bytes in all; beyond that, freed blocks go back to the system. Builds with
// AddressSanitizer keep no cache (see tensor_cache_enabled).
// Chapter: docs/performance.md ("Memory").
#pragma once

#include <cstddef>
#include <new>

namespace attend {

// Counters of this thread's tensor memory, in bytes (of size classes, i.e. rounded up).
struct TensorMemoryStats {
  std::size_t in_use = 0;       // allocated by this thread and not yet freed (by any thread)
  std::size_t cached = 0;       // free blocks kept for reuse
  std::size_t peak_in_use = 0;  // the largest in_use so far (reset_peak sets it to in_use)
  std::size_t allocations = 0;  // number of allocations
  std::size_t cache_hits = 0;   // allocations served from the cache
};

TensorMemoryStats tensor_memory_stats();
void reset_tensor_memory_peak();
// False in builds with AddressSanitizer: there every freed block goes back to the system at once, so that the
// sanitizer can report a use after free.
bool tensor_cache_enabled();
// Frees every cached block of this thread (tensors in use are not affected).
void release_cached_tensor_memory();
// The most bytes of free blocks a thread keeps (default 1 GiB). Lowering it releases the excess.
std::size_t tensor_cache_limit();
void set_tensor_cache_limit(std::size_t bytes);

namespace detail {
void* empty_block() noexcept;
void* pooled_allocate(std::size_t bytes);
void pooled_deallocate(void* block, std::size_t bytes) noexcept;
}  // namespace detail

// The allocator of Tensor<T>'s storage (a standard allocator over the cache above).
template <class T>
struct PooledAllocator {
  using value_type = T;
  PooledAllocator() noexcept = default;
  template <class U>
  PooledAllocator(const PooledAllocator<U>&) noexcept {}  // NOLINT: converting, as allocators must be
  template <class U>
  struct rebind {
    using other = PooledAllocator<U>;
  };
  // An empty tensor (a default-constructed one, a released gradient) takes no block: it points at a shared dummy.
  T* allocate(std::size_t n) {
    if (n == 0) return static_cast<T*>(detail::empty_block());
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(detail::pooled_allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n != 0) detail::pooled_deallocate(p, n * sizeof(T));
  }
};

template <class T, class U>
bool operator==(const PooledAllocator<T>&, const PooledAllocator<U>&) noexcept {
  return true;
}
template <class T, class U>
bool operator!=(const PooledAllocator<T>&, const PooledAllocator<U>&) noexcept {
  return false;
}

}  // namespace attend
