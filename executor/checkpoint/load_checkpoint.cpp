#include "executor/checkpoint/load_checkpoint.h"

#include <algorithm>

#include "executor/checkpoint/checkpoint_reader.h"

namespace stowage::executor {

const Blob* Checkpoint::find(std::string_view name) const {
  const auto it = std::ranges::find(blobs, name, &Blob::name);
  return it == blobs.end() ? nullptr : &*it;
}

core::Result<Checkpoint> load_checkpoint(const std::filesystem::path& dir) {
  auto reader = CheckpointReader::open(dir);
  if (!reader) return std::unexpected(std::move(reader.error()));
  Checkpoint checkpoint{.metadata_json = reader->metadata_json()};
  core::Diagnostics problems;
  for (const ManifestBlob& entry : reader->blobs()) {
    Blob blob{.name = entry.name,
              .tier = entry.tier,
              .bytes = std::vector<std::byte>(static_cast<size_t>(entry.size.count()))};
    auto read = reader->read_blob(entry.name, blob.bytes);
    if (!read) problems.insert(problems.end(), read.error().begin(), read.error().end());
    checkpoint.blobs.push_back(std::move(blob));
  }
  if (!problems.empty()) return std::unexpected(std::move(problems));
  return checkpoint;
}

}  // namespace stowage::executor
