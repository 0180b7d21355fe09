// Opening with O_DIRECT, the tmpfs refusal turned into a message that says
// what to do, and pre-allocation.
#include "executor/nvme/direct_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "executor/nvme/io_error.h"

namespace stowage::executor {
namespace {

constexpr int kFlags = O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC;
constexpr mode_t kMode = 0600;

[[noreturn]] void throw_open_error(const std::filesystem::path& path, int error_number) {
  throw IoError(IoErrorKind::kSetup, error_number, path, -1,
                "nvme: cannot open '" + path.string() + "': " + describe_errno(error_number));
}

[[noreturn]] void throw_direct_refused(const std::filesystem::path& path) {
  const std::string dir = path.parent_path().string();
  throw IoError(IoErrorKind::kDirectIoUnsupported, EINVAL, path, -1,
                "nvme: the filesystem of directory '" + dir +
                    "' refuses O_DIRECT (open returned EINVAL; tmpfs and some overlay or FUSE filesystems "
                    "do). Put the NVMe tier on a directory of a real disk, or set allow_buffered to go "
                    "through the page cache (for tests only: it defeats the point of direct I/O)");
}

}  // namespace

DirectFile::DirectFile(std::filesystem::path path, DirectIo direct) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), kFlags | O_DIRECT, kMode);
  if (fd_ >= 0) return;
  const int error_number = errno;
  if (error_number != EINVAL) throw_open_error(path_, error_number);
  if (direct == DirectIo::kRequired) throw_direct_refused(path_);
  fd_ = ::open(path_.c_str(), kFlags, kMode);
  if (fd_ < 0) throw_open_error(path_, errno);
  mode_ = IoMode::kBuffered;
}

DirectFile::~DirectFile() {
  if (fd_ >= 0) ::close(fd_);
}

DirectFile::DirectFile(DirectFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      mode_(other.mode_),
      size_(other.size_) {}

DirectFile& DirectFile::operator=(DirectFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    mode_ = other.mode_;
    size_ = other.size_;
  }
  return *this;
}

void DirectFile::grow_to(int64_t bytes) {
  if (bytes <= size_) return;
  int rc = ::fallocate(fd_, 0, size_, bytes - size_);
  if (rc != 0 && (errno == EOPNOTSUPP || errno == ENOSYS)) rc = ::ftruncate(fd_, bytes);
  if (rc != 0) {
    const int error_number = errno;
    throw IoError(IoErrorKind::kSetup, error_number, path_, size_,
                  "nvme: cannot allocate bytes [" + std::to_string(size_) + ", " + std::to_string(bytes) +
                      ") of '" + path_.string() + "': " + describe_errno(error_number));
  }
  size_ = bytes;
}

}  // namespace stowage::executor
