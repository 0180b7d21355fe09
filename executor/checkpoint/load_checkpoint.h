// Loads a whole checkpoint into memory, all or nothing: either every blob
// with a verified checksum, or the list of everything wrong with it. For
// blobs too large to hold twice, use CheckpointReader (checkpoint_reader.h).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"

namespace stowage::executor {

struct Blob {
  std::string name;
  std::string tier;
  std::vector<std::byte> bytes;
};

struct Checkpoint {
  std::string metadata_json;  // the JSON object given at save, as text
  std::vector<Blob> blobs;    // in the order saved

  // nullptr if there is no blob of that name.
  [[nodiscard]] const Blob* find(std::string_view name) const;
};

// Reads and verifies dir (a path from save_checkpoint or find_latest).
// Errors name the manifest (with line:column for bad JSON), the truncated
// file, or the corrupt blob and its file.
[[nodiscard]] core::Result<Checkpoint> load_checkpoint(const std::filesystem::path& dir);

}  // namespace stowage::executor
