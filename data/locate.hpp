// Where data files are found: one rule for the program, the tutorials and the tests. A file is named by its path
// inside a data folder ("tatoeba/spa-eng.tsv", "digits/digits.csv.gz"), and the folders are searched in this order:
//   1. the folder given on the command line (--data-dir DIR), when one is;
//   2. the folder in the environment variable ATTEND_DATA, when it is set;
//   3. ../shared/data beside the source tree this library was built from (where the course's data sits in a checkout);
//   4. the user's data folder, where `attend data fetch` writes: $XDG_DATA_HOME/attend, or ~/.local/share/attend.
// The first folder that holds the file wins. Not found anywhere: DataNotFound, whose message names the file, every
// folder searched and the `attend data fetch` command that downloads it.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attend::data {

struct DataFolder {
  std::string path;
  std::string origin;  // why it is searched: "--data-dir", "ATTEND_DATA", "beside the source tree", …
};

// The folders searched, in order; `data_dir` is --data-dir's value (empty: not given).
std::vector<DataFolder> data_folders(const std::string& data_dir = "");
// The user's data folder, where `attend data fetch` writes by default: $XDG_DATA_HOME/attend when XDG_DATA_HOME is set
// to an absolute path, else $HOME/.local/share/attend.
std::string user_data_folder();

class DataNotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The path of the data file `relative` in the first folder that holds it, or nothing.
std::optional<std::string> locate_data_file(const std::string& relative, const std::string& data_dir = "");
// The same, or DataNotFound naming the file, the folders searched and the fetch command.
std::string find_data_file(const std::string& relative, const std::string& data_dir = "");
// The message DataNotFound carries for `relative`.
std::string data_not_found_message(const std::string& relative, const std::string& data_dir = "");

// What a `--data` flag names: a recorded data set's name ("spa-eng", "digits", data/data_sets.hpp) stands for its
// first file, found by the rule above; anything else is a file's path, returned as it is, except a bare word (no '/')
// that is no file, which is taken for a mistyped name (DataNotFound listing the names).
std::string data_argument_path(const std::string& value, const std::string& data_dir = "");

}  // namespace attend::data
