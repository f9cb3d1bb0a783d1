// The registry of the `attend` program's model kinds (model.hpp). Adding a kind: its file in apps/model_kinds/ defines
// make_<name>_kind(), and one line here lists it (docs/reference/adding-a-task.md).
#include "apps/model.hpp"

// The kinds, in the order `--help` lists their flags; a task is trained with the first that reads its input.
#define ATTEND_MODEL_KINDS(X) \
  X(seq2seq)                  \
  X(transformer)              \
  X(captioner)

namespace attend::app {

#define ATTEND_DECLARE(name) std::unique_ptr<ModelKind> make_##name##_kind();
ATTEND_MODEL_KINDS(ATTEND_DECLARE)
#undef ATTEND_DECLARE

std::vector<std::unique_ptr<ModelKind>> model_kinds() {
  std::vector<std::unique_ptr<ModelKind>> kinds;
#define ATTEND_ENTRY(name) kinds.push_back(make_##name##_kind());
  ATTEND_MODEL_KINDS(ATTEND_ENTRY)
#undef ATTEND_ENTRY
  return kinds;
}

std::unique_ptr<ModelKind> model_kind_for(InputKind input) {
  for (std::unique_ptr<ModelKind>& kind : model_kinds()) {
    if (kind->input() == input) return std::move(kind);
  }
  return nullptr;
}

std::vector<std::string> model_kind_names() {
  std::vector<std::string> names;
  for (const std::unique_ptr<ModelKind>& kind : model_kinds()) names.emplace_back(kind->name());
  return names;
}

std::unique_ptr<ModelKind> model_kind_of_format(const std::string& format) {
  for (std::unique_ptr<ModelKind>& kind : model_kinds()) {
    if (format == kind->format()) return std::move(kind);
  }
  return nullptr;
}

}  // namespace attend::app
