// The fast test suite's entry point (Boost.Test, linked as a shared library): the fused ops of fast/ against their
// compositions of reference ops, and the kernels' accuracy. Run one case with
//   build/tests/fast/test_fast --run_test=fused/gru_cell_equals_composed
#define BOOST_TEST_MODULE fast
#include <boost/test/unit_test.hpp>
