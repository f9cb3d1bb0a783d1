// The value type of the autograd: a row-major, contiguous tensor of rank 0..4 whose storage is a static-rank
// `xt::xtensor<T, 1>` (so whole-tensor arithmetic is one vectorised xtensor expression), plus the small helpers every
// op shares: shapes, the "outer × n × inner" split used by axis operations, and a seeded random generator. Chapter:
// docs/01-autograd.md ("Tensors").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>
#include <xtensor/xadapt.hpp>
#include <xtensor/xtensor.hpp>

#include "autograd/storage.hpp"

namespace attend {

// The largest rank a tensor may have: (batch, channels, height, width) is the largest the course needs.
inline constexpr std::size_t max_rank = 4;

// The dimensions of a tensor, outermost first. Rank 0 is a scalar (one element).
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<std::size_t> dims);
  explicit Shape(const std::vector<std::size_t>& dims);

  std::size_t rank() const { return rank_; }
  std::size_t size() const;  // number of elements: the product of the dimensions (1 for a scalar)
  std::size_t operator[](std::size_t axis) const { return dims_[axis]; }
  std::size_t& operator[](std::size_t axis) { return dims_[axis]; }
  const std::size_t* begin() const { return dims_.data(); }
  const std::size_t* end() const { return dims_.data() + rank_; }

  Shape with_axis_removed(std::size_t axis) const;
  Shape with_axis_inserted(std::size_t axis, std::size_t dim) const;

  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }

 private:
  std::array<std::size_t, max_rank> dims_{};
  std::size_t rank_ = 0;
};

// "(2,3)", "(5,)", "()" — the spelling every error message uses.
std::string to_string(const Shape& shape);
// The same spelling for a list of dimensions of any length (e.g. a shape read from a file, which may be invalid).
std::string to_string(const std::vector<std::uint64_t>& dims);

// NumPy broadcasting: align trailing dimensions; each pair must be equal or contain a 1.
// Throws std::invalid_argument naming `op` and both shapes when they cannot be broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Checks an axis against a rank and returns it; negative axes count from the end (-1 is the last axis).
std::size_t normalize_axis(std::ptrdiff_t axis, std::size_t rank, const char* op);

// A contiguous tensor seen as (outer, n, inner) around one axis: element (o, k, i) sits at (o * n + k) * inner + i.
// Every operation "along an axis" (sum, max, softmax, concat, slice, ...) is a loop over this view.
struct AxisSplit {
  std::size_t outer = 1, n = 1, inner = 1;
};
AxisSplit split_at(const Shape& shape, std::size_t axis);

// Tag for a tensor whose elements are left uninitialised, for an op that overwrites every element right away.
struct Uninitialized {};
inline constexpr Uninitialized uninitialized{};

template <class T>
class Tensor {
 public:
  using value_type = T;
  using storage_type = xt::xtensor<T, 1, xt::layout_type::row_major, StorageAllocator<T>>;

  Tensor() = default;  // empty: shape (0,), no elements
  explicit Tensor(const Shape& shape) : shape_(shape), data_(std::array<std::size_t, 1>{shape.size()}, T(0)) {}
  Tensor(const Shape& shape, Uninitialized) : shape_(shape), data_(std::array<std::size_t, 1>{shape.size()}) {}
  Tensor(const Shape& shape, T fill) : shape_(shape), data_(std::array<std::size_t, 1>{shape.size()}, fill) {}
  // Takes the flat row-major data; its length must equal shape.size().
  Tensor(const Shape& shape, storage_type data);
  Tensor(const Shape& shape, std::initializer_list<T> values);
  // Copies data from outside: exactly shape.size() values in row-major order, from a pointer and a count, a vector, or
  // any iterator range (e.g. a std::array, or NumPy's buffer). Throws std::invalid_argument when the count differs.
  Tensor(const Shape& shape, const T* values, std::size_t count);
  Tensor(const Shape& shape, const std::vector<T>& values) : Tensor(shape, values.data(), values.size()) {}
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  Tensor(const Shape& shape, It first, It last) : Tensor(shape, uninitialized) {
    const auto count = static_cast<std::size_t>(std::distance(first, last));
    check_count(count);
    std::copy(first, last, data_.begin());
  }
  // Copies any static-rank xtensor expression result, e.g. Tensor<float>(xt::xtensor<float, 2>{{1, 2}, {3, 4}}).
  template <std::size_t N>
  Tensor(const xt::xtensor<T, N>& x) : shape_(shape_of(x)), data_(std::array<std::size_t, 1>{x.size()}) {  // NOLINT
    std::copy(x.begin(), x.end(), data_.begin());
  }

  static Tensor scalar(T value) { return Tensor(Shape{}, value); }

  const Shape& shape() const { return shape_; }
  std::size_t rank() const { return shape_.rank(); }
  std::size_t size() const { return data_.size(); }

  // The storage as a rank-1 xtensor: whole-tensor elementwise work is written on these.
  storage_type& flat() { return data_; }
  const storage_type& flat() const { return data_; }
  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }

  // A static-rank view of the same memory, for indexing and xtensor expressions: t.view<2>()(i, j).
  // Throws when N is not the tensor's rank.
  template <std::size_t N>
  auto view() {
    return xt::adapt(data_.data(), data_.size(), xt::no_ownership(), dims<N>());
  }
  template <std::size_t N>
  auto view() const {
    return xt::adapt(data_.data(), data_.size(), xt::no_ownership(), dims<N>());
  }

  // Element access by full index, e.g. t.at({1, 2}). Bounds-checked; for tests, printing and tutorials, not hot loops.
  T& at(std::initializer_list<std::size_t> index);
  T at(std::initializer_list<std::size_t> index) const;
  // The single element of a size-1 tensor (a loss).
  T item() const;

  // The same data under a new shape with the same number of elements.
  Tensor reshaped(const Shape& shape) const;
  // A copy of the elements in row-major order.
  std::vector<T> to_vector() const { return std::vector<T>(data_.begin(), data_.end()); }

 private:
  void check_count(std::size_t count) const;  // throws unless count == shape_.size()
  template <std::size_t N>
  static Shape shape_of(const xt::xtensor<T, N>& x) {
    static_assert(N <= max_rank, "attend tensors have rank at most 4");
    return Shape(std::vector<std::size_t>(x.shape().begin(), x.shape().end()));
  }
  template <std::size_t N>
  std::array<std::size_t, N> dims() const {
    if (N != shape_.rank()) {
      throw std::invalid_argument("Tensor::view<" + std::to_string(N) + ">: tensor has shape " + to_string(shape_));
    }
    std::array<std::size_t, N> d{};
    for (std::size_t i = 0; i < N; ++i) d[i] = shape_[i];
    return d;
  }
  std::size_t offset_of(std::initializer_list<std::size_t> index) const;

  Shape shape_ = Shape{0};
  storage_type data_ = storage_type(std::array<std::size_t, 1>{0});
};

// out[i_0, ..., i_{r-1}] = t.data()[Σ_a i_a · strides[a]] for every index of `shape` (rank ≤ 4), in row-major order.
// One mechanism for every copy that walks t with its own steps: broadcasting (stride 0 repeats) and permutation.
template <class T>
Tensor<T> strided_gather(const Tensor<T>& t, const Shape& shape, const std::array<std::size_t, max_rank>& strides);

// t repeated along the axes where it has size 1 (or is missing on the left) to fill `shape` (NumPy broadcasting).
template <class T>
Tensor<T> broadcast_to(const Tensor<T>& t, const Shape& shape);

// Integer ids (tokens, class labels) with a shape, e.g. a (batch, time) batch of token ids.
using Ids = Tensor<std::int64_t>;

// Deterministic random numbers from a seed: the same seed gives the same numbers on every platform, because the
// conversions to floating point are written here instead of using the library's distributions (which may differ).
class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0);
  // A generator for building modules whose every weight will be loaded (Module::load, nn::load_checkpoint):
  // uniform_tensor and normal_tensor return zeros without drawing, like PyTorch's skip_init. Everything else draws
  // as from Rng(0). Usage: Rng none = Rng::no_init(); nn::GruCell<float> cell(4, 5, none);
  static Rng no_init();
  std::uint64_t next();  // 64 random bits (xoshiro256**)
  double uniform();      // in [0, 1)
  double uniform(double low, double high);
  // A whole number in [0, n), every one equally likely (no modulo bias: draws that would favour some are redrawn);
  // std::invalid_argument for n = 0.
  std::size_t below(std::size_t n);
  double normal();  // N(0, 1), Box–Muller
  template <class T>
  Tensor<T> uniform_tensor(const Shape& shape, double low, double high);
  template <class T>
  Tensor<T> normal_tensor(const Shape& shape, double mean, double stddev);

  // The generator's whole state, to save (a training checkpoint) and restore: the numbers then go on exactly as if
  // never interrupted. set_state throws std::invalid_argument for the all-zero state, which xoshiro never leaves.
  using State = std::array<std::uint64_t, 4>;
  const State& state() const { return state_; }
  void set_state(const State& state);

 private:
  State state_{};
  bool draws_tensors_ = true;
};

}  // namespace attend
