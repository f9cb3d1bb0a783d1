// Internal to fast/ (not installed): the registry that the bfloat16 and int8 products (precision.cpp, int8.cpp) keep of
// their weights' copies, found by the address of the weight's numbers.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <utility>

namespace attend {

// Copies of registered float matrices, each under the address of its matrix's first number. Copy::size() is the number
// of floats the matrix holds. Lookups, additions and removals may happen on any thread at once.
template <class Copy>
class WeightRegistry {
 public:
  // The registered matrix that holds every float of [first, last) — its first number and its copy — or nullptrs.
  std::pair<const float*, std::shared_ptr<Copy>> find(const float* first, const float* last) const {
    const std::shared_lock lock(mutex_);
    auto it = copies_.upper_bound(first);
    if (it == copies_.begin()) return {nullptr, nullptr};
    --it;
    if (last > it->first + it->second->size()) return {nullptr, nullptr};
    return *it;
  }
  // Registers `copy` under `key`; false (nothing changed) when a copy is registered there already.
  bool add(const float* key, std::shared_ptr<Copy> copy) {
    const std::unique_lock lock(mutex_);
    return copies_.emplace(key, std::move(copy)).second;
  }
  void remove(const float* key) {
    const std::unique_lock lock(mutex_);
    copies_.erase(key);
  }

 private:
  mutable std::shared_mutex mutex_;
  std::map<const float*, std::shared_ptr<Copy>> copies_;
};

}  // namespace attend
