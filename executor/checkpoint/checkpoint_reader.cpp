#include "executor/checkpoint/checkpoint_reader.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "core/text_file.h"
#include "executor/crc32c.h"
#include "executor/checkpoint/input_file.h"

namespace stowage::executor {
namespace {

// Reads go in pieces of this size so the checksum runs over bytes still in
// cache, and verify() needs only this much memory.
constexpr size_t kReadChunk = size_t{8} << 20;

std::string hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

std::unexpected<core::Diagnostics> errors_of(core::Diagnostics&& problems) {
  return std::unexpected(std::move(problems));
}

core::Result<Manifest> read_manifest(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / kManifestFileName;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return core::fail({{path.string(), 0, 0},
                       "manifest is missing: not a checkpoint, or one whose save did not finish",
                       "a directory written by save_checkpoint"});
  }
  const auto limit = core::input_limit(core::InputKind::kManifest);
  if (!limit) return errors_of(core::Diagnostics(limit.error()));
  auto text = executor::read_text_file(path, *limit);  // the checkpoint reader's, not core's
  if (!text) return errors_of(std::move(text.error()));
  return parse_manifest(*text, path.string());
}

// A data file shorter or longer than the manifest says was cut short by a
// crash or a full disk after the fact, or changed by something else.
void check_file_size(const std::filesystem::path& dir, const ManifestFile& file,
                     core::Diagnostics& problems) {
  const std::filesystem::path path = dir / file.file;
  auto opened = InputFile::open(path);
  if (!opened) {
    problems.insert(problems.end(), opened.error().begin(), opened.error().end());
    return;
  }
  if (opened->size() == file.size.count()) return;
  const bool shorter = opened->size() < file.size.count();
  problems.push_back({{path.string(), 0, 0},
                      "file " + path.string() + " is " + std::to_string(opened->size()) +
                          " bytes, manifest says " + std::to_string(file.size.count()) +
                          (shorter ? ": truncated checkpoint" : ": file grew after the checkpoint was saved"),
                      "the size recorded at save"});
}

}  // namespace

CheckpointReader::CheckpointReader(std::filesystem::path dir, Manifest manifest)
    : dir_(std::move(dir)), manifest_(std::move(manifest)) {}

core::Result<CheckpointReader> CheckpointReader::open(const std::filesystem::path& dir) {
  auto manifest = read_manifest(dir);
  if (!manifest) return errors_of(std::move(manifest.error()));
  core::Diagnostics problems;
  for (const ManifestFile& file : manifest->files) check_file_size(dir, file, problems);
  if (!problems.empty()) return errors_of(std::move(problems));
  return CheckpointReader(dir, std::move(*manifest));
}

const ManifestBlob* CheckpointReader::find_blob(std::string_view name) const {
  const auto it = std::ranges::find(manifest_.blobs, name, &ManifestBlob::name);
  return it == manifest_.blobs.end() ? nullptr : &*it;
}

core::Result<void> CheckpointReader::read_blob(std::string_view name, std::span<std::byte> out) const {
  const ManifestBlob* blob = find_blob(name);
  if (blob == nullptr) {
    return core::fail({{(dir_ / kManifestFileName).string(), 0, 0},
                       "checkpoint has no blob '" + std::string(name) + "'",
                       "a blob saved under that name"});
  }
  if (static_cast<int64_t>(out.size()) != blob->size.count()) {
    throw std::invalid_argument("read_blob('" + blob->name + "'): buffer of " + std::to_string(out.size()) +
                                " bytes for a blob of " + std::to_string(blob->size.count()));
  }
  return read_checked(*blob, out);
}

core::Result<void> CheckpointReader::read_checked(const ManifestBlob& blob, std::span<std::byte> out) const {
  return read_into(blob, [out](size_t done, size_t n) { return out.subspan(done, n); });
}

core::Result<void> CheckpointReader::read_into(const ManifestBlob& blob, const ChunkPlace& place) const {
  const std::filesystem::path path = dir_ / blob.file;
  auto file = InputFile::open(path);
  if (!file) return errors_of(std::move(file.error()));
  uint32_t crc = 0;
  const auto size = static_cast<size_t>(blob.size.count());
  for (size_t done = 0; done < size;) {
    const std::span<std::byte> chunk = place(done, std::min(kReadChunk, size - done));
    if (auto read = file->read_at(blob.offset.count() + static_cast<int64_t>(done), chunk); !read)
      return read;
    crc = crc32c_extend(crc, chunk);
    done += chunk.size();
  }
  if (crc == blob.crc32c) return {};
  return core::fail({{path.string(), 0, 0},
                     "blob '" + blob.name + "' (" + std::to_string(blob.size.count()) + " bytes at offset " +
                         std::to_string(blob.offset.count()) + " of " + path.string() + ") has CRC32C " +
                         hex32(crc) + ", manifest says " + hex32(blob.crc32c) + ": corrupt checkpoint",
                     "the bytes written at save"});
}

core::Result<void> CheckpointReader::expect_blobs(std::span<const ExpectedBlob> expected) const {
  core::Diagnostics problems;
  const std::string manifest = (dir_ / kManifestFileName).string();
  for (const ExpectedBlob& e : expected) {
    const ManifestBlob* blob = find_blob(e.name);
    if (blob == nullptr) {
      problems.push_back(
          {{manifest, 0, 0}, "checkpoint has no blob '" + e.name + "'", "a blob saved under that name"});
    } else if (blob->size != e.size) {
      problems.push_back({{manifest, 0, 0},
                          "blob '" + e.name + "' has " + std::to_string(blob->size.count()) + " bytes",
                          std::to_string(e.size.count()) + " bytes, as this plan and model need"});
    }
  }
  if (!problems.empty()) return errors_of(std::move(problems));
  return {};
}

core::Result<void> CheckpointReader::verify() const {
  core::Diagnostics problems;
  std::vector<std::byte> scratch(kReadChunk);
  for (const ManifestBlob& blob : manifest_.blobs) {
    auto checked = read_into(blob, [&scratch](size_t, size_t n) { return std::span(scratch).first(n); });
    if (!checked) problems.insert(problems.end(), checked.error().begin(), checked.error().end());
  }
  if (!problems.empty()) return errors_of(std::move(problems));
  return {};
}

}  // namespace stowage::executor
