// IoError's constructor and errno descriptions.
#include "executor/nvme/io_error.h"

#include <cstring>
#include <utility>

namespace stowage::executor {

IoError::IoError(IoErrorKind kind, int error_number, std::filesystem::path file, int64_t offset,
                 const std::string& message)
    : std::runtime_error(message),
      kind_(kind),
      error_number_(error_number),
      file_(std::move(file)),
      offset_(offset) {}

std::string describe_errno(int error_number) {
  // strerrordesc_np/strerrorname_np (glibc 2.32) are thread-safe, unlike strerror.
  const char* text = strerrordesc_np(error_number);
  const char* name = strerrorname_np(error_number);
  std::string out = text != nullptr ? text : "unknown error " + std::to_string(error_number);
  if (name != nullptr) out += std::string(" (") + name + ")";
  return out;
}

}  // namespace stowage::executor
