// A storage source for tensors (autograd/tensor.hpp, StorageSource): a per-thread cache of freed blocks, so that a
// training loop, which allocates the same tensors at every step, reuses warm memory instead of asking the kernel for
// fresh pages each time (a fresh page costs a page fault and a clearing of 4 KiB: measured at ~20% of a small model's
// training step with plain malloc, see docs/performance.md). A program installs it with use_block_cache() before its
// first tensor; the reference engine alone takes every block from the system. Blocks are grouped in size classes (four
// per power of two), 64-byte aligned; a freed block goes back to the cache of the thread that frees it, and is given to
// the next allocation of its class — or, from 64 KiB on, of a class up to four times smaller when that one has no
// block cached (a batch of shorter sentences takes the blocks a longer one left). A thread keeps cached blocks of sizes
// no longer asked for only while its in-use plus cached bytes stay within 5/4 of its largest in-use so far (beyond
// that, a request the cache cannot serve first frees the least recently asked-for sizes), and at most
// tensor_cache_limit() bytes in all; beyond that, freed blocks go back to the system. Builds with AddressSanitizer keep
// no cache (see tensor_cache_enabled). Chapter: docs/performance.md ("Memory").
#pragma once

#include <cstddef>

namespace attend {

// Makes this cache the source of every tensor's storage, in every thread. Call it first in main (before any tensor
// exists); calling it again is harmless, calling it after other tensors took storage throws std::logic_error.
void use_block_cache();

// Counters of this thread's tensor memory (all zero until use_block_cache()), in bytes (of size classes, i.e. rounded
// up).
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

}  // namespace attend
