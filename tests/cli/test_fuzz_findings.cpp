// Regression tests of what the fuzz targets found in the `attend` program (tests/fuzz/README.md): each replays the
// reproducer kept in tests/fuzz/corpus through the program, which must answer with its one-line usage error.
#include <boost/test/unit_test.hpp>
#include <string>

#include "tests/cli/cli_helpers.hpp"

using namespace cli_test;

namespace {

std::string reproducer(const std::string& name) {
  return std::string(ATTEND_SOURCE_DIR) + "/tests/fuzz/corpus/" + name;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fuzz_findings)

// fuzz target cli: the messages quote the argument they refuse, line break included
BOOST_AUTO_TEST_CASE(a_line_break_in_an_argument_gives_a_one_line_error) {
  check_usage_error(run_attend("train --out x \"$(printf 'a\\nb')\""), {"not expected: a\\nb"});
  check_usage_error(run_attend("\"$(printf 'a\\nb')\""), {"unknown command \"a\\nb\""});
}

// fuzz target checkpoint: the task description's errors did not name the model file
BOOST_AUTO_TEST_CASE(errors_in_a_model_files_metadata_name_the_file) {
  const std::string model = reproducer("checkpoint/model-dates-task-unknown");
  check_usage_error(run_attend("eval --model '" + model + "'"), {model, "unknown task \"translation\""});
}

// fuzz target checkpoint: a few edited digits of the configuration made load_model_file allocate 120 GB (hidden size
// 100000) or build a million layers
BOOST_AUTO_TEST_CASE(a_model_file_that_asks_for_more_weights_than_it_holds_is_refused) {
  for (const char* name : {"checkpoint/finding-model-hidden-100000", "checkpoint/finding-model-layers-1000000"}) {
    const std::string model = reproducer(name);
    check_usage_error(run_attend("eval --model '" + model + "'"), {model, "asks for more weights than the file holds"});
  }
}

BOOST_AUTO_TEST_SUITE_END()
