#include "executor/checkpoint/output_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <string>

#include "executor/checkpoint/checkpoint_write_error.h"

namespace stowage::executor {
namespace {

// Writes go out in pieces of at most this size: Linux caps one write(2) near
// 2 GiB, and smaller pieces let a fault hook strike inside a large blob.
constexpr size_t kMaxWrite = size_t{16} << 20;

}  // namespace

OutputFile::OutputFile(std::filesystem::path path, const WriteFaultHook* hook)
    : path_(std::move(path)), hook_(hook) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) throw CheckpointWriteError("cannot create", path_, "", errno);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::append(std::span<const std::byte> bytes, std::string_view blob) {
  while (!bytes.empty()) {
    const size_t n = std::min(bytes.size(), kMaxWrite);
    write_chunk(bytes.first(n), blob);
    bytes = bytes.subspan(n);
  }
}

void OutputFile::write_chunk(std::span<const std::byte> chunk, std::string_view blob) {
  while (!chunk.empty()) {
    if (hook_ != nullptr && *hook_) {
      const int injected = (*hook_)(path_.native(), size_);
      if (injected < 0) throw CheckpointWriteError("cannot write", path_, std::string(blob), -injected);
    }
    const ssize_t n = ::write(fd_, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    // A write that makes no progress would loop forever; report it as ENOSPC,
    // what write(2) returning 0 for a regular file means in practice.
    if (n <= 0) throw CheckpointWriteError("cannot write", path_, std::string(blob), n < 0 ? errno : ENOSPC);
    chunk = chunk.subspan(static_cast<size_t>(n));
    size_ += n;
  }
}

void OutputFile::pad_to_multiple(int64_t alignment, std::string_view blob) {
  static constexpr std::array<std::byte, 4096> kZeros{};
  while (size_ % alignment != 0) {
    const auto gap = static_cast<size_t>(alignment - size_ % alignment);
    append(std::span(kZeros).first(std::min(gap, kZeros.size())), blob);
  }
}

void OutputFile::sync_and_close() {
  if (::fsync(fd_) != 0) throw CheckpointWriteError("cannot fsync", path_, "", errno);
  const int fd = fd_;
  fd_ = -1;
  // close(2) can report a deferred write error (NFS); the data is then not safe.
  if (::close(fd) != 0) throw CheckpointWriteError("cannot close", path_, "", errno);
}

void sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw CheckpointWriteError("cannot open directory", dir, "", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw CheckpointWriteError("cannot fsync directory", dir, "", err);
}

}  // namespace stowage::executor
