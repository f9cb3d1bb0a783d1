// Small helpers shared by the autograd tests: deterministic inputs, element-by-element comparisons that name the
// failing element, exception-message predicates, and the gradient-check assertion.
#pragma once

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/autograd.hpp"

namespace attend::testing {

using Vars = std::vector<Variable<double>>;
using float_types = std::tuple<float, double>;  // for BOOST_AUTO_TEST_CASE_TEMPLATE over both scalar types

// Deterministic inputs with negatives, values near zero and larger magnitudes: uniform in [low, high).
inline Tensor<double> random_tensor(const Shape& shape, std::uint64_t seed, double low = -2.0, double high = 2.0) {
  Rng rng(seed);
  return rng.uniform_tensor<double>(shape, low, high);
}

// t with every element moved to at least `margin` away from 0 (keeping its sign): inputs for relu, division, 1/x.
inline Tensor<double> away_from_zero(Tensor<double> t, double margin) {
  for (auto& v : t.flat()) {
    if (std::abs(v) < margin) v = v < 0 ? v - margin : v + margin;
  }
  return t;
}

// Whether `actual` has `shape` and, element by element, |actual - expected| <= tol · max(1, |expected|).
// tol = 0 asks for exact equality. On failure the message names the first differing element.
template <class T>
boost::test_tools::predicate_result values_are(const Tensor<T>& actual, const Shape& shape,
                                               const std::vector<double>& expected, double tol = 0) {
  boost::test_tools::predicate_result result(true);
  if (actual.shape() != shape || actual.size() != expected.size()) {
    result = false;
    result.message() << "shape " << to_string(actual.shape()) << ", expected " << to_string(shape);
    return result;
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double a = static_cast<double>(actual.data()[i]);
    if (!(std::abs(a - expected[i]) <= tol * std::max(1.0, std::abs(expected[i])))) {
      result = false;
      result.message() << "flat element " << i << ": got " << a << ", expected " << expected[i];
      return result;
    }
  }
  return result;
}

// A predicate for BOOST_CHECK_EXCEPTION, whatever the exception type: the message contains every one of `parts`
// (typically the op and the shapes, or the file and the tensor).
inline std::function<bool(const std::exception&)> message_has(std::vector<std::string> parts) {
  return [parts](const std::exception& e) {
    const std::string what = e.what();
    bool all = true;
    for (const auto& part : parts) {
      const bool found = what.find(part) != std::string::npos;
      BOOST_TEST(found, "message \"" << what << "\" does not contain \"" << part << "\"");
      all = all && found;
    }
    return all;
  };
}

// Whether every element is finite (no NaN, no ±inf).
template <class T>
boost::test_tools::predicate_result all_finite(const Tensor<T>& t) {
  boost::test_tools::predicate_result result(true);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!std::isfinite(static_cast<double>(t.data()[i]))) {
      result = false;
      result.message() << "flat element " << i << " is " << t.data()[i];
      return result;
    }
  }
  return result;
}

// BOOST_TEST(...) of a gradient check, printing the checker's message on failure. Declare f and the inputs as
// variables first: braces and lambdas with commas would be split by the preprocessor.
#define ATTEND_CHECK_GRADIENTS(f, inputs, ...)                                               \
  do {                                                                                       \
    const ::attend::GradcheckResult result_ = ::attend::gradcheck(f, inputs, ##__VA_ARGS__); \
    BOOST_TEST(result_.passed, result_.message);                                             \
    BOOST_TEST(result_.checked > 0u);                                                        \
  } while (0)

}  // namespace attend::testing
