// The CPU's features and the choice of OpenBLAS's kernels (runtime/cpu.hpp): on a CPU OpenBLAS does not know (an
// Emerald Rapids Xeon, which Debian's OpenBLAS 0.3.21 runs on its Prescott kernels) the kernels that fit it are
// chosen; an OPENBLAS_CORETYPE already set, a BLAS that is not OpenBLAS, an OpenBLAS built for one core and a core
// attend does not know are reported and left alone; a CPU whose core fits changes nothing. And this machine's
// features agree with what Linux says of the CPU (/proc/cpuinfo).
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/cpu.hpp"

using namespace attend;

namespace {

const std::string dynamic = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Prescott MAX_THREADS=64";

CpuFeatures emerald_rapids() {
  CpuFeatures cpu;
  cpu.vendor = "GenuineIntel", cpu.family = 6, cpu.model = 207;
  cpu.avx = cpu.fma = cpu.avx2 = cpu.avx512 = cpu.avx512_bf16 = cpu.avx512_vnni = cpu.avx_vnni = true;
  cpu.amx_bf16 = cpu.amx_int8 = true;
  return cpu;
}

CpuFeatures avx2_only() {
  CpuFeatures cpu;
  cpu.vendor = "AuthenticAMD", cpu.family = 23, cpu.model = 49;
  cpu.avx = cpu.fma = cpu.avx2 = true;
  return cpu;
}

// The value of a "name : value" line of /proc/cpuinfo's first processor ("" when there is none).
std::string cpuinfo(const std::string& name) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key == name) return colon + 2 <= line.size() ? line.substr(colon + 2) : "";
  }
  return "";
}

bool has_flag(const std::string& flag) {
  std::istringstream flags(" " + cpuinfo("flags") + " ");
  for (std::string f; flags >> f;)
    if (f == flag) return true;
  return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cpu)

BOOST_AUTO_TEST_CASE(an_unknown_cpu_gets_the_kernels_that_fit_it) {
  const BlasKernels fix = fitting_blas_kernels(dynamic, "Prescott", "", emerald_rapids());
  BOOST_TEST(fix.fitting == "SkylakeX");
  BOOST_TEST(fix.why_unchanged == "");
  BOOST_TEST(fitting_blas_kernels(dynamic, "Prescott", "", avx2_only()).fitting == "Haswell");
  CpuFeatures avx = avx2_only();
  avx.avx2 = avx.fma = false;
  BOOST_TEST(fitting_blas_kernels(dynamic, "Nehalem", "", avx).fitting == "Sandybridge");
  BOOST_TEST(fitting_blas_kernels(dynamic, "Haswell", "", emerald_rapids()).fitting == "SkylakeX");  // AVX2 of 512
}

BOOST_AUTO_TEST_CASE(a_cpu_whose_core_fits_changes_nothing) {
  for (const auto& [core, cpu] : {std::pair{"Zen", avx2_only()}, std::pair{"Haswell", avx2_only()},
                                  std::pair{"SkylakeX", emerald_rapids()}, std::pair{"Cooperlake", emerald_rapids()}}) {
    const BlasKernels kernels = fitting_blas_kernels(dynamic, core, "", cpu);
    BOOST_TEST(kernels.fitting == "", core);
    BOOST_TEST(kernels.why_unchanged == "", core);
    BOOST_TEST(kernels.core == core);
  }
  CpuFeatures old;  // no AVX at all: every core fits
  BOOST_TEST(fitting_blas_kernels(dynamic, "Prescott", "", old).fitting == "");
}

BOOST_AUTO_TEST_CASE(what_cannot_or_must_not_change_is_reported) {
  const CpuFeatures cpu = emerald_rapids();
  const BlasKernels set = fitting_blas_kernels(dynamic, "Prescott", "Prescott", cpu);
  BOOST_TEST(set.fitting == "");
  BOOST_TEST(set.why_unchanged == "OPENBLAS_CORETYPE=Prescott is set, and kept");
  const BlasKernels other = fitting_blas_kernels("", "", "", cpu);
  BOOST_TEST(other.fitting == "");
  BOOST_TEST(other.why_unchanged == "the BLAS is not OpenBLAS: its kernels are its own");
  // an OpenBLAS built for one core names it in capitals
  const BlasKernels single =
      fitting_blas_kernels("OpenBLAS 0.3.21 NO_LAPACKE NO_AFFINITY HASWELL MAX_THREADS=64", "HASWELL", "", cpu);
  BOOST_TEST(single.fitting == "");
  BOOST_TEST(single.why_unchanged == "this OpenBLAS is built for one core only (no DYNAMIC_ARCH)");
  BOOST_TEST(fitting_blas_kernels("OpenBLAS 0.3.21 HASWELL", "HASWELL", "", avx2_only()).why_unchanged == "");
  const BlasKernels unknown = fitting_blas_kernels(dynamic, "NeoverseN1", "", cpu);
  BOOST_TEST(unknown.fitting == "");
  BOOST_TEST(unknown.why_unchanged == "OpenBLAS's core NeoverseN1 is not one attend knows");
  BOOST_TEST(fitting_blas_kernels(dynamic, "NeoverseN1", "", CpuFeatures{}).why_unchanged == "");  // nothing wider
}

// This machine: CPUID and /proc/cpuinfo agree on the vendor, family, model and the features the kernels choose by;
// OpenBLAS is the BLAS linked in and names its core.
BOOST_AUTO_TEST_CASE(this_machine_as_linux_sees_it) {
  const CpuFeatures& cpu = cpu_features();
  BOOST_TEST(cpu.vendor == cpuinfo("vendor_id"));
  BOOST_TEST(std::to_string(cpu.family) == cpuinfo("cpu family"));
  BOOST_TEST(std::to_string(cpu.model) == cpuinfo("model"));
  BOOST_TEST(cpu.avx == has_flag("avx"));
  BOOST_TEST(cpu.fma == has_flag("fma"));
  BOOST_TEST(cpu.avx2 == has_flag("avx2"));
  BOOST_TEST(cpu.avx512 ==
             (has_flag("avx512f") && has_flag("avx512dq") && has_flag("avx512bw") && has_flag("avx512vl")));
  BOOST_TEST(cpu.avx512_bf16 == (cpu.avx512 && has_flag("avx512_bf16")));
  BOOST_TEST(cpu.avx512_vnni == (cpu.avx512 && has_flag("avx512_vnni")));
  BOOST_TEST(cpu.amx_bf16 == (has_flag("amx_bf16") && has_flag("amx_tile")));
  const BlasKernels kernels = blas_kernels();
  BOOST_TEST(kernels.config.rfind("OpenBLAS", 0) == 0u, kernels.config);
  BOOST_TEST(!kernels.core.empty());
  BOOST_TEST(blas_routine_kernels("sgemm") == "OpenBLAS's sgemm, its " + kernels.core + " kernels");
}

BOOST_AUTO_TEST_SUITE_END()
