// Tests that read the course's real data (Tatoeba pairs, digits) find it by the one rule of data/locate.hpp, as the
// program does, and are skipped where it is absent: `*needs_data({"tatoeba/spa-eng.tsv"})` on a test case is a Boost
// precondition whose message names each missing file, the folders searched and the `attend data fetch` command, and
// scripts/test_summary.py counts and lists such skips ("N passed, N failed, N skipped").
#pragma once

#include <boost/test/unit_test.hpp>
#include <initializer_list>
#include <string>
#include <vector>

#include "data/locate.hpp"

namespace attend::test {

// The data file `relative` as the rule finds it; a missing file fails the test with the rule's message.
inline std::string data_file(const std::string& relative) { return data::find_data_file(relative); }

// Whether every file is found (then the reason is empty), else why not.
inline std::string missing_data(const std::vector<std::string>& files) {
  std::string why;
  for (const std::string& file : files) {
    if (!data::locate_data_file(file)) why += (why.empty() ? "" : "; ") + data::data_not_found_message(file);
  }
  return why;
}

struct DataPrecondition {
  std::vector<std::string> files;
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    const std::string why = missing_data(files);
    boost::test_tools::assertion_result result(why.empty());
    if (!why.empty()) result.message() << "needs data: " << why;
    return result;
  }
};

// The decorator: the test case runs only where every file is found.
inline boost::unit_test::decorator::precondition needs_data(std::initializer_list<std::string> files) {
  return boost::unit_test::decorator::precondition(DataPrecondition{std::vector<std::string>(files)});
}

}  // namespace attend::test
