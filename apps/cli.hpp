// The `attend` program's command line (CLI11): its flags, help and the validation of every value. parse_command_line
// is a function of the arguments alone — it reads and writes no file and prints nothing — so that tests and the
// fuzzer (tests/fuzz) can call it on any input; run_command_line then does what the line asks. Reference:
// docs/reference/attend.md.
#pragma once

#include <string>
#include <vector>

#include "apps/commands.hpp"

namespace attend::app {

enum class Command { none, train, eval, predict, data, serve, info };

struct CommandLine {
  Command command = Command::none;  // none: nothing to run; print `output` and `error`, exit with `status`
  int status = 0;                   // with none: 0 for --help and --version, 2 for a usage error
  std::string output;               // for standard output (help, version)
  std::string error;                // the usage error, one line without the "attend: error: " prefix
  TrainOptions train;
  EvalOptions eval;
  PredictOptions predict;
  DataOptions data;
  ServeOptions serve;
  InfoOptions info;
};

// The arguments after the program's name.
CommandLine parse_command_line(const std::vector<std::string>& args);

// Runs a parsed command line: checks the output paths, runs the command, prints an error as one line
// "attend: error: …" on standard error. Returns the exit status: 0 success, 2 a usage or input error (nothing
// written), 1 anything else.
int run_command_line(const CommandLine& line);

}  // namespace attend::app
