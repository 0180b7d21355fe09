// One file of the block store, opened for direct I/O (O_DIRECT bypasses the
// page cache: optimizer states are streamed once per step, and caching them
// would only evict what the CPU optimizer needs). RAII owner of the fd
// (STYLE.md §12).
#pragma once

#include <cstdint>
#include <filesystem>

namespace stowage::executor {

// Whether a filesystem that refuses O_DIRECT (tmpfs, some FUSE and overlay
// filesystems) is an error or is used through the page cache instead.
enum class DirectIo { kRequired, kFallBackToBuffered };

// How the file was actually opened.
enum class IoMode { kDirect, kBuffered };

class DirectFile {
 public:
  // Creates `path`, which must not exist (O_EXCL), and opens it with
  // O_DIRECT (mode 0600: optimizer state is nobody else's business). Throws
  // IoError: kind kDirectIoUnsupported naming the directory when O_DIRECT
  // is refused and `direct` is kRequired (the file is then removed), kSetup
  // for any other failure (EEXIST: a file of that name exists, untouched).
  DirectFile(std::filesystem::path path, DirectIo direct);
  ~DirectFile();
  DirectFile(DirectFile&& other) noexcept;
  DirectFile& operator=(DirectFile&& other) noexcept;
  DirectFile(const DirectFile&) = delete;
  DirectFile& operator=(const DirectFile&) = delete;

  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] IoMode mode() const { return mode_; }

  // Makes the file at least `bytes` long, with the space allocated now
  // (fallocate), so that a full disk is reported at reservation rather than
  // halfway through a training step. Where the filesystem cannot fallocate
  // (EOPNOTSUPP) the file is only extended. Throws IoError (kSetup) with the
  // file, the range and strerror, e.g. ENOSPC.
  void grow_to(int64_t bytes);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  IoMode mode_ = IoMode::kDirect;
  int64_t size_ = 0;
};

}  // namespace stowage::executor
