// Reads a saved checkpoint blob by blob into buffers the caller owns, so a
// resume needs no second copy of hundreds of MB. open() checks the manifest
// and the data files' sizes; each read checks the blob's CRC32C.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "core/diagnostic.h"
#include "core/units.h"
#include "executor/checkpoint/manifest.h"

namespace stowage::executor {

// A blob a loader needs, and the size it must have.
struct ExpectedBlob {
  std::string name;
  core::Bytes size;
};

class CheckpointReader {
 public:
  // Reads and checks dir/manifest.json and that every data file it lists
  // exists with exactly the size it gives. Reads no blob yet.
  [[nodiscard]] static core::Result<CheckpointReader> open(const std::filesystem::path& dir);

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  // The metadata given to save_checkpoint, a JSON object as text.
  [[nodiscard]] const std::string& metadata_json() const { return manifest_.metadata_json; }
  // Every blob, in the order saved.
  [[nodiscard]] std::span<const ManifestBlob> blobs() const { return manifest_.blobs; }
  // nullptr if the checkpoint has no blob of that name.
  [[nodiscard]] const ManifestBlob* find_blob(std::string_view name) const;

  // Reads blob `name` into `out` and verifies its checksum. out.size() must
  // equal the blob's size (std::invalid_argument otherwise). After an error
  // `out` holds unspecified bytes: call verify() first, or read into staging
  // memory, when live state must not be half overwritten.
  [[nodiscard]] core::Result<void> read_blob(std::string_view name, std::span<std::byte> out) const;

  // Whether every blob of `expected` is there with exactly its size, every
  // problem at once, reading no data: call it before verify(), so that a
  // checkpoint of another shape, or a manifest claiming a 50 GiB blob, is
  // refused before anything is read (issue 12).
  [[nodiscard]] core::Result<void> expect_blobs(std::span<const ExpectedBlob> expected) const;

  // Reads every blob through one bounded buffer and checks all checksums,
  // reporting every bad blob. Costs one extra pass over the data.
  [[nodiscard]] core::Result<void> verify() const;

 private:
  CheckpointReader(std::filesystem::path dir, Manifest manifest);
  // Where the piece of a blob starting at byte `done`, `n` bytes long, is read to.
  using ChunkPlace = std::function<std::span<std::byte>(size_t done, size_t n)>;

  // Reads `blob` into `out` (exactly its size) and checks its checksum.
  [[nodiscard]] core::Result<void> read_checked(const ManifestBlob& blob, std::span<std::byte> out) const;
  // Reads `blob` piece by piece to where `place` says, checking the checksum.
  [[nodiscard]] core::Result<void> read_into(const ManifestBlob& blob, const ChunkPlace& place) const;

  std::filesystem::path dir_;
  Manifest manifest_;
};

}  // namespace stowage::executor
