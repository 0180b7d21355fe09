#include "executor/checkpoint/checkpoint_write_error.h"

#include <cstring>

namespace stowage::executor {
namespace {

std::string describe(std::string_view action, const std::filesystem::path& file, const std::string& blob,
                     int error_number) {
  std::string text(action);
  text += " '" + file.string() + "'";
  if (!blob.empty()) text += " (blob '" + blob + "')";
  text += ": ";
  text += std::strerror(error_number);
  return text;
}

}  // namespace

CheckpointWriteError::CheckpointWriteError(std::string_view action, std::filesystem::path file,
                                           std::string blob, int error_number)
    : std::runtime_error(describe(action, file, blob, error_number)),
      file_(std::move(file)),
      blob_(std::move(blob)),
      error_number_(error_number) {}

}  // namespace stowage::executor
