// Reading PyTorch reference values: tests/reference/data/<case>/<name>.npy, written by the scripts in
// tests/reference/ with Debian's python3-torch (float32 unless said otherwise). Committed, so CI needs no PyTorch.
#pragma once

#include <string>
#include <vector>
#include <xtensor/xnpy.hpp>

#include "autograd/tensor.hpp"

namespace attend::testing {

inline std::string reference_path(const std::string& case_name, const std::string& name) {
  return std::string(ATTEND_SOURCE_DIR) + "/tests/reference/data/" + case_name + "/" + name + ".npy";
}

// A float32 .npy array as a Tensor<T> (converted when T is double).
template <class T = float>
Tensor<T> load_reference(const std::string& case_name, const std::string& name) {
  const auto array = xt::load_npy<float>(reference_path(case_name, name));
  std::vector<std::size_t> dims(array.shape().begin(), array.shape().end());
  Tensor<T> t{Shape(dims)};
  std::copy(array.begin(), array.end(), t.data());
  return t;
}

// An int64 .npy array (token ids, lengths, targets).
inline Ids load_reference_ids(const std::string& case_name, const std::string& name) {
  const auto array = xt::load_npy<std::int64_t>(reference_path(case_name, name));
  std::vector<std::size_t> dims(array.shape().begin(), array.shape().end());
  Ids t{Shape(dims)};
  std::copy(array.begin(), array.end(), t.data());
  return t;
}

}  // namespace attend::testing
