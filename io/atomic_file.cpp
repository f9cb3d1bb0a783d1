// Files written whole or not at all (atomic_file.hpp).
#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace attend {

AtomicFile::AtomicFile(std::string path, std::string error_prefix)
    : path_(std::move(path)), prefix_(std::move(error_prefix)) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0;; ++attempt) {
    temp_ = path_ + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    // 0666 before the umask: the file gets the permissions of any new file, not mkstemp's 0600
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0) return;
    const int error = errno;
    if (error != EEXIST || attempt == 100) {
      fail("cannot create the temporary file " + temp_ + ": " + std::strerror(error));
    }
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void AtomicFile::fail(const std::string& what) const { throw std::runtime_error(prefix_ + what); }

void AtomicFile::write(const void* data, std::uint64_t size, const std::string& what) {
  const char* in = static_cast<const char*>(data);
  while (size > 0) {
    const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(size, std::uint64_t{1} << 30));
    const ssize_t n = ::write(fd_, in, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // n = 0 would otherwise loop for ever
      const int error = n < 0 ? errno : EIO;
      fail("cannot write " + what + " to " + temp_ + ": " + std::strerror(error));
    }
    in += n;
    size -= static_cast<std::uint64_t>(n);
  }
}

void AtomicFile::commit() {
  // errno is read before the message is built, which may itself change it
  if (::fsync(fd_) != 0) {
    const int error = errno;
    fail("cannot flush " + temp_ + " to disk: " + std::strerror(error));
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int error = errno;
    fail("cannot close " + temp_ + ": " + std::strerror(error));
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    fail("cannot rename " + temp_ + " to " + path_ + ": " + std::strerror(error));
  }
  committed_ = true;
  // Make the rename itself durable. Best effort: the new file is complete and in place whatever happens here, and
  // after a crash before this sync the folder holds either the old file or the new one, never a mix.
  std::string folder = std::filesystem::path(path_).parent_path().string();
  if (folder.empty()) folder = ".";
  const int folder_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder_fd >= 0) {
    ::fsync(folder_fd);
    ::close(folder_fd);
  }
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  AtomicFile file(path, "cannot write " + path + ": ");
  file.write(contents.data(), contents.size(), "the contents");
  file.commit();
}

}  // namespace attend
