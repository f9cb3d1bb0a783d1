// The autograd test suite's entry point (Boost.Test, linked as a shared library). Run one case with
//   build/tests/autograd/test_autograd --run_test=tape/reused_node_accumulates
#define BOOST_TEST_MODULE autograd
#include <boost/test/unit_test.hpp>
