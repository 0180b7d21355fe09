// A checkpoint file opened for reading (a regular file only: issue 12): its size and positioned reads
// straight into the caller's buffer. Failures are diagnostics naming the
// file, since a damaged checkpoint is bad input to the loader (STYLE.md §7).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "core/diagnostic.h"
#include "core/units.h"

namespace stowage::executor {

class InputFile {
 public:
  [[nodiscard]] static core::Result<InputFile> open(const std::filesystem::path& path);
  ~InputFile();
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Size in bytes when opened.
  [[nodiscard]] int64_t size() const { return size_; }
  // Fills all of `out` from `offset`; an error if the file ends first.
  [[nodiscard]] core::Result<void> read_at(int64_t offset, std::span<std::byte> out) const;

 private:
  InputFile(std::filesystem::path path, int fd, int64_t size);

  std::filesystem::path path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

// The whole of a small file (a manifest) as text; a diagnostic when it is
// larger than max_bytes (core::input_limit(InputKind::kManifest), 64 MiB
// unless STOWAGE_MAX_MANIFEST_BYTES says otherwise), checked before reading.
[[nodiscard]] core::Result<std::string> read_text_file(const std::filesystem::path& path, core::Bytes max_bytes);

}  // namespace stowage::executor
