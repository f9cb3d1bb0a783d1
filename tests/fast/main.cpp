// The fast test suite's entry point (Boost.Test, linked as a shared library): the fused ops of fast/ against their
// compositions of reference ops, the kernels' accuracy, the block cache. Run one case with
//   build/tests/fast/test_fast --run_test=fused/gru_cell_equals_composed
#define BOOST_TEST_MODULE fast
#include <boost/test/unit_test.hpp>

#include "fast/block_cache.hpp"

// Tensors take their storage from the block cache, as in the programs (before the first tensor: see block_cache.hpp).
struct UseBlockCache {
  UseBlockCache() { attend::use_block_cache(); }
};
BOOST_TEST_GLOBAL_FIXTURE(UseBlockCache);
