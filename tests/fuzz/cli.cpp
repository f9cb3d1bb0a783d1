// Fuzz target `cli`: the `attend` program's command-line parser (apps/cli.hpp parse_command_line, which reads no file
// and prints nothing) on arbitrary arguments: the input cut at NUL bytes, as the kernel hands argv to a program. It
// never calls run_command_line. A finding is a crash, hang, leak, sanitizer report or an exception out of the parser,
// and any of these broken promises of its contract (cli.hpp, docs/reference/attend.md "Errors and exit status"):
//   - with nothing to run (command none) the status is 0 (--help, --version: with output, without error) or 2 (a usage
//     error, with an error message);
//   - the error is one line: no newline, since the program prints it as "attend: error: <error>" and the docs promise
//     one line on standard error;
//   - a command to run comes with status 0 and no error; `train` without --resume has an output file.
#include "apps/cli.hpp"

#include <algorithm>

#include "tests/fuzz/fuzz.hpp"

using namespace attend::app;
using attend::fuzz::check;
using attend::fuzz::printable;

namespace {

std::vector<std::string> arguments_of(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args;
  if (size == 0) return args;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find('\0', begin), text.size());
    args.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return args;
}

std::string shown(const std::vector<std::string>& args) {
  std::string line = "attend";
  for (const auto& a : args) line += " '" + printable(a) + "'";
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> args = arguments_of(data, size);
  const CommandLine line = parse_command_line(args);
  if (line.command == Command::none) {
    check(line.status == 0 || line.status == 2, "status " + std::to_string(line.status) + " for " + shown(args));
    check(line.status != 0 || (!line.output.empty() && line.error.empty()),
          "status 0 without output or with an error for " + shown(args));
    check(line.status != 2 || !line.error.empty(), "status 2 without an error message for " + shown(args));
    check(line.error.find('\n') == std::string::npos,
          "an error of more than one line, \"" + printable(line.error) + "\", for " + shown(args));
  } else {
    check(line.status == 0 && line.error.empty(), "a command to run with an error for " + shown(args));
    check(line.command != Command::train || !line.train.resume.empty() || !line.train.settings.out.empty(),
          "train without --out for " + shown(args));
  }
  return 0;
}
