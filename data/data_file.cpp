// Reading a user's data file (data_file.hpp).
#include "data/data_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace attend::data {

void check_data_file(const std::string& path, const std::string& kind) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    throw std::invalid_argument(path + ": cannot open (" + std::strerror(errno) + ")");
  }
  if (S_ISDIR(status.st_mode)) throw std::invalid_argument(path + ": is a directory, not " + kind);
}

std::string read_data_file(const std::string& path, const std::string& kind) {
  check_data_file(path, kind);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) throw std::invalid_argument(path + ": read error");
  return content.str();
}

}  // namespace attend::data
