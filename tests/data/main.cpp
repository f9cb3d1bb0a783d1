// The data test suite's entry point (Boost.Test, linked as a shared library).
#define BOOST_TEST_MODULE data
#include <boost/test/unit_test.hpp>
