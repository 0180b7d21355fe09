// An io_uring with registered, aligned staging buffers that pushes a run of
// block requests through at most queue_depth at a time, resubmitting the
// rest of a short transfer and retrying -EAGAIN. It holds twice queue_depth
// buffers so that the CPU fills (or checks) one block while queue_depth
// others are in the device: without that, the device idles during every
// copy and checksum. A job may also name memory of its own for a block
// (the caller's aligned buffer), which then skips the staging copy. It knows files only by
// index and knows nothing of regions or checksums: BlockStore gives it a
// BlockJob that says where each block goes, fills the staging buffer before
// a write and checks it after a read.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "executor/nvme/aligned_buffer.h"
#include "executor/nvme/io_error.h"

struct io_uring;  // liburing's; kept out of this header

namespace stowage::executor {

enum class IoOp { kRead, kWrite };

// One block's transfer: file (an index into the ring's fds), byte offset in
// it, length. Under O_DIRECT all three of offset, bytes and the buffer are
// multiples of 4096.
struct BlockRequest {
  int file = 0;
  int64_t offset = 0;
  int64_t bytes = 0;
};

// One submission as the fault hook sees it. A retry after -EAGAIN, or the
// remainder of a short transfer, is another attempt.
struct IoAttempt {
  IoOp op = IoOp::kRead;
  int file = 0;
  int64_t offset = 0;
  int64_t bytes = 0;
};

// Fault injection, for tests and the executor's faulty backend (STYLE.md
// §13). Called before every attempt. Return
//   0                 to let it reach the disk;
//   a negative errno  to complete it with that error, the disk untouched
//                     (-ENOSPC, -EIO; -EAGAIN is retried like a real one);
//   0 < n < bytes     to transfer only the first n bytes (a multiple of 4096
//                     under O_DIRECT), as a short read or write does.
// Runs on the thread calling read() or write(); must be thread-safe if both
// directions use it concurrently.
using FaultHook = std::function<int64_t(const IoAttempt&)>;

// What a run does per block. Blocks are numbered 0..count-1 in run().
class BlockJob {
 public:
  virtual ~BlockJob() = default;
  [[nodiscard]] virtual BlockRequest request(int64_t block) = 0;
  // Memory the block may move to or from directly, skipping the copy
  // through a staging buffer: request(block).bytes long and 4096-aligned
  // (checked). Empty: use a staging buffer. For writes the kernel only
  // reads it.
  [[nodiscard]] virtual std::span<std::byte> direct(int64_t /*block*/) { return {}; }
  // Writes only: `memory` (the staging buffer, or direct(block)) is about to
  // be written; copy block `block` into it if it is staging.
  virtual void fill(int64_t block, std::span<std::byte> memory) = 0;
  // Reads only: `memory` holds block `block` as read; check it and, if it
  // is staging, copy it out. May throw (a checksum mismatch); run()
  // rethrows it.
  virtual void drain(int64_t block, std::span<const std::byte> memory) = 0;
};

// The first request that failed in a run.
struct IoFailure {
  int64_t block = 0;
  BlockRequest request;
  int64_t done = 0;  // bytes of it transferred before the failure
  IoErrorKind kind = IoErrorKind::kIo;
  int error_number = 0;  // positive errno; 0 for kUnexpectedEof
};

struct IoRunReport {
  int64_t completed = 0;      // blocks fully transferred
  int64_t resubmissions = 0;  // short-transfer remainders and EAGAIN retries
  int max_in_flight = 0;      // most requests in the kernel at once (<= queue_depth)
  std::optional<IoFailure> failure;
};

class IoRing {
 public:
  // `fds` stay owned by the caller and open while the ring lives. Staging
  // memory: 2 * queue_depth * buffer_bytes, 4096-aligned, registered with the
  // kernel (io_uring_register_buffers) so that reads and writes skip the
  // per-request page pinning; the fds are registered too. Either
  // registration failing (e.g. RLIMIT_MEMLOCK on old kernels) falls back to
  // plain requests. Throws IoError (kSetup) when io_uring is unavailable.
  IoRing(std::span<const int> fds, int queue_depth, int64_t buffer_bytes, FaultHook fault);
  ~IoRing();
  IoRing(const IoRing&) = delete;
  IoRing& operator=(const IoRing&) = delete;

  // Transfers blocks 0..count-1 of `job`, submitted in order, at most
  // queue_depth in flight; each block's request must fit buffer_bytes.
  // Returns when every block is done or, after the first failure, when every
  // request still in flight has completed (no buffer is left to the kernel);
  // no new block starts after a failure. An exception from the job is
  // rethrown the same way, after draining. One thread at a time.
  [[nodiscard]] IoRunReport run(IoOp op, int64_t count, BlockJob& job);

 private:
  struct Slot {
    int64_t block = -1;
    BlockRequest request;
    std::byte* memory = nullptr;  // the slot's staging buffer or the job's direct memory
    bool registered = false;      // memory is a registered (fixed) buffer
    int64_t done = 0;
    int retries = 0;
  };

  [[nodiscard]] bool stopping() const;
  [[nodiscard]] bool submit_one();
  [[nodiscard]] bool process_one();
  void start(int slot);
  void issue(int slot);
  void complete(int slot, int64_t result);
  void fail(int slot, IoErrorKind kind, int error_number);
  void flush();
  void reap();
  void wait_for_completion();
  void discard_pending();
  [[nodiscard]] std::span<std::byte> memory(int slot) const;

  std::unique_ptr<io_uring> ring_;
  std::vector<int> fds_;
  int64_t buffer_bytes_;
  FaultHook fault_;
  AlignedBuffer staging_;
  bool fixed_buffers_ = false;
  bool fixed_files_ = false;
  int queue_depth_;
  std::vector<Slot> slots_;
  std::vector<int> free_slots_;
  std::deque<int> filled_;                       // writes: staged, waiting for room in the device
  std::deque<int> arrived_;                      // reads: transferred, waiting to be drained
  std::vector<std::pair<int, int64_t>> reaped_;  // (slot, cqe->res) of one reap

  // State of the run in progress.
  IoOp op_ = IoOp::kRead;
  BlockJob* job_ = nullptr;
  int64_t count_ = 0;
  int64_t next_ = 0;
  int in_flight_ = 0;    // requests given to the kernel, not yet reaped
  int unsubmitted_ = 0;  // prepared in the SQ, not yet submitted
  IoRunReport report_;
  std::exception_ptr job_error_;
};

}  // namespace stowage::executor
