// Tests of argmax and topk along the last axis (ops/select.hpp): on tensors of every rank with many ties and some
// NaNs, each row against an order written out independently here (every position, sorted by value with NaN first,
// equal values by position); k = 1 equals argmax; nothing is recorded on the tape; bad k and scalars throw naming
// the op.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autograd.hpp"
#include "ops/select.hpp"

using namespace attend;

namespace {

// Values from a few levels, so that ties are common, and NaN now and then.
Tensor<double> tied(const Shape& shape, Rng& rng) {
  Tensor<double> x(shape);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double u = rng.uniform();
    x.data()[i] = u < 0.05 ? std::numeric_limits<double>::quiet_NaN() : std::floor(rng.uniform(-3, 3));
  }
  return x;
}

// A row's positions in the order the ops promise, by a full stable sort.
std::vector<std::size_t> expected_order(const double* row, std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [row](std::size_t a, std::size_t b) {
    const bool na = std::isnan(row[a]), nb = std::isnan(row[b]);
    if (na || nb) return na && !nb;
    return row[a] > row[b];
  });
  return order;
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

}  // namespace

BOOST_AUTO_TEST_SUITE(selection)

BOOST_AUTO_TEST_CASE(argmax_and_topk_agree_with_a_full_stable_sort_on_every_rank) {
  Rng rng(7);
  for (const Shape& shape : {Shape{9}, Shape{4, 7}, Shape{3, 2, 5}, Shape{2, 3, 2, 6}, Shape{5, 1}}) {
    const Tensor<double> x = tied(shape, rng);
    const std::size_t n = shape[shape.rank() - 1], rows = x.size() / n;
    const Ids best = argmax(x);
    BOOST_TEST(best.shape().rank() == shape.rank() - 1);
    BOOST_TEST(best.size() == rows);
    for (std::size_t k = 1; k <= n; ++k) {
      const TopK<double> top = topk(x, k);
      BOOST_TEST(top.values.shape()[shape.rank() - 1] == k);
      BOOST_TEST(top.indices.shape()[shape.rank() - 1] == k);
      for (std::size_t r = 0; r < rows; ++r) {
        const std::vector<std::size_t> order = expected_order(x.data() + r * n, n);
        if (k == 1) BOOST_TEST(best.data()[r] == static_cast<std::int64_t>(order[0]), "argmax of row " << r);
        for (std::size_t j = 0; j < k; ++j) {
          BOOST_TEST(top.indices.data()[r * k + j] == static_cast<std::int64_t>(order[j]),
                     "row " << r << ", k " << k << ", place " << j);
          BOOST_TEST(same(top.values.data()[r * k + j], x.data()[r * n + order[j]]));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(the_first_of_equal_maxima_is_taken_and_nan_counts_as_largest) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor<double> x(Shape{3, 4}, {1, 5, 5, 2, 0, nan, 3, nan, -1, -1, -1, -1});
  const Ids best = argmax(x);
  BOOST_TEST(best.data()[0] == 1);
  BOOST_TEST(best.data()[1] == 1);
  BOOST_TEST(best.data()[2] == 0);
  const TopK<float> top = topk(Tensor<float>(Shape{5}, {0.5f, 2.f, -1.f, 2.f, 7.f}), 3);
  BOOST_TEST(top.indices.data()[0] == 4);
  BOOST_TEST(top.indices.data()[1] == 1);
  BOOST_TEST(top.indices.data()[2] == 3);
  BOOST_TEST(top.values.data()[0] == 7.f);
  BOOST_TEST(top.indices.shape().rank() == 1u);
  BOOST_TEST(argmax(Tensor<float>(Shape{5}, {0.5f, 2.f, -1.f, 2.f, 7.f})).shape().rank() == 0u);  // a scalar
}

BOOST_AUTO_TEST_CASE(a_variable_is_read_and_nothing_is_recorded) {
  Tape<float> tape;
  const Variable<float> logits = tape.constant(Tensor<float>(Shape{2, 3}, {0.f, 4.f, 1.f, 9.f, -2.f, 3.f}));
  const std::size_t nodes = tape.size();
  BOOST_TEST(argmax(logits).data()[0] == 1);
  BOOST_TEST(argmax(logits).data()[1] == 0);
  BOOST_TEST(topk(logits, 2).indices.data()[3] == 2);
  BOOST_TEST(tape.size() == nodes);
}

BOOST_AUTO_TEST_CASE(bad_k_and_scalars_are_refused_naming_the_op) {
  const Tensor<float> x(Shape{2, 3});
  for (const std::size_t k : {std::size_t{0}, std::size_t{4}}) {
    BOOST_CHECK_EXCEPTION(topk(x, k), std::invalid_argument, [k](const std::invalid_argument& e) {
      return std::string(e.what()) == "topk: k = " + std::to_string(k) + " for a last axis of 3 (1 ≤ k ≤ 3)";
    });
  }
  BOOST_CHECK_EXCEPTION(argmax(Tensor<float>(Shape{})), std::invalid_argument,
                        [](const std::invalid_argument& e) { return std::string(e.what()).rfind("argmax:", 0) == 0; });
  BOOST_CHECK_EXCEPTION(argmax(Tensor<float>(Shape{3, 0})), std::invalid_argument, [](const std::invalid_argument& e) {
    return std::string(e.what()) == "argmax: the last axis is empty";
  });
}

BOOST_AUTO_TEST_SUITE_END()
