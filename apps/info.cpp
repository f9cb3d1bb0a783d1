// `attend info`: what a bug report or a benchmark needs to know about the machine and the build (as PyTorch's
// collect_env): the CPU and the features attend's kernels choose by, OpenBLAS's kernels and whether they fit the CPU,
// oneDNN, the kernel each precision's products run here, the fused kernels' clone, threads, the data folders and the
// build. --json: the same as one JSON object.
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "apps/commands.hpp"
#include "autograd/blas.hpp"
#include "data/locate.hpp"
#include "precision/precision.hpp"
#include "runtime/cpu.hpp"
#include "runtime/kernels.hpp"

namespace attend::app {

namespace {

using Json = nlohmann::ordered_json;  // the keys in the order they are written

Json cpu_json() {
  const CpuFeatures& cpu = cpu_features();
  Json features = Json::object();
  const std::pair<const char*, bool> named[] = {{"avx", cpu.avx},
                                                {"fma", cpu.fma},
                                                {"avx2", cpu.avx2},
                                                {"avx512", cpu.avx512},
                                                {"avx512_bf16", cpu.avx512_bf16},
                                                {"avx512_vnni", cpu.avx512_vnni},
                                                {"avx_vnni", cpu.avx_vnni},
                                                {"amx_bf16", cpu.amx_bf16},
                                                {"amx_int8", cpu.amx_int8},
                                                {"amx_granted", cpu.amx_granted}};
  for (const auto& [name, has] : named) features[name] = has;
  return {{"vendor", cpu.vendor}, {"name", cpu.name},     {"family", cpu.family},
          {"model", cpu.model},   {"features", features}, {"cores", std::thread::hardware_concurrency()}};
}

Json blas_json() {
  const BlasKernels kernels = blas_kernels();
  const char* threads = std::getenv("OPENBLAS_NUM_THREADS");
  return {{"config", kernels.config},
          {"core", kernels.core},
          {"coretype", kernels.coretype},
          {"fitting", kernels.fitting},
          {"why_unchanged", kernels.why_unchanged},
          {"replaced", kernels.replaced},
          {"threads", blas_threads()},
          {"OPENBLAS_NUM_THREADS", threads ? threads : ""}};
}

Json precisions_json() {
  Json all = Json::array();
  for (const PrecisionBackend& p : precisions()) {
    const std::string why = p.unavailable();
    all.push_back({{"name", p.name},
                   {"available", why.empty()},
                   {"kernel", why.empty() ? p.kernel() : ""},
                   {"why_unavailable", why}});
  }
  return all;
}

Json build_json() {
#if defined(__clang__)
  const std::string compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  const std::string compiler = "GCC " __VERSION__;
#else
  const std::string compiler = "unknown";
#endif
#ifdef ATTEND_MPI
  const bool mpi = true;
#else
  const bool mpi = false;
#endif
#ifdef ATTEND_SERVE
  const bool serve = true;
#else
  const bool serve = false;
#endif
#ifdef NDEBUG
  const bool assertions = false;
#else
  const bool assertions = true;
#endif
  return {{"version", ATTEND_VERSION},
          {"compiler", compiler},
          {"onednn", !onednn_description().empty()},
          {"mpi", mpi},
          {"serve", serve},
          {"assertions", assertions}};
}

Json info_json() {
  Json folders = Json::array();
  for (const data::DataFolder& folder : data::data_folders()) folders.push_back(folder.path);
  return {{"attend", build_json()},
          {"cpu", cpu_json()},
          {"openblas", blas_json()},
          {"onednn", onednn_description()},
          {"fused_kernels", kernels::clone()},
          {"precisions", precisions_json()},
          {"data_folders", folders}};
}

std::string yes(const Json& flag) { return flag.get<bool>() ? "yes" : "no"; }

void print_text(const Json& info) {
  const Json& cpu = info["cpu"];
  std::printf("attend %s, %s; oneDNN %s, Open MPI %s, serve %s\n", info["attend"]["version"].get<std::string>().c_str(),
              info["attend"]["compiler"].get<std::string>().c_str(), yes(info["attend"]["onednn"]).c_str(),
              yes(info["attend"]["mpi"]).c_str(), yes(info["attend"]["serve"]).c_str());
  std::printf("cpu: %s, %s family %u model %u, %u cores\n", cpu["name"].get<std::string>().c_str(),
              cpu["vendor"].get<std::string>().c_str(), cpu["family"].get<unsigned>(), cpu["model"].get<unsigned>(),
              cpu["cores"].get<unsigned>());
  std::string features;
  for (const auto& [name, has] : cpu["features"].items()) features += " " + name + (has.get<bool>() ? "" : "=no");
  std::printf("cpu features:%s\n", features.c_str());
  const Json& blas = info["openblas"];
  std::printf("openblas: %s; kernels %s%s; %d threads\n", blas["config"].get<std::string>().c_str(),
              blas["core"].get<std::string>().c_str(),
              blas["coretype"].get<std::string>().empty()
                  ? ""
                  : (" (OPENBLAS_CORETYPE=" + blas["coretype"].get<std::string>() + ")").c_str(),
              blas["threads"].get<int>());
  if (!blas["replaced"].get<std::string>().empty())
    std::printf("openblas: its %s kernels chosen by attend for this CPU, in place of its %s (cpu.hpp)\n",
                blas["core"].get<std::string>().c_str(), blas["replaced"].get<std::string>().c_str());
  if (!blas["fitting"].get<std::string>().empty())
    std::printf("openblas: this CPU fits its %s kernels, but running on them failed (said above)\n",
                blas["fitting"].get<std::string>().c_str());
  if (!blas["why_unchanged"].get<std::string>().empty())
    std::printf("openblas: older kernels than this CPU fits, kept: %s\n",
                blas["why_unchanged"].get<std::string>().c_str());
  std::printf("onednn: %s\n",
              info["onednn"].get<std::string>().empty() ? "not built in" : info["onednn"].get<std::string>().c_str());
  std::printf("fused kernels: the %s clone\n", info["fused_kernels"].get<std::string>().c_str());
  for (const Json& p : info["precisions"]) {
    const bool available = p["available"].get<bool>();
    std::printf("precision %s: %s\n", p["name"].get<std::string>().c_str(),
                (available ? p["kernel"] : p["why_unavailable"]).get<std::string>().c_str());
  }
  for (const Json& folder : info["data_folders"]) std::printf("data folder: %s\n", folder.get<std::string>().c_str());
}

}  // namespace

int run_info(const InfoOptions& options) {
  const Json info = info_json();
  if (options.json) {
    std::printf("%s\n", info.dump().c_str());
  } else {
    print_text(info);
  }
  return 0;
}

}  // namespace attend::app
