// Embedding lookup: rows of a table gathered by integer ids; backward scatter-adds them back. Formulas: ops.hpp.
#include "autograd/ops.hpp"

namespace attend {

template <class T>
Variable<T> embedding(const Variable<T>& weight, const Ids& ids, std::int64_t padding_id) {
  Tape<T>& tape = tape_of("embedding", {&weight});
  const Shape& table = weight.value().shape();
  if (table.rank() != 2) {
    throw std::invalid_argument("embedding: the table must be (vocabulary, dimension), got shape " + to_string(table));
  }
  if (ids.rank() >= max_rank) {
    throw std::invalid_argument("embedding: ids of shape " + to_string(ids.shape()) + " would give a result of rank " +
                                std::to_string(ids.rank() + 1) + " > " + std::to_string(max_rank));
  }
  const std::size_t rows = table[0], dim = table[1];
  for (std::size_t n = 0; n < ids.size(); ++n) {
    const std::int64_t id = ids.data()[n];
    if (id < 0 || static_cast<std::size_t>(id) >= rows) {
      throw std::invalid_argument("embedding: id " + std::to_string(id) + " at position " + std::to_string(n) +
                                  " is out of range for a table of " + std::to_string(rows) + " rows");
    }
  }
  Tensor<T> y(ids.shape().with_axis_inserted(ids.rank(), dim), uninitialized);
  const T* w = weight.value().data();
  for (std::size_t n = 0; n < ids.size(); ++n) {
    const T* row = w + static_cast<std::size_t>(ids.data()[n]) * dim;
    std::copy(row, row + dim, y.data() + n * dim);
  }
  return tape.record("embedding", std::move(y), {weight}, [ids, dim, padding_id](BackwardContext<T>& c) {
    const T* dy = c.dy().data();
    T* dw = c.dx(0).data();
    for (std::size_t n = 0; n < ids.size(); ++n) {
      if (ids.data()[n] == padding_id) continue;  // the padding row is never trained
      T* row = dw + static_cast<std::size_t>(ids.data()[n]) * dim;
      for (std::size_t e = 0; e < dim; ++e) row[e] += dy[n * dim + e];
    }
  });
}

template Variable<float> embedding(const Variable<float>&, const Ids&, std::int64_t);
template Variable<double> embedding(const Variable<double>&, const Ids&, std::int64_t);

}  // namespace attend
