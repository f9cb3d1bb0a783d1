// What the cli suites share: a scratch folder, running the `attend` program as a user does, and the error contract.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace cli_test {

// A scratch folder for one test, removed afterwards.
struct Scratch {
  std::string dir;
  Scratch() {
    char pattern[] = "/tmp/attend-cli-XXXXXX";
    dir = mkdtemp(pattern);
  }
  ~Scratch() { (void)std::system(("rm -rf '" + dir + "'").c_str()); }
  std::string path(const std::string& name) const { return dir + "/" + name; }
};

struct Run {
  int status = -1;
  std::string out, err;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline bool exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0;
}

// Runs `attend <args>` (args already shell-quoted) with `input` on standard input; `program`: another build of it;
// `launcher`: what starts it (e.g. "mpirun -np 2 ").
inline Run run_attend(const std::string& args, const std::string& input = "", const std::string& program = ATTEND_EXE,
                      const std::string& launcher = "") {
  Scratch io;
  { std::ofstream(io.path("in")) << input; }
  const std::string command = "OPENBLAS_NUM_THREADS=1 " + launcher + "'" + program + "' " + args + " < '" +
                              io.path("in") + "' > '" + io.path("out") + "' 2> '" + io.path("err") + "'";
  const int raw = std::system(command.c_str());
  Run run;
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  run.out = read_file(io.path("out"));
  run.err = read_file(io.path("err"));
  return run;
}

// The processes whose parent is `parent` (from /proc).
inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (const dirent* entry = readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    // /proc/PID/stat: "pid (comm) state ppid …", comm may hold spaces: read after the last ')'
    const std::string stat = read_file("/proc/" + name + "/stat");
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    long ppid = 0;
    if (rest >> state >> ppid && ppid == parent) children.push_back(static_cast<pid_t>(std::stol(name)));
  }
  closedir(proc);
  return children;
}

// Starts `attend <args>` with standard error to `err` and returns its process id. `launcher`: what starts the program
// (e.g. "mpirun -np 2 ").
inline pid_t start_attend(const std::string& args, const std::string& err, const std::string& launcher = "") {
  const pid_t pid = fork();
  BOOST_TEST_REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string command = std::string("exec env OPENBLAS_NUM_THREADS=1 ") + launcher + "'" + ATTEND_EXE + "' " +
                                args + " > /dev/null 2> '" + err + "'";
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Waits until the progress line of `step` is in `err` (or two minutes have passed): true; false when the program
// ended by itself first (its status then in `raw`).
inline bool wait_for_step(pid_t pid, const std::string& err, std::size_t step, int& raw) {
  const std::string mark = "step " + std::to_string(step) + "/";
  for (int polls = 0; polls < 600000; ++polls) {
    if (waitpid(pid, &raw, WNOHANG) == pid) return false;
    if (read_file(err).find(mark) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// Starts `attend <args>` with standard error to `err`, sends `signal_number` once the progress line of `step` is
// there, and returns the exit status (-1 if the program ended by itself before the signal could be sent).
// `launcher`: what starts the program (e.g. "mpirun -np 2 "); the signal then goes to the launcher's children, the
// program's processes, as a cluster's scheduler sends it to every process of a job.
inline int train_and_signal(const std::string& args, const std::string& err, std::size_t step, int signal_number,
                            const std::string& launcher = "") {
  const pid_t pid = start_attend(args, err, launcher);
  int raw = 0;
  if (!wait_for_step(pid, err, step, raw)) return -1;
  if (launcher.empty()) {
    kill(pid, signal_number);
  } else {
    for (const pid_t child : children_of(pid)) kill(child, signal_number);
  }
  waitpid(pid, &raw, 0);
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The error contract: status 2, exactly one line on standard error, starting "attend: error:" and naming `part`.
inline void check_usage_error(const Run& run, const std::vector<std::string>& parts) {
  BOOST_TEST(run.status == 2);
  const auto lines = lines_of(run.err);
  BOOST_TEST(lines.size() == 1u, "standard error: " << run.err);
  BOOST_TEST(run.err.rfind("attend: error: ", 0) == 0u, "standard error: " << run.err);
  for (const auto& part : parts) {
    BOOST_TEST(run.err.find(part) != std::string::npos, "\"" << part << "\" not in: " << run.err);
  }
}

// The rows of the Markdown table after the line that starts with `marker` in docs/`page`, as cells (the heading and
// its rule left out: a row whose second cell is not in backticks). Read when test cases are registered, so it checks
// nothing itself. The docs are the tests' data, so the two cannot
// drift apart: a row added to the docs is a test, and a row whose message changes fails.
inline std::vector<std::vector<std::string>> table_after(const std::string& page, const std::string& marker) {
  std::ifstream in(std::string(ATTEND_SOURCE_DIR) + "/docs/" + page);
  std::vector<std::vector<std::string>> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(marker, 0) == 0) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.empty() || line[0] != '|') {
      if (!rows.empty()) break;  // the end of the table
      continue;
    }
    std::vector<std::string> cells;
    std::size_t at = 2;
    for (std::size_t bar = line.find(" | ", at); bar != std::string::npos; bar = line.find(" | ", at)) {
      cells.push_back(line.substr(at, bar - at));
      at = bar + 3;
    }
    cells.push_back(line.substr(at, line.size() - at - 2));
    if (cells.size() < 2 || cells[1].size() < 2 || cells[1].front() != '`') continue;
    rows.push_back(cells);
  }
  return rows;  // empty without the marker: the callers count the rows
}

// The text of every `quoted` part of a cell.
inline std::vector<std::string> quoted_parts(const std::string& cell) {
  std::vector<std::string> parts;
  for (std::size_t open = cell.find('`'); open != std::string::npos; open = cell.find('`', open)) {
    const std::size_t close = cell.find('`', open + 1);
    if (close == std::string::npos) break;
    parts.push_back(cell.substr(open + 1, close - open - 1));
    open = close + 1;
  }
  return parts;
}

// The tensors of a checkpoint: the data section after the header (the header's metadata holds times, which differ
// between runs).
inline std::string tensor_bytes(const std::string& path) {
  const std::string file = read_file(path);
  BOOST_TEST_REQUIRE(file.size() > 8u, path);
  std::uint64_t header = 0;
  for (int k = 7; k >= 0; --k) header = header * 256 + static_cast<unsigned char>(file[static_cast<std::size_t>(k)]);
  return file.substr(8 + header);
}

inline std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace cli_test
