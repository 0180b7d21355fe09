#include "executor/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <string_view>
#include <system_error>
#include <utility>

namespace stowage::executor {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFirstLine = "format: stowage/lock/v1\n";
// A holder removes the file as it leaves; one who opened it just before
// then locks a file no longer in the directory and tries again.
constexpr int kAttempts = 16;

std::unexpected<core::Diagnostics> refuse(const fs::path& where, std::string what, std::string expected) {
  return core::fail({{where.string(), 0, 0}, std::move(what), std::move(expected)});
}

// The first 64 KiB of the file: a lock file is a few lines.
std::string head_of(int fd) {
  std::string text(65536, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return text;
}

// "process 1234" from a lock file's "pid: 1234" line.
std::string holder_of(const std::string& text) {
  const size_t at = text.find("\npid: ");
  if (!text.starts_with(kFirstLine) || at == std::string::npos) return "a process that did not say which";
  const size_t begin = at + 6;
  return "process " + text.substr(begin, text.find('\n', begin) - begin);
}

// Whether the open `fd` is still the file at `path` (not removed or replaced).
bool still_there(int fd, const fs::path& path) {
  struct stat open_st {
  }, path_st{};
  return ::fstat(fd, &open_st) == 0 && ::lstat(path.c_str(), &path_st) == 0 &&
         open_st.st_dev == path_st.st_dev && open_st.st_ino == path_st.st_ino;
}

// Removes the files a dead holder recorded as created ("created: NAME DEV
// INO" lines), each only if the entry at NAME is still that file.
void remove_files_of_dead_holder(const fs::path& dir, const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string tag, name;
    unsigned long long dev = 0, ino = 0;
    if (!(fields >> tag >> name >> dev >> ino) || tag != "created:" || name.find('/') != std::string::npos ||
        name == "." || name == "..") {
      continue;
    }
    struct stat st {};
    const fs::path file = dir / name;
    if (::lstat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == dev && st.st_ino == ino) {
      ::unlink(file.c_str());
    }
  }
}

bool write_claim(int fd, const std::string& purpose) {
  const std::string text =
      std::string(kFirstLine) + "pid: " + std::to_string(::getpid()) + "\npurpose: " + purpose + "\n";
  return ::ftruncate(fd, 0) == 0 &&
         ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
}

}  // namespace

core::Result<DirectoryLock> DirectoryLock::acquire(const fs::path& dir, const std::string& purpose) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return refuse(dir, "cannot create the " + purpose + ": " + ec.message(), "a writable directory");
  const fs::path path = dir / kLockFileName;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    // O_NOFOLLOW: a symlink planted at the lock's name is not followed.
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
      return refuse(
          path, "cannot create the lock file of the " + purpose + ": " + std::strerror(errno),
          "a writable directory with no symbolic link or other file named " + std::string(kLockFileName));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return refuse(path, "is not a regular file", "a directory Stowage can put its lock file in");
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string text = head_of(fd);
      ::close(fd);
      if (err != EWOULDBLOCK) return refuse(path, std::string("cannot lock: ") + std::strerror(err), "");
      return refuse(dir, "the " + purpose + " is in use by another stowage run (" + holder_of(text) + ")",
                    "one run per directory: wait for that run to end, or give this one another directory");
    }
    if (!still_there(fd, path)) {
      ::close(fd);
      continue;
    }
    const std::string text = head_of(fd);
    if (!text.empty() && !text.starts_with(kFirstLine)) {
      ::close(fd);
      return refuse(path, "exists and is not a Stowage lock file; it is left as it is",
                    "move it away, or give another directory");
    }
    remove_files_of_dead_holder(dir, text);  // a holder that left cleanly removed the whole file
    if (!write_claim(fd, purpose)) {
      const int err = errno;
      ::close(fd);
      return refuse(path, std::string("cannot write the lock file: ") + std::strerror(err),
                    "a writable directory");
    }
    return DirectoryLock(dir, fd);
  }
  return refuse(dir, "cannot take the lock of the " + purpose + ": other runs keep taking it", "");
}

DirectoryLock::DirectoryLock(fs::path dir, int fd) : dir_(std::move(dir)), fd_(fd) {}

DirectoryLock::~DirectoryLock() {
  release();
}

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept
    : dir_(std::move(other.dir_)), fd_(std::exchange(other.fd_, -1)) {}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    release();
    dir_ = std::move(other.dir_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void DirectoryLock::record_created(const fs::path& file) {
  struct stat st {};
  if (fd_ < 0 || ::lstat(file.c_str(), &st) != 0) return;
  const std::string line = "created: " + file.filename().string() + " " +
                           std::to_string(static_cast<unsigned long long>(st.st_dev)) + " " +
                           std::to_string(static_cast<unsigned long long>(st.st_ino)) + "\n";
  const off_t end = ::lseek(fd_, 0, SEEK_END);
  if (end < 0 || ::pwrite(fd_, line.data(), line.size(), end) < 0) return;  // best effort
}

void DirectoryLock::release() {
  if (fd_ < 0) return;
  // Removed while still held: whoever opened it meanwhile sees it gone
  // (still_there) and starts over on a fresh file.
  ::unlink((dir_ / kLockFileName).c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace stowage::executor
