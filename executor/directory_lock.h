// Stowage's claim on a directory it writes into (a checkpoint root, an NVMe
// directory): the file `stowage.lock` there, held with flock(2) for as long
// as the owner lives, holding the owner's pid. A second run on the same
// directory is refused at once, naming the first (issue 12), instead of the
// two destroying each other's files. flock is released by the kernel when
// the process dies, so a SIGKILLed run leaves no stale claim, and the next
// run removes the files it recorded as created (record_created).
#pragma once

#include <filesystem>
#include <string>

#include "core/diagnostic.h"

namespace stowage::executor {

inline constexpr const char* kLockFileName = "stowage.lock";

class DirectoryLock {
 public:
  // Creates `dir` if missing and takes its lock. Fails (diagnostics naming
  // the directory) when another process or another DirectoryLock of this
  // process holds it (the message gives the holder's pid), when a
  // `stowage.lock` that is not Stowage's is in the way (never overwritten),
  // or when the directory cannot be created or written. `purpose` says what
  // the directory is for in messages: "checkpoint directory".
  [[nodiscard]] static core::Result<DirectoryLock> acquire(const std::filesystem::path& dir,
                                                           const std::string& purpose);

  // Removes the lock file and releases the lock.
  ~DirectoryLock();
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

  // Notes in the lock file that this run created `file` (a file directly
  // in dir(), e.g. stowage-0.blocks), with its device and inode. If the run
  // dies without cleaning up (SIGKILL), the next acquire() of the directory
  // removes that file, and only if it is still that very file: a file of
  // the same name made by anyone else is left alone. Best effort.
  void record_created(const std::filesystem::path& file);

 private:
  DirectoryLock(std::filesystem::path dir, int fd);
  void release();

  std::filesystem::path dir_;
  int fd_ = -1;
};

}  // namespace stowage::executor
