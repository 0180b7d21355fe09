#include "executor/checkpoint/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include <utility>

#include "core/text_file.h"

namespace stowage::executor {
namespace {

std::unexpected<core::Diagnostics> os_error(const std::filesystem::path& path, const char* what, int err) {
  return core::fail({{path.string(), 0, 0}, std::string(what) + ": " + std::strerror(err), ""});
}

}  // namespace

core::Result<InputFile> InputFile::open(const std::filesystem::path& path) {
  // O_NONBLOCK: a FIFO planted in a checkpoint must not block the open.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return os_error(path, "cannot open checkpoint file", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return os_error(path, "cannot stat checkpoint file", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return core::fail(
        {{path.string(), 0, 0}, "checkpoint file is not a regular file", "a file save_checkpoint wrote"});
  }
  return InputFile(path, fd, static_cast<int64_t>(st.st_size));
}

InputFile::InputFile(std::filesystem::path path, int fd, int64_t size)
    : path_(std::move(path)), fd_(fd), size_(size) {}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

InputFile::InputFile(InputFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

core::Result<void> InputFile::read_at(int64_t offset, std::span<std::byte> out) const {
  while (!out.empty()) {
    const ssize_t n = ::pread(fd_, out.data(), out.size(), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return os_error(path_, "cannot read checkpoint file", errno);
    if (n == 0) {
      return core::fail({{path_.string(), 0, 0},
                         "file ends at byte " + std::to_string(offset) + " while more was expected",
                         "a complete checkpoint file"});
    }
    out = out.subspan(static_cast<size_t>(n));
    offset += n;
  }
  return {};
}

core::Result<std::string> read_text_file(const std::filesystem::path& path, core::Bytes max_bytes) {
  auto file = InputFile::open(path);
  if (!file) return std::unexpected(std::move(file.error()));
  if (file->size() > max_bytes.count()) {
    return core::fail({{path.string(), 0, 0},
                       "file has " + std::to_string(file->size()) + " bytes, more than the " +
                           std::to_string(max_bytes.count()) + " a manifest may have",
                       "a manifest written by save_checkpoint; set " +
                           std::string(core::input_limit_of(core::InputKind::kManifest).variable) +
                           " to allow more"});
  }
  std::string text(static_cast<size_t>(file->size()), '\0');
  auto bytes = std::as_writable_bytes(std::span(text));
  if (auto read = file->read_at(0, bytes); !read) return std::unexpected(std::move(read.error()));
  return text;
}

}  // namespace stowage::executor
