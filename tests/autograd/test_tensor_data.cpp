// Tensors from outside data and back (autograd/tensor.hpp): from a pointer and a count, a vector, an iterator range,
// for values and for Ids, each checking the count against the shape; to_vector() out. Parameters given a value of a
// new shape (Parameter::assign resizes the gradient; a tape refuses a parameter whose gradient has another shape), and
// Rng::no_init for modules whose weights will be loaded. Reference: docs/reference/autograd.md.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <list>
#include <sstream>

#include "helpers.hpp"

using namespace attend;
using attend::testing::message_has;

BOOST_AUTO_TEST_SUITE(tensor_data)

BOOST_AUTO_TEST_CASE(a_tensor_copies_data_from_a_pointer_a_vector_or_a_range) {
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  const Tensor<float> from_pointer(Shape{2, 3}, values.data(), values.size());
  const Tensor<float> from_vector(Shape{2, 3}, values);
  const std::array<float, 6> array{1, 2, 3, 4, 5, 6};
  const Tensor<float> from_array(Shape{2, 3}, array.begin(), array.end());
  const std::list<float> list(values.begin(), values.end());  // not contiguous: copied element by element
  const Tensor<float> from_list(Shape{3, 2}, list.begin(), list.end());
  for (const Tensor<float>* t : {&from_pointer, &from_vector, &from_array}) {
    BOOST_TEST(t->shape() == (Shape{2, 3}));
    BOOST_TEST(t->to_vector() == values, boost::test_tools::per_element());
    BOOST_TEST(t->at({1, 0}) == 4.0f);  // row-major
  }
  BOOST_TEST(from_list.at({1, 0}) == 3.0f);
  // a copy, not a view
  std::vector<float> changing = values;
  const Tensor<float> copied(Shape{6}, changing);
  changing[0] = 100;
  BOOST_TEST(copied.at({0}) == 1.0f);
}

BOOST_AUTO_TEST_CASE(ids_and_doubles_take_data_the_same_way) {
  const std::vector<std::int64_t> tokens{3, 1, 4, 1, 5, 9};
  const Ids ids(Shape{2, 3}, tokens);
  BOOST_TEST(ids.to_vector() == tokens, boost::test_tools::per_element());
  const std::deque<int> small{7, 8};  // another element type: converted as std::copy converts
  const Ids converted(Shape{2}, small.begin(), small.end());
  BOOST_TEST(converted.at({1}) == 8);
  const double raw[] = {0.5, -0.25};
  const Tensor<double> d(Shape{1, 2}, raw, 2);
  BOOST_TEST(d.at({0, 1}) == -0.25);
}

BOOST_AUTO_TEST_CASE(a_count_that_differs_from_the_shape_throws_naming_both) {
  const std::vector<float> five(5, 1.0f);
  BOOST_CHECK_EXCEPTION(Tensor<float>(Shape{2, 3}, five), std::invalid_argument,
                        message_has({"shape (2,3) needs 6 values, got 5"}));
  BOOST_CHECK_EXCEPTION(Tensor<float>(Shape{2, 3}, five.data(), 7), std::invalid_argument,
                        message_has({"(2,3)", "needs 6 values, got 7"}));
  BOOST_CHECK_EXCEPTION(Ids(Shape{4}, std::vector<std::int64_t>{1, 2}), std::invalid_argument,
                        message_has({"(4,)", "got 2"}));
  BOOST_CHECK_EXCEPTION(Tensor<float>(Shape{2}, five.begin(), five.end()), std::invalid_argument,
                        message_has({"needs 2 values, got 5"}));
  // an empty shape takes no values, and a null pointer with count 0 is fine
  const Tensor<float> empty(Shape{0, 3}, nullptr, 0);
  BOOST_TEST(empty.size() == 0u);
  BOOST_TEST(empty.to_vector().empty());
}

BOOST_AUTO_TEST_CASE(assign_gives_a_parameter_a_new_shape_with_a_zero_gradient) {
  Parameter<double> p(Tensor<double>(Shape{2, 2}, {1, 2, 3, 4}));
  p.grad = Tensor<double>(Shape{2, 2}, {9, 9, 9, 9});
  p.assign(Tensor<double>(Shape{3}, {5, 6, 7}));
  BOOST_TEST(p.value.shape() == Shape{3});
  BOOST_TEST(p.grad.shape() == Shape{3});
  BOOST_TEST(p.grad.to_vector() == std::vector<double>(3, 0.0), boost::test_tools::per_element());
  // and the tape takes it and fills a gradient of the new shape
  Tape<double> tape;
  const Variable<double> y = sum(tape.param(p) * tape.param(p));
  tape.backward(y);
  BOOST_TEST(p.grad.to_vector() == (std::vector<double>{10, 12, 14}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_tape_refuses_a_parameter_whose_gradient_kept_the_old_shape) {
  Parameter<float> p(Tensor<float>(Shape{2, 2}));
  p.value = Tensor<float>(Shape{2, 3});  // written directly: the gradient is still (2, 2)
  Tape<float> tape;
  BOOST_CHECK_EXCEPTION(tape.param(p), std::logic_error,
                        message_has({"Tape::param", "value is (2,3)", "gradient is (2,2)", "Parameter::assign"}));
}

BOOST_AUTO_TEST_CASE(no_init_draws_zeros_for_tensors_and_numbers_as_seed_0) {
  Rng none = Rng::no_init();
  const Tensor<float> u = none.uniform_tensor<float>(Shape{3, 4}, -1.0, 1.0);
  const Tensor<double> n = none.normal_tensor<double>(Shape{5}, 0.0, 1.0);
  BOOST_TEST(u.shape() == (Shape{3, 4}));
  BOOST_TEST(u.to_vector() == std::vector<float>(12, 0.0f), boost::test_tools::per_element());
  BOOST_TEST(n.to_vector() == std::vector<double>(5, 0.0), boost::test_tools::per_element());
  Rng seed0(0);  // the tensors drew nothing: scalar draws go on as from a fresh Rng(0)
  BOOST_TEST(none.next() == seed0.next());
  BOOST_TEST(none.uniform() == seed0.uniform());
}

// Rng::below(n): every value of [0, n) about equally often, the same numbers from the same seed, and the draws that
// would favour small values redrawn: for n = 3·2^62 (2^64 mod n = 2^62, a quarter of the draws), a draw of next()
// below 2^62 is never taken as it is.
BOOST_AUTO_TEST_CASE(below_draws_whole_numbers_evenly) {
  Rng rng(5), again(5);
  std::vector<int> counts(7, 0);
  for (int k = 0; k < 70000; ++k) {
    const std::size_t v = rng.below(7);
    BOOST_TEST_REQUIRE(v < 7u);
    ++counts[v];
    BOOST_TEST_REQUIRE(again.below(7) == v);
  }
  for (const int c : counts) BOOST_TEST(std::abs(c - 10000) < 400, c);  // 4 standard deviations
  BOOST_TEST(Rng(9).below(1) == 0u);
  const std::size_t n = 3 * (std::size_t{1} << 62);
  Rng raw(11), drawn(11);
  for (int k = 0; k < 2000; ++k) {
    std::uint64_t r = raw.next();
    while (r < (std::uint64_t{1} << 62)) r = raw.next();
    BOOST_TEST_REQUIRE(drawn.below(n) == r % n);
  }
  BOOST_CHECK_EXCEPTION(Rng(1).below(0), std::invalid_argument, message_has({"Rng::below", "n = 0"}));
}

// The reference engine alone (no runtime/ block cache installed in this suite): storage straight from the system,
// 64-byte aligned; once storage is taken, only the same source may be installed again.
BOOST_AUTO_TEST_CASE(storage_comes_from_the_system_until_a_source_is_installed) {
  const Tensor<float> a(Shape{3}), b(Shape{1000});
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(a.data()) % 64 == 0u);
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(b.data()) % 64 == 0u);
  const StorageSource system = storage_source();
  set_storage_source(system);  // the same source again: harmless
  auto other = [](std::size_t bytes) { return std::aligned_alloc(64, (bytes + 63) / 64 * 64); };
  BOOST_CHECK_EXCEPTION(set_storage_source({other, system.deallocate}), std::logic_error,
                        message_has({"set_storage_source", "before the first tensor"}));
}

BOOST_AUTO_TEST_SUITE_END()
