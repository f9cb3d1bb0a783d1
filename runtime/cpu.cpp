// The CPU's features (CPUID, XGETBV) and OpenBLAS's kernels (cpu.hpp).
#include "runtime/cpu.hpp"

#include <cblas.h>  // OpenBLAS's: openblas_get_config, openblas_get_corename
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace attend {

namespace {

#if defined(__x86_64__) || defined(__i386__)

struct Registers {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

Registers cpuid(unsigned leaf, unsigned subleaf = 0) {
  Registers r;
  if (!__get_cpuid_count(leaf, subleaf, &r.a, &r.b, &r.c, &r.d)) return {};
  return r;
}

bool bit(unsigned value, int n) { return ((value >> n) & 1u) != 0; }

// The register state the system saves (XCR0), or 0 when it does not say (no OSXSAVE).
std::uint64_t saved_state(const Registers& leaf1) {
  if (!bit(leaf1.c, 27)) return 0;
  unsigned low = 0, high = 0;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (std::uint64_t{high} << 32) | low;
}

// Whether Linux hands out the AMX tile data state (XTILEDATA, feature 18) to a process that asks for it, as oneDNN does
// before its first AMX kernel: the features its dynamic permission supports (ARCH_GET_XCOMP_SUPP), a query that
// changes nothing (asking, ARCH_REQ_XCOMP_PERM, would enlarge every signal frame of this process).
bool amx_permitted() {
#ifdef SYS_arch_prctl
  constexpr int supported_features = 0x1021, xtile_data = 18;
  std::uint64_t features = 0;
  return syscall(SYS_arch_prctl, supported_features, &features) == 0 && ((features >> xtile_data) & 1u) != 0;
#else
  return false;
#endif
}

std::string vendor_and_name(CpuFeatures& cpu) {
  const Registers zero = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor, &zero.b, 4), std::memcpy(vendor + 4, &zero.d, 4), std::memcpy(vendor + 8, &zero.c, 4);
  cpu.vendor = vendor;
  char brand[49] = {};
  if (cpuid(0x80000000).a >= 0x80000004) {
    for (unsigned k = 0; k < 3; ++k) {
      const Registers r = cpuid(0x80000002 + k);
      std::memcpy(brand + 16 * k, &r, 16);
    }
  }
  std::string name = brand;
  name.erase(0, name.find_first_not_of(' '));
  return name.substr(0, name.find_last_not_of(' ') + 1);
}

CpuFeatures read_features() {
  CpuFeatures cpu;
  cpu.name = vendor_and_name(cpu);
  const Registers one = cpuid(1), seven = cpuid(7, 0), seven_one = cpuid(7, 1);
  const unsigned base_family = (one.a >> 8) & 0xf, base_model = (one.a >> 4) & 0xf;
  cpu.family = base_family == 0xf ? base_family + ((one.a >> 20) & 0xff) : base_family;
  cpu.model = base_family == 0x6 || base_family == 0xf ? base_model + (((one.a >> 16) & 0xf) << 4) : base_model;
  const std::uint64_t state = saved_state(one);
  const bool ymm = (state & 0x6) == 0x6, zmm = ymm && (state & 0xe0) == 0xe0, tiles = (state & 0x60000) == 0x60000;
  cpu.avx = bit(one.c, 28) && ymm;
  cpu.fma = bit(one.c, 12) && ymm;
  cpu.avx2 = bit(seven.b, 5) && ymm;
  cpu.avx512 = bit(seven.b, 16) && bit(seven.b, 17) && bit(seven.b, 30) && bit(seven.b, 31) && zmm;
  cpu.avx512_vnni = cpu.avx512 && bit(seven.c, 11);
  cpu.avx512_bf16 = cpu.avx512 && bit(seven_one.a, 5);
  cpu.avx_vnni = bit(seven_one.a, 4) && ymm;
  cpu.amx_bf16 = bit(seven.d, 22) && bit(seven.d, 24) && tiles;
  cpu.amx_int8 = bit(seven.d, 25) && bit(seven.d, 24) && tiles;
  cpu.amx_granted = (cpu.amx_bf16 || cpu.amx_int8) && amx_permitted();
  return cpu;
}

#else

CpuFeatures read_features() { return {}; }

#endif

// How wide the vectors of an OpenBLAS core are: 4 AVX-512, 3 AVX2, 2 AVX, 1 older (SSE); 0 for a name not known here.
// Any case: a DYNAMIC_ARCH OpenBLAS says "Haswell", one built for a single core "HASWELL".
int vector_level(const std::string& core) {
  const auto is = [&core](const char* name) { return strcasecmp(core.c_str(), name) == 0; };
  for (const char* name : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (is(name)) return 4;
  for (const char* name : {"Haswell", "Zen"})
    if (is(name)) return 3;
  for (const char* name : {"Sandybridge", "Bulldozer", "Piledriver", "Steamroller", "Excavator"})
    if (is(name)) return 2;
  for (const char* name : {"Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Atom", "Core2", "Penryn",
                           "Dunnington", "Nehalem", "Athlon", "Opteron", "Opteron_SSE3", "Barcelona", "Nano", "Bobcat"})
    if (is(name)) return 1;
  return 0;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = read_features();
  return features;
}

BlasKernels fitting_blas_kernels(const std::string& config, const std::string& core, const std::string& coretype,
                                 const CpuFeatures& cpu) {
  BlasKernels kernels{config, core, coretype, "", "", ""};
  const int fits = cpu.avx512 ? 4 : cpu.avx2 && cpu.fma ? 3 : cpu.avx ? 2 : 1;
  const int runs = vector_level(core);
  if (config.rfind("OpenBLAS", 0) != 0) {
    kernels.why_unchanged = "the BLAS is not OpenBLAS: its kernels are its own";
  } else if (fits == 1 || runs >= fits) {
    return kernels;  // nothing to change
  } else if (runs == 0) {
    kernels.why_unchanged = "OpenBLAS's core " + core + " is not one attend knows";
  } else if (!coretype.empty()) {
    kernels.why_unchanged = "OPENBLAS_CORETYPE=" + coretype + " is set, and kept";
  } else if (config.find("DYNAMIC_ARCH") == std::string::npos) {
    kernels.why_unchanged = "this OpenBLAS is built for one core only (no DYNAMIC_ARCH)";
  } else {
    kernels.fitting = fits == 4 ? "SkylakeX" : fits == 3 ? "Haswell" : "Sandybridge";
  }
  return kernels;
}

BlasKernels blas_kernels() {
  const char* config = openblas_get_config();
  const char* core = openblas_get_corename();
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  const char* replaced = std::getenv("ATTEND_OPENBLAS_REPLACED");
  BlasKernels kernels =
      fitting_blas_kernels(config ? config : "", core ? core : "", coretype ? coretype : "", cpu_features());
  if (replaced != nullptr && coretype != nullptr) kernels.replaced = replaced;
  return kernels;
}

std::string blas_routine_kernels(const std::string& routine) {
  const BlasKernels kernels = blas_kernels();
  if (kernels.core.empty()) return "the BLAS's " + routine + " (not OpenBLAS)";
  return "OpenBLAS's " + routine + ", its " + kernels.core + " kernels";
}

void use_fitting_blas_kernels(char** argv) {
  if (argv == nullptr || argv[0] == nullptr) return;
  const BlasKernels kernels = blas_kernels();
  if (kernels.fitting.empty()) return;
  // started through the dynamic loader (ld.so ./attend …): /proc/self/exe is the loader, which would take the
  // program's first argument for the program
  char exe[4096] = {};
  if (readlink("/proc/self/exe", exe, sizeof exe - 1) < 0 || std::strstr(exe, "/ld-") != nullptr) return;
  const CpuFeatures& cpu = cpu_features();
  const char* slash = std::strrchr(argv[0], '/');
  const char* program = slash != nullptr ? slash + 1 : argv[0];
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (rank == nullptr || std::strcmp(rank, "0") == 0) {
    std::fprintf(stderr,
                 "%s: OpenBLAS does not know this CPU (%s family %u model %u) and chose its %s kernels; running again "
                 "with its %s kernels asked for (OPENBLAS_CORETYPE=%s; set OPENBLAS_CORETYPE to choose yourself)\n",
                 program, cpu.vendor.c_str(), cpu.family, cpu.model, kernels.core.c_str(), kernels.fitting.c_str(),
                 kernels.fitting.c_str());
  }
  setenv("OPENBLAS_CORETYPE", kernels.fitting.c_str(), 1);
  setenv("ATTEND_OPENBLAS_REPLACED", kernels.core.c_str(), 1);
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "%s: could not run again on OpenBLAS's %s kernels (%s); going on with its %s kernels\n", program,
               kernels.fitting.c_str(), std::strerror(errno), kernels.core.c_str());
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("ATTEND_OPENBLAS_REPLACED");
}

}  // namespace attend
