// Test cases that run a precision's arithmetic (bf16, int8) run only where that precision is available, and are
// reported skipped elsewhere, never passed: `*needs_precision("bf16")` on a test case is a Boost precondition whose
// message, "needs precision bf16: <why>", is the reason the precision gives (precision/precision.hpp: unavailable()).
// scripts/test_summary.py lists such skips with their reason; .ci/allowed-skips says which of them CI accepts, and on
// which CPUs (only one that lacks the instructions named).
#pragma once

#include <boost/test/unit_test.hpp>
#include <string>

#include "precision/precision.hpp"
#include "runtime/cpu.hpp"

namespace attend::test {

struct PrecisionPrecondition {
  std::string name;
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    const PrecisionBackend* precision = find_precision(name);
    const std::string why = precision ? precision->unavailable() : "no such precision";
    boost::test_tools::assertion_result result(why.empty());
    if (!why.empty()) result.message() << "needs precision " << name << ": " << why;
    return result;
  }
};

// The decorator: the test case runs only where precision `name` can be used.
inline boost::unit_test::decorator::precondition needs_precision(const std::string& name) {
  return boost::unit_test::decorator::precondition(PrecisionPrecondition{name});
}

// `*needs_cpu("amx_int8")` (or "amx_bf16"): the test case runs only where the CPU has those AMX tiles and Linux grants
// them to the process (runtime/cpu.hpp), and is reported skipped elsewhere with "needs amx_int8: …".
struct CpuPrecondition {
  std::string flag;
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    const CpuFeatures& cpu = cpu_features();
    std::string why;
    if (flag != "amx_int8" && flag != "amx_bf16") {
      why = "no such feature";
    } else if (!(flag == "amx_int8" ? cpu.amx_int8 : cpu.amx_bf16)) {
      why = "this CPU has no " + flag + " tiles";
    } else if (!cpu.amx_granted) {
      why = "Linux does not grant this process the AMX tiles";
    }
    boost::test_tools::assertion_result result(why.empty());
    if (!why.empty()) result.message() << "needs " << flag << ": " << why;
    return result;
  }
};

inline boost::unit_test::decorator::precondition needs_cpu(const std::string& flag) {
  return boost::unit_test::decorator::precondition(CpuPrecondition{flag});
}

}  // namespace attend::test
