// The registry of the `attend` program's tasks (task.hpp). Adding a task: its file in apps/tasks/ defines
// make_<name>_task(), and one line here lists it (docs/reference/adding-a-task.md).
#include <memory>

#include "apps/task.hpp"

// Tasks a build adds of its own (tests/example builds the program with the worked example of adding-a-task.md).
#ifndef ATTEND_EXTRA_TASKS
#define ATTEND_EXTRA_TASKS(X)
#endif

// The tasks, in the order `--help` and the error messages list them.
// [docs:registry]
#define ATTEND_TASKS(X) \
  X(dates)              \
  X(pairs)              \
  X(digits)             \
  ATTEND_EXTRA_TASKS(X)
// [docs:end]

namespace attend::app {

#define ATTEND_DECLARE(name) std::unique_ptr<Task> make_##name##_task();
ATTEND_TASKS(ATTEND_DECLARE)
#undef ATTEND_DECLARE

namespace {

struct Registered {
  const char* name;
  std::unique_ptr<Task> (*make)();
};

#define ATTEND_ENTRY(name) {#name, &make_##name##_task},
const Registered registered[] = {ATTEND_TASKS(ATTEND_ENTRY)};
#undef ATTEND_ENTRY

}  // namespace

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const Registered& r : registered) names.emplace_back(r.name);
  return names;
}

std::unique_ptr<Task> make_task(const std::string& name) {
  for (const Registered& r : registered) {
    if (name == r.name) return r.make();
  }
  std::string known;
  const std::vector<std::string> names = task_names();
  for (std::size_t k = 0; k < names.size(); ++k) {
    known += (k == 0 ? "" : k + 1 == names.size() ? " or " : ", ") + names[k];
  }
  throw InputError("unknown task \"" + name + "\" (expected " + known + ")");
}

}  // namespace attend::app
