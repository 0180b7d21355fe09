// POSIX mmap; a file that cannot be mapped (empty, a pipe, another
// platform) is read with core::read_text_file instead.
#include "gui/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "core/text_file.h"

namespace stowage::gui {

core::Result<MappedFile> MappedFile::open(const std::filesystem::path& path) {
  // A trace has the size limit of its kind, mapped or read (issue 12): past
  // it, the model built from the trace would take all of memory.
  const core::Result<core::Bytes> limit = core::input_limit(core::InputKind::kTrace);
  if (!limit) return std::unexpected(limit.error());
  MappedFile out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) {
    struct stat info {};
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0 && info.st_size <= limit->count()) {
      const auto size = static_cast<size_t>(info.st_size);
      void* at = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (at != MAP_FAILED) {
        ::madvise(at, size, MADV_WILLNEED);
        out.mapped_ = static_cast<const char*>(at);
        out.size_ = size;
      }
    }
    ::close(fd);
    if (out.mapped_ != nullptr) return out;
  }
  core::Result<std::string> text = core::read_input_file(path, core::InputKind::kTrace);  // says what is wrong
  if (!text) return std::unexpected(text.error());
  out.buffer_ = std::move(*text);
  return out;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : mapped_(std::exchange(other.mapped_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      buffer_(std::move(other.buffer_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    mapped_ = std::exchange(other.mapped_, nullptr);
    size_ = std::exchange(other.size_, 0);
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

MappedFile::~MappedFile() {
  release();
}

void MappedFile::release() {
  if (mapped_ != nullptr) ::munmap(const_cast<char*>(mapped_), size_);
  mapped_ = nullptr;
  size_ = 0;
}

}  // namespace stowage::gui
