// The plot test suite's entry point (Boost.Test, linked as a shared library).
#define BOOST_TEST_MODULE plot
#include <boost/test/unit_test.hpp>
