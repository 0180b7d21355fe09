// manifest.json, the table of contents of one checkpoint: the format line,
// the caller's metadata, the data files with their sizes, and each blob's
// place and CRC32C. Written last, so its presence marks a checkpoint whose
// data is complete. Field by field in docs/formats/checkpoint.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/units.h"

namespace stowage::executor {

// v2: the manifest carries its own CRC32C (v1 manifests had none).
inline constexpr std::string_view kCheckpointFormat = "stowage/checkpoint/v2";
// The manifest's last key: the CRC32C of every byte before it, so a flipped
// byte anywhere in the manifest (a size, a tier, the metadata) is caught.
inline constexpr std::string_view kManifestChecksumKey = "manifest_crc32c";
inline constexpr std::string_view kManifestFileName = "manifest.json";

// A data file in the checkpoint directory and its exact size, so a
// truncated or overlong file is caught before any blob is read.
struct ManifestFile {
  std::string file;  // name inside the checkpoint directory: "blobs.bin"
  core::Bytes size;
};

struct ManifestBlob {
  std::string name;     // unique within the checkpoint: "layer3.adam_m"
  std::string tier;     // free-form, the executor's word: "gpu", "cpu", "nvme"
  core::Bytes size;     // length of the blob's bytes
  std::string file;     // one of Manifest::files
  core::Bytes offset;   // where the bytes start in `file`
  uint32_t crc32c = 0;  // of the `size` bytes at `offset` (crc32c.h)
};

struct Manifest {
  std::string metadata_json = "{}";  // a JSON object, as text: {"step": 200, "seed": 1234}
  std::vector<ManifestFile> files;
  std::vector<ManifestBlob> blobs;
};

// The manifest as JSON text, `format` first. Throws std::invalid_argument
// if metadata_json is not a JSON object or a name is not valid UTF-8 (a
// caller's bug, found before anything is written).
[[nodiscard]] std::string manifest_to_text(const Manifest& manifest);

// Seals the text of a JSON object as a manifest: appends the key
// manifest_crc32c, last, holding the CRC32C of every byte before that key
// (docs/formats/checkpoint.md). A text already sealed is sealed anew, for a
// test that edits a manifest on purpose. Throws std::invalid_argument when
// the text does not end with '}'.
[[nodiscard]] std::string seal_manifest_text(std::string_view text);

// Parses and checks a manifest read from `path` (used only in messages).
// Reports every problem at once; a JSON syntax error carries line:column. A
// manifest whose bytes do not give its manifest_crc32c is refused before any
// field is trusted.
[[nodiscard]] core::Result<Manifest> parse_manifest(std::string_view text, const std::string& path);

}  // namespace stowage::executor
