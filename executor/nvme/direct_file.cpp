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

// O_EXCL: the file is new, never one that was there (issue 12: an existing
// stowage-0.blocks is someone's, or a killed run's, and is left alone).
constexpr int kCreateFlags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;
constexpr mode_t kMode = 0600;

[[noreturn]] void throw_open_error(const std::filesystem::path& path, int error_number) {
  if (error_number == EEXIST) {
    throw IoError(IoErrorKind::kSetup, error_number, path, -1,
                  "nvme: '" + path.string() +
                      "' already exists and this run did not create it; it is left as it is (a run killed "
                      "earlier leaves its block file behind: remove it if no stowage run is using it)");
  }
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
  // Created first without O_DIRECT, so that a refusal of O_DIRECT (EINVAL,
  // which some filesystems give only after creating the file) cannot be
  // mistaken for a file that was already there.
  const int created = ::open(path_.c_str(), kCreateFlags, kMode);
  if (created < 0) throw_open_error(path_, errno);
  fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC | O_DIRECT);
  if (fd_ >= 0) {
    ::close(created);
    return;
  }
  const int error_number = errno;
  if (error_number == EINVAL && direct == DirectIo::kFallBackToBuffered) {
    fd_ = created;
    mode_ = IoMode::kBuffered;
    return;
  }
  ::close(created);
  ::unlink(path_.c_str());  // ours: created above
  if (error_number == EINVAL) throw_direct_refused(path_);
  throw_open_error(path_, error_number);
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
