#include "data/locate.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "data/data_sets.hpp"

#ifndef ATTEND_DATA_BESIDE_SOURCE
#define ATTEND_DATA_BESIDE_SOURCE ""
#endif

namespace attend::data {

namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

bool is_file(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode);
}

}  // namespace

std::string user_data_folder() {
  const std::string xdg = environment("XDG_DATA_HOME");
  if (!xdg.empty() && xdg.front() == '/') return xdg + "/attend";
  const std::string home = environment("HOME");
  return (home.empty() ? std::string(".") : home) + "/.local/share/attend";
}

std::vector<DataFolder> data_folders(const std::string& data_dir) {
  std::vector<DataFolder> folders;
  if (!data_dir.empty()) folders.push_back({data_dir, "--data-dir"});
  const std::string variable = environment("ATTEND_DATA");
  if (!variable.empty()) folders.push_back({variable, "ATTEND_DATA"});
  const std::string beside = std::filesystem::path(ATTEND_DATA_BESIDE_SOURCE).lexically_normal().string();
  if (!beside.empty()) folders.push_back({beside, "beside the source tree"});
  folders.push_back({user_data_folder(), "the user's data folder"});
  return folders;
}

std::optional<std::string> locate_data_file(const std::string& relative, const std::string& data_dir) {
  for (const DataFolder& folder : data_folders(data_dir)) {
    const std::string path = folder.path + "/" + relative;
    if (is_file(path)) return path;
  }
  return std::nullopt;
}

std::string data_not_found_message(const std::string& relative, const std::string& data_dir) {
  std::string searched;
  for (const DataFolder& folder : data_folders(data_dir)) {
    searched += (searched.empty() ? "" : ", ") + folder.path + " (" + folder.origin + ")";
  }
  const DataSet* set = data_set_of_file(relative);
  const std::string fetch = set != nullptr ? "`attend data fetch " + set->name + "` downloads it"
                                           : "no data set of `attend data fetch` has it";
  return relative + " not found in " + searched + "; " + fetch + " (or give the folder with --data-dir DIR)";
}

std::string find_data_file(const std::string& relative, const std::string& data_dir) {
  if (std::optional<std::string> path = locate_data_file(relative, data_dir)) return *path;
  throw DataNotFound(data_not_found_message(relative, data_dir));
}

std::string data_argument_path(const std::string& value, const std::string& data_dir) {
  const DataSet* set = find_data_set(value);
  if (is_file(value)) return value;
  if (set == nullptr) {
    struct stat status {};
    // a bare word that is no file: most likely a data set's name mistyped
    if (value.find('/') == std::string::npos && ::stat(value.c_str(), &status) != 0)
      throw DataNotFound(value + ": no such file, and no data set of that name (" + data_set_names() + ")");
    return value;
  }
  return find_data_file(set->files.front().path, data_dir);
}

}  // namespace attend::data
