// What the products built on oneDNN share (onednn.hpp): the engine, OpenMP's threads, matrices' descriptors, and the
// fixed-shape primitives' buckets and cache. Compiled only with oneDNN (ATTEND_ONEDNN), but for the buckets.
#include "precision/shapes.hpp"

#if ATTEND_ONEDNN
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "autograd/blas.hpp"
#include "precision/onednn.hpp"
#endif

namespace attend {

const char* shapes_name(Shapes shapes) { return shapes == Shapes::fixed ? "fixed" : "runtime"; }

std::size_t row_bucket(std::size_t m) {
  if (m <= 8) return m;
  std::size_t octave = 8;  // the largest power of two below m
  while (octave * 2 < m) octave *= 2;
  const std::size_t step = octave / 4;
  return (m + step - 1) / step * step;
}

#if !ATTEND_ONEDNN
KernelCacheStats KeepsKernels::kernel_cache_stats() const { return {}; }
std::string KeepsKernels::kernel_report() const { return ""; }
#endif

KernelCacheStats kernel_cache_stats(const Products& products) {
  const auto* keeps = dynamic_cast<const KeepsKernels*>(&products);
  return keeps != nullptr ? keeps->kernel_cache_stats() : KernelCacheStats{};
}

}  // namespace attend

#if ATTEND_ONEDNN
namespace attend {

namespace onednn {

std::string kernel_of(const dnnl::matmul::primitive_desc& product) {
  return "oneDNN's matmul, " + std::string(product.impl_info_str());
}

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The setting belongs to the OpenMP runtime Debian's oneDNN is built with (GCC's libgomp), found by name at run time:
// compiling attend with -fopenmp would tie it to the compiler's own runtime (clang's is another library).
void match_blas_threads() {
  using SetThreads = void (*)(int);
  static const auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  thread_local int threads = -1;  // as last set for this thread
  if (const int now = blas_threads(); now != threads && set != nullptr) set(threads = now);
}

dnnl::memory::desc matrix(bool transposed, dnnl::memory::dim rows, dnnl::memory::dim cols, dnnl::memory::dim ld,
                          dnnl::memory::data_type type) {
  using dnnl::memory;
  return memory::desc({rows, cols}, type, transposed ? memory::dims{1, ld} : memory::dims{ld, 1});
}

Shapes preferred_shapes(const dnnl::matmul::primitive_desc& fixed_example) {
  return std::strstr(fixed_example.impl_info_str(), "amx") != nullptr ? Shapes::fixed : Shapes::runtime;
}

MatmulCache::MatmulCache(Describe describe, std::size_t capacity)
    : describe_(std::move(describe)), capacity_(capacity < 1 ? 1 : capacity) {}

MatmulCache::Entry MatmulCache::find(const MatmulShape& shape) {
  const std::lock_guard lock(mutex_);
  ++stats_.runs;
  if (auto found = entries_.find(shape); found != entries_.end()) {
    uses_.splice(uses_.begin(), uses_, found->second.use);  // now the most recently used
    return found->second;
  }
  // made under the lock: two threads asking for one new shape make it once
  const auto start = std::chrono::steady_clock::now();
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const dnnl::matmul::primitive_desc desc = describe_(shape, attr);
  Entry entry{std::make_shared<const dnnl::matmul>(desc), desc.scratchpad_desc().get_size(), {}};
  stats_.making_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++stats_.made;
  if (entries_.size() >= capacity_) {  // drop the least recently used (a thread running it keeps it alive)
    entries_.erase(uses_.back());
    uses_.pop_back();
    ++stats_.dropped;
  }
  uses_.push_front(shape);
  entry.use = uses_.begin();
  return entries_.emplace(shape, entry).first->second;
}

void MatmulCache::run(const MatmulShape& shape, std::unordered_map<int, dnnl::memory> args) {
  const Entry entry = find(shape);
  thread_local std::vector<unsigned char> scratch;  // a buffer, no state: any primitive's, any cache's
  if (scratch.size() < entry.scratch_bytes) scratch.resize(entry.scratch_bytes);
  const dnnl::memory::desc scratch_desc({static_cast<dnnl::memory::dim>(entry.scratch_bytes)},
                                        dnnl::memory::data_type::u8, dnnl::memory::format_tag::x);
  args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratch_desc, cpu_engine(), scratch.data()));
  thread_local dnnl::stream stream(cpu_engine());
  entry.product->execute(stream, args);
  stream.wait();
}

KernelCacheStats MatmulCache::stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace onednn

KernelCacheStats KeepsKernels::kernel_cache_stats() const { return fixed_ ? fixed_->stats() : KernelCacheStats{}; }

std::string KeepsKernels::kernel_report() const {
  return fixed_ ? onednn::describe(fixed_->stats(), fixed_->capacity()) : "";
}

namespace onednn {

std::string describe(const KernelCacheStats& stats, std::size_t capacity) {
  char line[256];
  const double found = stats.runs > 0 ? 100.0 * static_cast<double>(stats.runs - stats.made) / stats.runs : 0.0;
  std::snprintf(line, sizeof line,
                "%zu kernels made for their shapes in %.0f ms (%zu dropped, at most %zu kept); %.1f %% of %zu products "
                "found theirs made",
                stats.made, stats.making_seconds * 1e3, stats.dropped, capacity, found, stats.runs);
  return line;
}

}  // namespace onednn

}  // namespace attend

#endif
