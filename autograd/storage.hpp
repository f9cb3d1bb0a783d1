// The allocator of Tensor<T>'s elements and the one hook a program may change. Not part of the reading order
// (docs/reference/tape.md): the engine works the same whatever source its blocks come from.
#pragma once

#include <cstddef>
#include <new>

namespace attend {

// Where tensor storage comes from: by default 64-byte-aligned blocks straight from the system (std::aligned_alloc,
// std::free). A program may install another source once, before its first tensor takes storage:
// runtime/block_cache.hpp's per-thread cache of freed blocks (`use_block_cache()`), which the `attend` program, the
// tutorials and the benchmarks install. Installing a different source after that throws std::logic_error (a block must
// go back to the source it came from).
struct StorageSource {
  void* (*allocate)(std::size_t bytes);  // a block of at least `bytes` bytes, 64-byte aligned; throws std::bad_alloc
  void (*deallocate)(void* block, std::size_t bytes) noexcept;  // `bytes` as given to allocate
};
void set_storage_source(StorageSource source);
StorageSource storage_source();

namespace detail {
void* empty_block() noexcept;
void* allocate_storage(std::size_t bytes);
void deallocate_storage(void* block, std::size_t bytes) noexcept;
}  // namespace detail

// The allocator of Tensor<T>'s storage: a standard allocator over the storage source. An empty tensor (a
// default-constructed one, a released gradient) takes no block: it points at a shared dummy.
template <class T>
struct StorageAllocator {
  using value_type = T;
  StorageAllocator() noexcept = default;
  template <class U>
  StorageAllocator(const StorageAllocator<U>&) noexcept {}  // NOLINT: converting, as allocators must be
  T* allocate(std::size_t n) {
    if (n == 0) return static_cast<T*>(detail::empty_block());
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(detail::allocate_storage(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n != 0) detail::deallocate_storage(p, n * sizeof(T));
  }
  bool operator==(const StorageAllocator&) const noexcept { return true; }  // every block may go back to any
};

}  // namespace attend
