// The precision test suite's entry point (Boost.Test, linked as a shared library): every precision's products against
// float32's and against their own definition, side by side on threads, and their copies of the weights. Run one case
// with
//   build/tests/precision/test_precision --run_test=precision/...
#define BOOST_TEST_MODULE precision
#include "tests/block_cache_fixture.hpp"
