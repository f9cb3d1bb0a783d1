// For the main.cpp of a suite that starts the attend program: OpenBLAS on the kernels that fit this CPU, as in the
// program (runtime/cpu.hpp). On a CPU OpenBLAS does not know, the suite runs itself again with OPENBLAS_CORETYPE set
// before its first case: it then multiplies on the kernels the programs it starts multiply on, and they, inheriting
// the setting, keep it and print nothing about it (the tests read their standard error line by line).
#pragma once

#include <boost/test/unit_test.hpp>

#include "runtime/cpu.hpp"

struct UseFittingBlasKernels {
  UseFittingBlasKernels() { attend::use_fitting_blas_kernels(boost::unit_test::framework::master_test_suite().argv); }
};
BOOST_TEST_GLOBAL_FIXTURE(UseFittingBlasKernels);
