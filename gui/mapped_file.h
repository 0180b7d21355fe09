// A read-only view of a whole file: mapped into memory where the OS allows,
// else read into a buffer. Traces of hundreds of megabytes are parsed in
// place, on several threads, without a copy. Owns the mapping (RAII).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/diagnostic.h"

namespace stowage::gui {

class MappedFile {
 public:
  // Opens `path`; an unreadable file is a diagnostic naming it and errno.
  [[nodiscard]] static core::Result<MappedFile> open(const std::filesystem::path& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // The file's bytes; valid while this object lives.
  [[nodiscard]] std::string_view text() const { return mapped_ ? std::string_view(mapped_, size_) : buffer_; }

 private:
  MappedFile() = default;
  void release();

  const char* mapped_ = nullptr;  // from mmap, or null when read into buffer_
  size_t size_ = 0;
  std::string buffer_;
};

}  // namespace stowage::gui
