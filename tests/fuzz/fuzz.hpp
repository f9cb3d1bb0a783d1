// What the fuzz targets of tests/fuzz share: how a target reports a finding, the scratch file through which it hands an
// input to a loader that takes a path, and a UTF-8 splitter independent of the library's own. Each target is one
// LLVMFuzzerTestOneInput (libFuzzer calls it once per input, in one process); scripts/fuzz builds and runs them, and
// tests/fuzz/README.md says how to reproduce a finding.
#pragma once

#include <fcntl.h>
#include <unistd.h>
#include <utf8proc.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace attend::fuzz {

// Stops the run on a broken promise: abort() makes libFuzzer report a deadly signal and save the input as crash-<sha1>,
// as it does for a real crash, so that scripts/fuzz fails and the input can be replayed.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "\nfuzz finding: %s\n", what.c_str());
  std::abort();
}

inline void check(bool promise_kept, const std::string& what) {
  if (!promise_kept) finding(what);
}

// A file that holds the current input, for loaders that take a path: one per process (named after the target and
// the process id, in $TMPDIR or /tmp), rewritten for every input and removed when the process exits normally.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name) {
    const char* folder = std::getenv("TMPDIR");
    path_ =
        std::string(folder && *folder ? folder : "/tmp") + "/attend-fuzz-" + std::to_string(::getpid()) + "-" + name;
  }
  ~ScratchFile() { ::unlink(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Replaces the file's contents with `size` bytes at `data`; returns its path. A failure to write is the machine's
  // problem, not a finding, but it would make every input look alike: stop loudly.
  const std::string& write(const std::uint8_t* data, std::size_t size) {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) finding("cannot write the scratch file " + path_ + ": " + std::strerror(errno));
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(fd, data + done, size - done);
      if (n <= 0) finding("cannot write the scratch file " + path_ + ": " + std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The code points of `text` as utf8proc reads them, or nullopt when it is not valid UTF-8 (overlong forms, surrogates
// and values past U+10FFFF included): the oracle the library's own splitter (data::utf8_characters) is checked
// against.
inline std::optional<std::vector<std::string>> utf8proc_characters(const std::string& text) {
  std::vector<std::string> characters;
  std::size_t at = 0;
  while (at < text.size()) {
    utf8proc_int32_t c = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + at),
                                                static_cast<utf8proc_ssize_t>(text.size() - at), &c);
    if (n <= 0) return std::nullopt;
    characters.push_back(text.substr(at, static_cast<std::size_t>(n)));
    at += static_cast<std::size_t>(n);
  }
  return characters;
}

// `text` with control characters shown as \xNN, so that a finding's message stays on one line.
inline std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace attend::fuzz
