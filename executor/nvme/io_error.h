// The one exception the NVMe block store throws for what the machine did
// wrong (STYLE.md §7: environment failures are typed exceptions carrying the
// errno, caught once in cli/). Its message names everything needed to act on
// it: the file, the byte offset and length, the region and block, strerror.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace stowage::executor {

enum class IoErrorKind {
  kSetup,                // creating a directory or file, fallocate, io_uring setup
  kDirectIoUnsupported,  // the filesystem refused O_DIRECT (EINVAL), e.g. tmpfs
  kIo,                   // a read or write completed with an error (EIO, ENOSPC, ...)
  kUnexpectedEof,        // a read returned 0 bytes before the block was complete
  kChecksumMismatch,     // a block read back does not match the CRC32C written
};

class IoError : public std::runtime_error {
 public:
  // `error_number`: the errno (positive), 0 where none applies (a checksum
  // mismatch). `file` may be empty; `offset` is -1 where none applies.
  IoError(IoErrorKind kind, int error_number, std::filesystem::path file, int64_t offset,
          const std::string& message);

  [[nodiscard]] IoErrorKind kind() const { return kind_; }
  [[nodiscard]] int error_number() const { return error_number_; }
  [[nodiscard]] const std::filesystem::path& file() const { return file_; }
  [[nodiscard]] int64_t offset() const { return offset_; }

 private:
  IoErrorKind kind_;
  int error_number_;
  std::filesystem::path file_;
  int64_t offset_;
};

// "No space left on device (ENOSPC)": strerror with the symbolic name, which
// is what one searches for.
[[nodiscard]] std::string describe_errno(int error_number);

}  // namespace stowage::executor
