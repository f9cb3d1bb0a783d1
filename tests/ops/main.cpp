// The ops test suite's entry point (Boost.Test, linked as a shared library): the fused ops against their compositions
// of reference ops, their gradients, the image ops, argmax and topk. Run one case with
//   build/tests/ops/test_ops --run_test=fused/gru_cell_equals_composed
#define BOOST_TEST_MODULE ops
#include "tests/block_cache_fixture.hpp"
