// Where tensor storage comes from (storage.hpp): by default the system's aligned blocks, or the source a program
// installs before its first tensor.
#include "autograd/storage.hpp"

#include <atomic>
#include <cstdlib>
#include <stdexcept>

namespace attend {

namespace {

constexpr std::size_t storage_alignment = 64;

void* system_allocate(std::size_t bytes) {
  // aligned_alloc wants a multiple of the alignment
  void* block =
      std::aligned_alloc(storage_alignment, (bytes + storage_alignment - 1) / storage_alignment * storage_alignment);
  if (block == nullptr) throw std::bad_alloc();
  return block;
}
void system_deallocate(void* block, std::size_t) noexcept { std::free(block); }

// Written only before the first block is taken (set_storage_source), so every thread reads it unsynchronised after.
StorageSource source{system_allocate, system_deallocate};
std::atomic<bool> storage_taken{false};

}  // namespace

void set_storage_source(StorageSource next) {
  if (next.allocate == source.allocate && next.deallocate == source.deallocate) return;
  if (storage_taken.load()) {
    throw std::logic_error(
        "set_storage_source: tensors already hold storage from the previous source; install a "
        "storage source (e.g. use_block_cache()) before the first tensor");
  }
  source = next;
}

StorageSource storage_source() { return source; }

namespace detail {

void* empty_block() noexcept {
  alignas(storage_alignment) static unsigned char block[storage_alignment];
  return block;
}

void* allocate_storage(std::size_t bytes) {
  if (!storage_taken.load(std::memory_order_relaxed)) storage_taken.store(true);
  return source.allocate(bytes);
}

void deallocate_storage(void* block, std::size_t bytes) noexcept { source.deallocate(block, bytes); }

}  // namespace detail

}  // namespace attend
