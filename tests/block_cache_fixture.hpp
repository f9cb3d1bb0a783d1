// For a suite's main.cpp: tensors take their storage from the block cache, as in the programs (installed before the
// first tensor: see runtime/block_cache.hpp).
#pragma once

#include <boost/test/unit_test.hpp>

#include "runtime/block_cache.hpp"

struct UseBlockCache {
  UseBlockCache() { attend::use_block_cache(); }
};
BOOST_TEST_GLOBAL_FIXTURE(UseBlockCache);
