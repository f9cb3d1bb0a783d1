// `attend data`: what a task's data looks like once read, tokenised and split, and (--write DIR) the splits and
// vocabularies as plain files, so that another program (bench/torch_translate.py) can train on exactly the same data.
// Each task says what it writes (task.hpp's write_data): the text tasks their splits as tokens and the vocabularies,
// an image task its held-out images as PGM files with their captions.
#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "apps/commands.hpp"

namespace attend::app {

namespace {

// Whether `folder` holds nothing but "." and ".." (one that cannot be listed counts as not empty).
bool folder_is_empty(const std::string& folder) {
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return false;
  bool empty = true;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") {
      empty = false;
      break;
    }
  }
  ::closedir(dir);
  return empty;
}

}  // namespace

int run_data(const DataOptions& options) {
  struct stat status {};
  const bool folder_exists = !options.write.empty() && ::stat(options.write.c_str(), &status) == 0;
  if (folder_exists && !S_ISDIR(status.st_mode)) {
    throw InputError("--write " + options.write + ": exists and is not a folder");
  }
  if (folder_exists && !options.force && !folder_is_empty(options.write)) {
    throw InputError("--write " + options.write +
                     ": the folder is not empty; give --force to write into it (files of the same names are "
                     "replaced), or another --write");
  }
  const Task& task = *options.task;
  const std::unique_ptr<TaskData> made = task.make_data();
  const data::Vocabulary source = task.source_vocabulary(*made);
  const data::Vocabulary target = task.target_vocabulary(*made);
  // the folder before the summary: an error is then the only output
  if (!options.write.empty() && !folder_exists && ::mkdir(options.write.c_str(), 0777) != 0) {
    throw InputError("--write " + options.write + ": cannot create the folder (" + std::strerror(errno) + ")");
  }
  std::printf("%s\n%s\n", made->summary.c_str(), task.vocabulary_summary(source, target).c_str());
  if (options.write.empty()) return 0;
  const std::string written = task.write_data(options.write + "/", *made, source, target);
  std::cerr << "attend data: wrote " << written << " in " << options.write << "\n";
  return 0;
}

}  // namespace attend::app
