// For the main.cpp of a suite that starts the attend program: OpenBLAS on the kernels that fit this CPU, as in the
// program (runtime/cpu.hpp). On a CPU OpenBLAS does not know, the suite runs itself again with OPENBLAS_CORETYPE set
// before its first case: it then multiplies on the kernels the programs it starts multiply on, and they, inheriting
// the setting, keep it and print nothing about it (the tests read their standard error line by line). It runs again
// with its whole command line as started, read from /proc/self/cmdline: Boost.Test's argv has its own flags (the
// loggers, the report level) taken out.
#pragma once

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "runtime/cpu.hpp"

struct UseFittingBlasKernels {
  UseFittingBlasKernels() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    const std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> words;
    for (std::size_t at = 0; at < line.size();) {
      const std::size_t end = line.find('\0', at);
      words.push_back(line.substr(at, end - at));
      at = end == std::string::npos ? line.size() : end + 1;
    }
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    attend::use_fitting_blas_kernels(argv.data());
  }
};
BOOST_TEST_GLOBAL_FIXTURE(UseFittingBlasKernels);
