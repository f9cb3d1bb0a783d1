// Reading the data files a user hands the program (sentence pairs, digits, PGM images) with the same errors for all:
// each a std::invalid_argument that starts with the path — "PATH: cannot open (No such file or directory)",
// "PATH: is a directory, not a PGM image", "PATH: read error".
#pragma once

#include <string>

namespace attend::data {

// Throws unless `path` names something that exists and is not a directory; `kind` says what it should have been
// ("a digits file").
void check_data_file(const std::string& path, const std::string& kind);

// The whole file's bytes, after check_data_file.
std::string read_data_file(const std::string& path, const std::string& kind);

}  // namespace attend::data
