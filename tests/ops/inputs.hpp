// Inputs the ops suite's tests share: tensors with values where the kernels are hardest, the ragged batches of the
// recurrences, the masks of the attention cases, and conversions between the two scalar types.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ops/fused.hpp"
#include "tests/autograd/helpers.hpp"

namespace attend::testing {

// Uniform in [-2, 2), with every 5th element shrunk to near zero (×1e-3) and every 7th stretched to a large magnitude
// (×4, up to ±8, where σ and tanh saturate).
inline Tensor<double> mixed_tensor(const Shape& shape, std::uint64_t seed) {
  Tensor<double> t = random_tensor(shape, seed);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i % 5 == 1) t.data()[i] *= 1e-3;
    if (i % 7 == 3) t.data()[i] *= 4.0;
  }
  return t;
}

template <class T>
Tensor<T> converted(const Tensor<double>& t) {
  Tensor<T> out(t.shape(), uninitialized);
  for (std::size_t i = 0; i < t.size(); ++i) out.data()[i] = static_cast<T>(t.data()[i]);
  return out;
}

template <class T>
std::vector<double> elements(const Tensor<T>& t) {
  return std::vector<double>(t.data(), t.data() + t.size());
}

// Batches of 4 sequences of 5 steps: all real; ragged with a row of every step and a row of none; each direction.
inline std::vector<Recurrence> recurrences() {
  return {Recurrence{{}, false}, Recurrence{{}, true}, Recurrence{{5, 2, 0, 3}, false}, Recurrence{{5, 2, 0, 3}, true}};
}

inline std::string describe(const Recurrence& r) {
  std::string s = r.reverse ? "reverse" : "forward";
  for (const std::int64_t len : r.lengths) s += " " + std::to_string(len);
  return s;
}

inline Mask padding(const std::vector<std::vector<std::uint8_t>>& rows) {
  Mask m(Shape{rows.size(), rows.front().size()});
  for (std::size_t b = 0; b < rows.size(); ++b)
    for (std::size_t k = 0; k < rows[b].size(); ++k) m.at({b, k}) = rows[b][k];
  return m;
}

// Option sets the attention tests go through (B 2, T_q = T_k = 4): plain, padding, causal, both, one head and three.
inline std::vector<std::pair<std::string, AttentionOptions>> attention_cases() {
  std::vector<std::pair<std::string, AttentionOptions>> cases;
  AttentionOptions o;
  o.heads = 2;
  cases.emplace_back("2 heads", o);
  o.key_padding = padding({{1, 1, 1, 1}, {1, 1, 0, 0}});
  cases.emplace_back("2 heads, padding", o);
  o.key_padding = Mask();
  o.causal = true;
  cases.emplace_back("2 heads, causal", o);
  o.key_padding = padding({{1, 1, 1, 0}, {1, 0, 1, 1}});
  cases.emplace_back("2 heads, causal and padding", o);
  o.heads = 1;
  cases.emplace_back("1 head, causal and padding", o);
  return cases;
}

}  // namespace attend::testing
