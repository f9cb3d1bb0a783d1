// Choosing by value along the last axis: argmax and topk, on a tensor or on a Variable's value. They read values and
// return positions, so nothing is recorded on the tape and no gradient flows through them (as torch.argmax and the
// indices of torch.topk). A decoder's next token, a classifier's answer, a beam's k best continuations.
#pragma once

#include <cstddef>

#include "autograd/tape.hpp"
#include "autograd/tensor.hpp"

namespace attend {

// The position of the largest element along the last axis: shape x.shape() without its last axis (a vector gives a
// scalar). The first of equal largest elements is taken, and NaN counts as larger than every number (as torch.argmax).
// std::invalid_argument for a scalar or an empty last axis.
template <class T>
Ids argmax(const Tensor<T>& x);
template <class T>
Ids argmax(const Variable<T>& x) {
  return argmax(x.value());
}

// The k largest elements along the last axis and their positions, largest first: shapes x.shape() with the last axis
// k. Equal elements come in the order of their positions, NaN first (so k = 1 gives argmax's position).
template <class T>
struct TopK {
  Tensor<T> values;
  Ids indices;
};
// std::invalid_argument for a scalar, k = 0 or k larger than the last axis.
template <class T>
TopK<T> topk(const Tensor<T>& x, std::size_t k);
template <class T>
TopK<T> topk(const Variable<T>& x, std::size_t k) {
  return topk(x.value(), k);
}

}  // namespace attend
