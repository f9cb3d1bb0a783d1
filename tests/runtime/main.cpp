// The runtime test suite's entry point (Boost.Test, linked as a shared library): the block cache and the vectorised
// kernels' accuracy. Run one case with
//   build/tests/runtime/test_runtime --run_test=kernels/...
#define BOOST_TEST_MODULE runtime
#include "tests/block_cache_fixture.hpp"
