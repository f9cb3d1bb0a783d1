// Internal to precision/ (not installed): the table in which a bf16 or int8 Products object (bf16.cpp, int8.cpp) keeps
// the copies of its model's weights, each under the address of the weight's numbers, so that a product finds the copy
// of an operand that lies in a weight — the weight, its transpose, or a block of their rows and columns. One table a
// Products object: nothing here is shared by two models.
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
  // f(copy) for every copy registered, in the order of their addresses.
  template <class F>
  void for_each(F&& f) const {
    const std::shared_lock lock(mutex_);
    for (const auto& entry : copies_) f(*entry.second);
  }

 private:
  mutable std::shared_mutex mutex_;
  std::map<const float*, std::shared_ptr<Copy>> copies_;
};

}  // namespace attend
