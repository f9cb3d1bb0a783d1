// The cli test suite's entry point (Boost.Test, linked as a shared library).
#define BOOST_TEST_MODULE cli
#include <boost/test/unit_test.hpp>

#include "tests/fitting_kernels_fixture.hpp"
