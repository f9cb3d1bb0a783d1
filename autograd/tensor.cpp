// Shapes, tensors and the seeded generator declared in tensor.hpp.
#include "autograd/tensor.hpp"

#include <cmath>

namespace attend {

Shape::Shape(std::initializer_list<std::size_t> dims) : Shape(std::vector<std::size_t>(dims)) {}

Shape::Shape(const std::vector<std::size_t>& dims) {
  if (dims.size() > max_rank) {
    throw std::invalid_argument("Shape: rank " + std::to_string(dims.size()) + " exceeds the maximum rank " +
                                std::to_string(max_rank));
  }
  rank_ = dims.size();
  for (std::size_t i = 0; i < rank_; ++i) dims_[i] = dims[i];
}

std::size_t Shape::size() const {
  std::size_t n = 1;
  for (std::size_t i = 0; i < rank_; ++i) n *= dims_[i];
  return n;
}

Shape Shape::with_axis_removed(std::size_t axis) const {
  std::vector<std::size_t> d(begin(), end());
  d.erase(d.begin() + static_cast<std::ptrdiff_t>(axis));
  return Shape(d);
}

Shape Shape::with_axis_inserted(std::size_t axis, std::size_t dim) const {
  std::vector<std::size_t> d(begin(), end());
  d.insert(d.begin() + static_cast<std::ptrdiff_t>(axis), dim);
  return Shape(d);
}

bool Shape::operator==(const Shape& other) const {
  if (rank_ != other.rank_) return false;
  for (std::size_t i = 0; i < rank_; ++i) {
    if (dims_[i] != other.dims_[i]) return false;
  }
  return true;
}

std::string to_string(const Shape& shape) { return to_string(std::vector<std::uint64_t>(shape.begin(), shape.end())); }

std::string to_string(const std::vector<std::uint64_t>& dims) {
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ",";
    s += std::to_string(dims[i]);
  }
  if (dims.size() == 1) s += ",";
  return s + ")";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const std::size_t rank = std::max(a.rank(), b.rank());
  std::vector<std::size_t> out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    // i counts from the last axis
    const std::size_t da = i < a.rank() ? a[a.rank() - 1 - i] : 1;
    const std::size_t db = i < b.rank() ? b[b.rank() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      throw std::invalid_argument(std::string(op) + ": shapes " + to_string(a) + " and " + to_string(b) +
                                  " cannot be broadcast together");
    }
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return Shape(out);
}

std::size_t normalize_axis(std::ptrdiff_t axis, std::size_t rank, const char* op) {
  const auto r = static_cast<std::ptrdiff_t>(rank);
  if (axis < -r || axis >= r) {
    throw std::invalid_argument(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for rank " +
                                std::to_string(rank));
  }
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

AxisSplit split_at(const Shape& shape, std::size_t axis) {
  AxisSplit s;
  for (std::size_t i = 0; i < axis; ++i) s.outer *= shape[i];
  s.n = shape[axis];
  for (std::size_t i = axis + 1; i < shape.rank(); ++i) s.inner *= shape[i];
  return s;
}

template <class T>
void Tensor<T>::check_count(std::size_t count) const {
  if (count != shape_.size()) {
    throw std::invalid_argument("Tensor: shape " + to_string(shape_) + " needs " + std::to_string(shape_.size()) +
                                " values, got " + std::to_string(count));
  }
}

template <class T>
Tensor<T>::Tensor(const Shape& shape, storage_type data) : shape_(shape), data_(std::move(data)) {
  check_count(data_.size());
}

template <class T>
Tensor<T>::Tensor(const Shape& shape, const T* values, std::size_t count) : Tensor(shape, uninitialized) {
  check_count(count);
  if (count > 0) std::copy(values, values + count, data_.begin());
}

template <class T>
Tensor<T>::Tensor(const Shape& shape, std::initializer_list<T> values)
    : Tensor(shape, storage_type(std::array<std::size_t, 1>{values.size()})) {
  std::copy(values.begin(), values.end(), data_.begin());
}

template <class T>
std::size_t Tensor<T>::offset_of(std::initializer_list<std::size_t> index) const {
  if (index.size() != shape_.rank()) {
    throw std::invalid_argument("Tensor::at: " + std::to_string(index.size()) + " indices for shape " +
                                to_string(shape_));
  }
  std::size_t offset = 0, axis = 0;
  for (std::size_t i : index) {
    if (i >= shape_[axis]) {
      throw std::out_of_range("Tensor::at: index " + std::to_string(i) + " out of range for axis " +
                              std::to_string(axis) + " of shape " + to_string(shape_));
    }
    offset = offset * shape_[axis] + i;
    ++axis;
  }
  return offset;
}

template <class T>
T& Tensor<T>::at(std::initializer_list<std::size_t> index) {
  return data_[offset_of(index)];
}

template <class T>
T Tensor<T>::at(std::initializer_list<std::size_t> index) const {
  return data_[offset_of(index)];
}

template <class T>
T Tensor<T>::item() const {
  if (data_.size() != 1) {
    throw std::invalid_argument("Tensor::item: tensor of shape " + to_string(shape_) + " has " +
                                std::to_string(data_.size()) + " elements, not 1");
  }
  return data_[0];
}

template <class T>
Tensor<T> Tensor<T>::reshaped(const Shape& shape) const {
  if (shape.size() != size()) {
    throw std::invalid_argument("Tensor::reshaped: cannot view shape " + to_string(shape_) + " as " + to_string(shape));
  }
  return Tensor(shape, data_);
}

template <class T>
Tensor<T> broadcast_to(const Tensor<T>& t, const Shape& shape) {
  const Shape& in = t.shape();
  if (in.rank() > shape.rank()) {
    throw std::invalid_argument("broadcast_to: cannot broadcast shape " + to_string(in) + " to the lower rank " +
                                to_string(shape));
  }
  // Input axes align with the target's last axes. An axis of size 1, or one the input lacks, gets stride 0: repeated.
  std::array<std::size_t, max_rank> strides{};
  const std::size_t offset = shape.rank() - in.rank();
  std::size_t step = 1;
  for (std::size_t a = in.rank(); a-- > 0;) {
    if (in[a] != shape[offset + a] && in[a] != 1) {
      throw std::invalid_argument("broadcast_to: cannot broadcast shape " + to_string(in) + " to " + to_string(shape));
    }
    strides[offset + a] = in[a] == 1 ? 0 : step;
    step *= in[a];
  }
  return strided_gather(t, shape, strides);
}

template <class T>
Tensor<T> strided_gather(const Tensor<T>& t, const Shape& shape, const std::array<std::size_t, max_rank>& strides) {
  // pad on the left to rank 4: the extra outer axes have size 1
  std::array<std::size_t, max_rank> dims{1, 1, 1, 1}, step{0, 0, 0, 0};
  const std::size_t pad = max_rank - shape.rank();
  for (std::size_t a = 0; a < shape.rank(); ++a) {
    dims[pad + a] = shape[a];
    step[pad + a] = strides[a];
  }
  Tensor<T> out(shape, uninitialized);
  const T* src = t.data();
  T* dst = out.data();
  for (std::size_t i0 = 0; i0 < dims[0]; ++i0)
    for (std::size_t i1 = 0; i1 < dims[1]; ++i1)
      for (std::size_t i2 = 0; i2 < dims[2]; ++i2) {
        const T* row = src + i0 * step[0] + i1 * step[1] + i2 * step[2];
        for (std::size_t i3 = 0; i3 < dims[3]; ++i3) *dst++ = row[i3 * step[3]];
      }
  return out;
}

template class Tensor<float>;
template class Tensor<double>;
template class Tensor<std::int64_t>;
template class Tensor<std::uint8_t>;
template Tensor<float> broadcast_to(const Tensor<float>&, const Shape&);
template Tensor<double> broadcast_to(const Tensor<double>&, const Shape&);
template Tensor<std::uint8_t> broadcast_to(const Tensor<std::uint8_t>&, const Shape&);
template Tensor<float> strided_gather(const Tensor<float>&, const Shape&, const std::array<std::size_t, max_rank>&);
template Tensor<double> strided_gather(const Tensor<double>&, const Shape&, const std::array<std::size_t, max_rank>&);
template Tensor<std::uint8_t> strided_gather(const Tensor<std::uint8_t>&, const Shape&,
                                             const std::array<std::size_t, max_rank>&);

namespace {
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(std::uint64_t seed) {
  // splitmix64 expands the seed into the four state words, as xoshiro's authors recommend
  for (auto& word : state_) {
    seed += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = seed;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    word = z ^ (z >> 31);
  }
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

void Rng::set_state(const State& state) {
  if (state == State{})
    throw std::invalid_argument("Rng::set_state: the all-zero state is not a state of xoshiro256**");
  state_ = state;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::uniform(double low, double high) { return low + (high - low) * uniform(); }

std::size_t Rng::below(std::size_t n) {
  if (n == 0) throw std::invalid_argument("Rng::below: n = 0 (no whole number in [0, 0))");
  const std::uint64_t count = n, rejected = (0 - count) % count;  // 2^64 mod n: the draws below it would favour some
  std::uint64_t r = next();
  while (r < rejected) r = next();
  return static_cast<std::size_t>(r % count);
}

double Rng::normal() {
  // Box–Muller; 1 - u keeps the logarithm's argument in (0, 1]
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

Rng Rng::no_init() {
  Rng rng(0);
  rng.draws_tensors_ = false;
  return rng;
}

template <class T>
Tensor<T> Rng::uniform_tensor(const Shape& shape, double low, double high) {
  Tensor<T> t(shape);
  if (!draws_tensors_) return t;
  for (auto& v : t.flat()) v = static_cast<T>(uniform(low, high));
  return t;
}

template <class T>
Tensor<T> Rng::normal_tensor(const Shape& shape, double mean, double stddev) {
  Tensor<T> t(shape);
  if (!draws_tensors_) return t;
  for (auto& v : t.flat()) v = static_cast<T>(mean + stddev * normal());
  return t;
}

template Tensor<float> Rng::uniform_tensor<float>(const Shape&, double, double);
template Tensor<double> Rng::uniform_tensor<double>(const Shape&, double, double);
template Tensor<float> Rng::normal_tensor<float>(const Shape&, double, double);
template Tensor<double> Rng::normal_tensor<double>(const Shape&, double, double);

}  // namespace attend
