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
#include "data/data_sets.hpp"
#include "data/locate.hpp"

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

// `attend data list`: each data set, what it holds and where its files are (or that they are missing).
int run_list(const DataOptions& options) {
  for (const data::DataSet& set : data::data_sets()) {
    std::printf("%s: %s\n", set.name.c_str(), set.about.c_str());
    for (const data::DataSetFile& file : set.files) {
      const std::optional<std::string> path = data::locate_data_file(file.path, options.data_dir);
      std::printf("  %s: %s\n", file.path.c_str(), path ? path->c_str() : "missing");
    }
  }
  std::printf("searched, in order:");
  for (const data::DataFolder& folder : data::data_folders(options.data_dir))
    std::printf(" %s (%s);", folder.path.c_str(), folder.origin.c_str());
  std::printf("\nattend data fetch NAME downloads a data set to %s\n", data::user_data_folder().c_str());
  return 0;
}

// `attend data where`: the path of each data set's first file, or each data file, as the tasks find it.
int run_where(const DataOptions& options) {
  std::string found;
  for (const std::string& name : options.where) {
    const data::DataSet* set = data::find_data_set(name);
    if (set == nullptr && data::data_set_of_file(name) == nullptr && name.find('/') == std::string::npos)
      throw InputError("data where: \"" + name + "\" is no data set (" + data::data_set_names() +
                       ") and no data file (tatoeba/spa-eng.tsv)");
    try {
      found += data::find_data_file(set != nullptr ? set->files.front().path : name, options.data_dir) + "\n";
    } catch (const data::DataNotFound& e) {
      throw InputError(e.what());
    }
  }
  std::fputs(found.c_str(), stdout);
  return 0;
}

}  // namespace

int run_data(const DataOptions& options) {
  if (options.action == "fetch") return run_fetch(options.fetch);
  if (options.action == "list") return run_list(options);
  if (options.action == "where") return run_where(options);
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
