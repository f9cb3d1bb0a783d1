#include "ops/select.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace attend {

namespace {

// Whether a ranks before b: larger first, NaN before every number (and equal ones keep their order: stable sorts).
template <class T>
bool ranks_before(T a, T b) {
  return std::isnan(a) ? !std::isnan(b) : a > b;
}

// The last axis's length, checked; `what` names the op for the message.
template <class T>
std::size_t last_axis(const Tensor<T>& x, const char* what) {
  const Shape& shape = x.shape();
  if (shape.rank() == 0) throw std::invalid_argument(std::string(what) + ": a scalar has no last axis");
  const std::size_t n = shape[shape.rank() - 1];
  if (n == 0) throw std::invalid_argument(std::string(what) + ": the last axis is empty");
  return n;
}

}  // namespace

template <class T>
Ids argmax(const Tensor<T>& x) {
  const std::size_t n = last_axis(x, "argmax");
  std::vector<std::size_t> dims(x.shape().begin(), x.shape().end() - 1);
  Ids result{Shape(dims)};
  const T* row = x.data();
  for (std::size_t r = 0; r < result.size(); ++r, row += n) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < n; ++k) best = ranks_before(row[k], row[best]) ? k : best;
    result.data()[r] = static_cast<std::int64_t>(best);
  }
  return result;
}

template <class T>
TopK<T> topk(const Tensor<T>& x, std::size_t k) {
  const std::size_t n = last_axis(x, "topk");
  if (k == 0 || k > n) {
    throw std::invalid_argument("topk: k = " + std::to_string(k) + " for a last axis of " + std::to_string(n) +
                                " (1 ≤ k ≤ " + std::to_string(n) + ")");
  }
  std::vector<std::size_t> dims(x.shape().begin(), x.shape().end());
  dims.back() = k;
  TopK<T> result{Tensor<T>(Shape(dims)), Ids(Shape(dims))};
  std::vector<std::size_t> order(n);
  const T* row = x.data();
  for (std::size_t r = 0; r * k < result.values.size(); ++r, row += n) {
    std::iota(order.begin(), order.end(), std::size_t{0});
    // the k first of the stable order: positions break ties, so the result never depends on the sort's internals
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [row](std::size_t a, std::size_t b) {
                        return ranks_before(row[a], row[b]) || (!ranks_before(row[b], row[a]) && a < b);
                      });
    for (std::size_t j = 0; j < k; ++j) {
      result.values.data()[r * k + j] = row[order[j]];
      result.indices.data()[r * k + j] = static_cast<std::int64_t>(order[j]);
    }
  }
  return result;
}

#define ATTEND_INSTANTIATE(T)            \
  template Ids argmax(const Tensor<T>&); \
  template TopK<T> topk(const Tensor<T>&, std::size_t);
ATTEND_INSTANTIATE(float)
ATTEND_INSTANTIATE(double)
#undef ATTEND_INSTANTIATE

}  // namespace attend
