// The registry of weights' copies that the bfloat16 and int8 products look up by address
// (precision/weight_registry.hpp): a range of floats is found when one registered matrix holds all of it — the matrix's
// first number to its last — and not when it reaches past the matrix's end, starts before it, or lies between two
// matrices.
#include <boost/test/unit_test.hpp>
#include <memory>
#include <vector>

#include "precision/weight_registry.hpp"

using namespace attend;

namespace {

struct FakeCopy {
  std::size_t floats;
  std::size_t size() const { return floats; }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(weight_registry)

BOOST_AUTO_TEST_CASE(a_range_is_found_only_inside_one_registered_matrix) {
  std::vector<float> memory(100);
  const float* m = memory.data();
  WeightRegistry<FakeCopy> registry;
  const auto first = std::make_shared<FakeCopy>(FakeCopy{20});   // floats 10 … 29
  const auto second = std::make_shared<FakeCopy>(FakeCopy{10});  // floats 40 … 49
  BOOST_TEST(registry.add(m + 10, first));
  BOOST_TEST(registry.add(m + 40, second));

  const auto found = [&](std::size_t begin, std::size_t end) { return registry.find(m + begin, m + end); };
  BOOST_TEST((found(10, 30).first == m + 10 && found(10, 30).second == first));  // the whole matrix
  BOOST_TEST((found(15, 18).second == first));                                   // a block of it
  BOOST_TEST((found(29, 30).second == first));                                   // its last number
  BOOST_TEST((found(45, 50).first == m + 40 && found(45, 50).second == second));
  BOOST_TEST((found(25, 31).second == nullptr));  // one float past its end
  BOOST_TEST((found(30, 31).second == nullptr));  // just after it
  BOOST_TEST((found(5, 12).second == nullptr));   // starting before it
  BOOST_TEST((found(0, 1).second == nullptr));    // before every matrix
  BOOST_TEST((found(32, 35).second == nullptr));  // between the two
  BOOST_TEST((found(25, 45).second == nullptr));  // from one into the next
  BOOST_TEST((found(50, 51).second == nullptr));  // after the last
  BOOST_TEST((found(25, 31).first == nullptr));
}

BOOST_AUTO_TEST_CASE(a_key_holds_one_copy_until_removed) {
  std::vector<float> memory(8);
  WeightRegistry<FakeCopy> registry;
  const auto copy = std::make_shared<FakeCopy>(FakeCopy{8});
  BOOST_TEST(registry.add(memory.data(), copy));
  BOOST_TEST(!registry.add(memory.data(), std::make_shared<FakeCopy>(FakeCopy{4})));  // unchanged
  BOOST_TEST((registry.find(memory.data(), memory.data() + 8).second == copy));
  registry.remove(memory.data());
  BOOST_TEST((registry.find(memory.data(), memory.data() + 1).second == nullptr));
  BOOST_TEST(registry.add(memory.data(), copy));  // free again
}

BOOST_AUTO_TEST_SUITE_END()
