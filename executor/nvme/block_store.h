// The executor's NVMe tier: named regions of one or more files (one per
// drive, blocks striped across them) read and written with O_DIRECT through
// io_uring, every block checksummed (CRC32C) on write and verified on every
// read, so that bytes from disk are never returned unverified (issue 5,
// item 5). The checksums live in memory: the files are scratch space for one
// run and are removed when the store closes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/units.h"
#include "executor/nvme/direct_file.h"
#include "core/timeline.h"
#include "executor/nvme/io_ring.h"

namespace stowage::executor {

struct BlockStoreOptions {
  // One directory per drive, e.g. {"/mnt/nvme0/stowage", "/mnt/nvme1/stowage"};
  // created if missing. Global block g lives in directories[g % n], at byte
  // (g / n) * block_bytes of that directory's file, stowage-<i>.blocks. At
  // most one open store per directory, in any process: open() takes the
  // directory's DirectoryLock and never overwrites an existing file.
  std::vector<std::filesystem::path> directories;
  // The unit of I/O and of checksumming, e.g. 1 MiB. A multiple of 4096
  // (O_DIRECT alignment), at most 256 MiB.
  core::Bytes block_bytes{int64_t{1} << 20};
  // Block requests in flight per direction, 1..1024, e.g. 8 (the plan's
  // nvme_queue_depth): one device queue per direction, shared by every
  // region being read (or written) at once, kept full across the boundary
  // from one region to the next. Each direction holds 2 * queue_depth *
  // block_bytes of staging memory.
  int queue_depth = 8;
  // A filesystem that refuses O_DIRECT (tmpfs) is an error unless this is
  // set; then the page cache is used. For tests only.
  bool allow_buffered = false;
  // Fault injection (tests, the executor's faulty backend); see FaultHook.
  FaultHook fault;
};

// Every problem with `options`, all at once (bad queue depth, block size,
// no directory); empty when they are usable.
[[nodiscard]] core::Diagnostics validate(const BlockStoreOptions& options);

// A reserved region: a run of consecutive global blocks. The last block is
// padded on disk to a multiple of 4096 bytes. A value; only the store that
// made it may use it.
struct Extent {
  int64_t region = -1;      // 0, 1, ... in reservation order
  core::Bytes bytes;        // the region's size, as reserved
  int64_t first_block = 0;  // global index of its first block
  int64_t blocks = 0;       // ceil(bytes / block_bytes)
};

// Where one block of a region rests, for messages and tests.
struct BlockPlace {
  std::filesystem::path file;
  int64_t offset = 0;  // bytes from the start of the file
  core::Bytes bytes;   // on disk: block_bytes, or the padded tail of the last block
};

// Totals since open. Bytes count what callers asked for (not the padding);
// ops count block requests completed.
struct IoStats {
  core::Bytes bytes_read;
  core::Bytes bytes_written;
  int64_t read_ops = 0;
  int64_t write_ops = 0;
  int64_t resubmissions = 0;  // short-transfer remainders and EAGAIN retries
  core::Seconds read_time;    // wall time spent inside read()
  core::Seconds write_time;   // wall time spent inside write()
};

// Threads: each direction has one io_uring, served by a thread of its own
// (IoQueue); read() and write() may be called from any number of threads at
// once (the nvme.read lane's slots), and their regions share the
// direction's queue depth in the order they were called. The calling thread
// is not idle meanwhile: it checksums the blocks a write moves straight
// from its memory, and verifies those a read moves straight into it as
// they arrive, so that the queue's thread only moves blocks (and copies
// and checksums the few that go through staging). reserve() and
// stats() may be called from any thread. A region must not be
// read while it is being written: the schedule orders those (if it does not,
// the read either sees the region as unwritten or fails its checksums; it
// never returns mixed data unnoticed).
//
// Errors: bad options -> open() returns diagnostics. The machine failing
// (cannot create a file, ENOSPC at reserve, EIO or any error a request
// completes with, end of file, checksum mismatch) -> IoError naming file,
// offset, bytes, region, block and strerror. Caller bugs (an extent of
// another store, a span of the wrong size, reading a region never written
// or whose last write failed) -> std::logic_error.
class BlockStore {
 public:
  // Creates the directories and files and sets up both rings. Throws IoError
  // (kDirectIoUnsupported, naming the directory, when O_DIRECT is refused
  // and allow_buffered is off; kSetup otherwise, e.g. a directory another
  // store holds, naming its process, or a stowage-<i>.blocks already there).
  [[nodiscard]] static core::Result<BlockStore> open(const BlockStoreOptions& options);

  BlockStore(BlockStore&&) noexcept;
  BlockStore& operator=(BlockStore&&) noexcept;
  ~BlockStore();  // removes the files

  // Reserves `bytes` (>= 0) under `name` (e.g. "adam_m layers.3", used in
  // messages) and allocates the space on disk now, so that a full disk
  // shows here: throws IoError (kSetup, ENOSPC).
  [[nodiscard]] Extent reserve(std::string name, core::Bytes bytes);

  // Writes all of the region: data.size() == extent.bytes. Returns when it
  // is on disk (O_DIRECT: in the device, not necessarily durable across
  // power loss; no fsync, the files do not outlive the run). A 4096-aligned
  // `data` (a pinned buffer) is written from directly, without a staging
  // copy, except a last block that needs padding. Returns the queue depth
  // the device had while this region's blocks moved.
  core::QueueDepth write(const Extent& extent, std::span<const std::byte> data);

  // Reads all of the region into `out` (out.size() == extent.bytes),
  // verifying every block. On any error `out` holds unspecified bytes. A
  // 4096-aligned `out` is read into directly, without a staging copy, and
  // verified there. Returns the queue depth the device had meanwhile.
  core::QueueDepth read(const Extent& extent, std::span<std::byte> out);

  [[nodiscard]] IoStats stats() const;
  [[nodiscard]] IoMode mode() const;  // kBuffered only with allow_buffered on tmpfs & co.
  [[nodiscard]] const std::string& name(const Extent& extent) const;
  // Block `block` (0-based within the region) of `extent`.
  [[nodiscard]] BlockPlace place(const Extent& extent, int64_t block) const;
  // The store's files, one per directory, in stripe order.
  [[nodiscard]] std::vector<std::filesystem::path> files() const;

 private:
  struct Impl;
  explicit BlockStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stowage::executor
