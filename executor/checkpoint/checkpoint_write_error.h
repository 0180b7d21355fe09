// The one exception a checkpoint save throws: the disk refused something
// (ENOSPC, EIO, EACCES, EFBIG). An environment failure, so a typed exception
// per STYLE.md §7, carrying the file, the blob being written and errno.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace stowage::executor {

class CheckpointWriteError : public std::runtime_error {
 public:
  // action says what failed ("cannot write"); blob may be empty when the
  // failure belongs to no blob (the manifest, a directory).
  // what(): "cannot write '/ck/step-000200.tmp-x1Y2z3/blobs.bin' (blob
  // 'layer3.adam_m'): No space left on device"
  CheckpointWriteError(std::string_view action, std::filesystem::path file, std::string blob,
                       int error_number);

  [[nodiscard]] const std::filesystem::path& file() const { return file_; }
  [[nodiscard]] const std::string& blob() const { return blob_; }
  [[nodiscard]] int error_number() const { return error_number_; }

 private:
  std::filesystem::path file_;
  std::string blob_;
  int error_number_;
};

}  // namespace stowage::executor
