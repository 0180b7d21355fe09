// A checkpoint file being written: appends with the fault-injection hook
// consulted before every write, then fsync and close. Every failure throws
// CheckpointWriteError naming the file and the blob. Also fsync of a
// directory, which makes a rename or a new entry durable (POSIX fsync(2)).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string_view>

namespace stowage::executor {

// Called before each write(2) with the file's path and the offset the write
// starts at. Returns 0 to let it happen, or a negative errno (-ENOSPC) to fail
// it as the OS would. A test seam; production leaves it empty.
using WriteFaultHook = std::function<int(std::string_view file, int64_t offset)>;

class OutputFile {
 public:
  // Creates `path`, which must not exist (O_EXCL). hook may be null or empty.
  OutputFile(std::filesystem::path path, const WriteFaultHook* hook);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Appends all of `bytes`; `blob` names what they belong to, for errors.
  void append(std::span<const std::byte> bytes, std::string_view blob);
  // Appends zeros until size() is a multiple of `alignment`; `blob` is the
  // one the padding precedes, for errors.
  void pad_to_multiple(int64_t alignment, std::string_view blob);
  // Bytes written so far.
  [[nodiscard]] int64_t size() const { return size_; }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // fsync then close; the file is durable once this returns.
  void sync_and_close();

 private:
  void write_chunk(std::span<const std::byte> chunk, std::string_view blob);

  std::filesystem::path path_;
  const WriteFaultHook* hook_;
  int fd_ = -1;
  int64_t size_ = 0;
};

// fsync(2) on a directory, so the entries created or renamed in it survive
// a power loss. Throws CheckpointWriteError.
void sync_directory(const std::filesystem::path& dir);

}  // namespace stowage::executor
