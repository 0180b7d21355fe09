// Test helpers for checkpoint tests: a scratch directory removed at the end
// of the test, deterministic blob contents, and small file edits that
// damage a saved checkpoint the way a crash or a bad disk would.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace stowage::executor::testing {

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "stowage-ckpt-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// n bytes that differ from blob to blob (seed) and from byte to byte, so a
// blob read from the wrong offset or in the wrong order does not compare equal.
inline std::vector<std::byte> pattern_bytes(size_t n, uint32_t seed) {
  std::vector<std::byte> bytes(n);
  uint32_t x = seed * 2654435761u + 1;
  for (std::byte& b : bytes) {
    x = x * 1664525u + 1013904223u;  // Numerical Recipes LCG
    b = static_cast<std::byte>(x >> 24);
  }
  return bytes;
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// XORs the byte at `offset` of `path` with 0x01: one flipped bit.
inline void flip_bit(const std::filesystem::path& path, int64_t offset) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekg(offset);
  char c = 0;
  f.get(c);
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x01));
}

// Names in `dir`, for checking what a save left behind.
inline std::vector<std::string> entries_of(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace stowage::executor::testing
