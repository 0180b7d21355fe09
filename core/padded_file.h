// A whole input file mapped into memory with zero bytes after its end, for
// parsers that read past the end in blocks (simdjson: core/trace_events.h).
// Implemented in text_file.cpp beside read_text_file(), whose checks it
// shares (issue 12: a regular file, a size limit).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>

#include "core/diagnostic.h"
#include "core/units.h"

namespace stowage::core {

// A whole file's bytes mapped read-only, followed by at least `padding`
// zero bytes (parsers such as simdjson read past the end in blocks). The
// file's pages are mapped, not copied; a file truncated while mapped is
// undefined behaviour, as with any mapping. Owns the mapping (RAII).
class PaddedText {
 public:
  PaddedText() = default;
  PaddedText(PaddedText&& other) noexcept;
  PaddedText& operator=(PaddedText&& other) noexcept;
  PaddedText(const PaddedText&) = delete;
  PaddedText& operator=(const PaddedText&) = delete;
  ~PaddedText();

  // `text` copied, with the padding after it.
  [[nodiscard]] static PaddedText copy_of(std::string_view text, size_t padding);
  [[nodiscard]] std::string_view text() const { return {base_, size_}; }

 private:
  friend Result<PaddedText> map_text_file(const std::filesystem::path&, Bytes, size_t);
  char* base_ = nullptr;
  size_t size_ = 0;    // the text's bytes
  size_t mapped_ = 0;  // bytes mapped at base_, padding included
};

// `path` mapped with read_text_file()'s checks, and `padding` zero bytes after it.
[[nodiscard]] Result<PaddedText> map_text_file(const std::filesystem::path& path, Bytes max_bytes, size_t padding);

}  // namespace stowage::core
