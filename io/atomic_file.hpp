// Files written whole or not at all: the bytes go to a temporary file beside the target ("<path>.tmp-<pid>-<n>", so
// the rename stays within one file system), which commit() flushes to disk and renames over the target in one step.
// Until then the target is untouched; if anything fails, or the AtomicFile is destroyed before commit(), the temporary
// file is removed. Checkpoints (checkpoint.hpp), heatmaps and the course's pictures are written this way.
#pragma once

#include <cstdint>
#include <string>

namespace attend {

class AtomicFile {
 public:
  // Every error is a std::runtime_error whose message starts with `error_prefix` (e.g. "checkpoint m.safetensors: ")
  // and names the step and the system's reason.
  AtomicFile(std::string path, std::string error_prefix);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends `size` bytes; `what` names them for the error message.
  void write(const void* data, std::uint64_t size, const std::string& what);
  // Data to disk (fsync), close, then the rename that makes the new file visible in one step.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what) const;
  std::string path_;
  std::string prefix_;
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

// `contents` as the whole of the file at `path`, written through an AtomicFile. Errors name the path:
// "cannot write <path>: cannot create the temporary file …: No such file or directory".
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace attend
