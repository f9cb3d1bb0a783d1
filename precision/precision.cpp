// The precisions by name (precision.hpp): the list of the backends — each its file beside this one, registered by its
// name in precision/meson.build, which generates precision_list.hpp — and what the backends built with oneDNN share.
#include "precision/precision.hpp"

#include <stdexcept>

#include "precision_list.hpp"  // generated: ATTEND_PRECISIONS(X), X(name) for each precision precision/meson.build lists

#if ATTEND_ONEDNN
#include <dnnl.hpp>

#endif

namespace attend {

#define ATTEND_DECLARE(name) PrecisionBackend name##_precision();
ATTEND_PRECISIONS(ATTEND_DECLARE)
#undef ATTEND_DECLARE

const std::vector<PrecisionBackend>& precisions() {
#define ATTEND_ENTRY(name) name##_precision(),
  static const std::vector<PrecisionBackend> all{ATTEND_PRECISIONS(ATTEND_ENTRY)};
#undef ATTEND_ENTRY
  return all;
}

const PrecisionBackend* find_precision(const std::string& name) {
  for (const PrecisionBackend& p : precisions()) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

std::vector<std::string> precision_names(bool training) {
  std::vector<std::string> names;
  for (const PrecisionBackend& p : precisions()) {
    if (p.trains || !training) names.emplace_back(p.name);
  }
  return names;
}

std::unique_ptr<Products> make_products(const std::string& name, const Matrices& weights) {
  const PrecisionBackend* precision = find_precision(name);
  if (precision == nullptr) {
    std::string known;
    for (const std::string& n : precision_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("precision " + name + ": no such precision (" + known + ")");
  }
  if (const std::string why = precision->unavailable(); !why.empty()) {
    throw std::runtime_error("precision " + name + ": " + why);
  }
  return precision->make(weights);
}

#if ATTEND_ONEDNN
namespace {

const char* isa_name(dnnl::cpu_isa isa) {
  using dnnl::cpu_isa;
  switch (isa) {
    case cpu_isa::sse41:
      return "sse41";
    case cpu_isa::avx:
      return "avx";
    case cpu_isa::avx2:
      return "avx2";
    case cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case cpu_isa::avx512_core:
      return "avx512_core";
    case cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "another";
  }
}

}  // namespace
#endif

std::string onednn_description() {
#if ATTEND_ONEDNN
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         ", instructions up to " + isa_name(dnnl::get_effective_cpu_isa());
#else
  return "";
#endif
}

}  // namespace attend
