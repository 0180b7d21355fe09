// Writes an output file so that a failure (full disk, missing folder) never
// leaves a half-written file where a good one was: the text goes to a
// temporary file beside the target, which is renamed over it only once
// complete.
#pragma once

#include <filesystem>
#include <string>

#include "core/diagnostic.h"

namespace stowage::cli {

// Empty diagnostics on success; otherwise one naming the file and the reason.
core::Diagnostics write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace stowage::cli
