// An io_uring with registered, aligned staging buffers that pushes block
// requests through at most queue_depth at a time, resubmitting the rest of a
// short transfer and retrying -EAGAIN. It holds twice queue_depth buffers so
// that the CPU fills (or checks) one block while queue_depth others are in
// the device: without that, the device idles during every copy and
// checksum. A job may also name memory of its own for a block (the caller's
// aligned buffer), which then skips the staging copy.
//
// Several runs (one region's read or write each) may be in the ring at once.
// They are served in the order they were added: a run's blocks start as soon
// as the device has room, which is while the run before it still has its last
// blocks in flight, so the device keeps queue_depth requests across the
// boundary between two regions instead of draining at the end of each
// (issue 16, item 4). It knows files only by index and knows nothing of
// regions or checksums: BlockStore gives it a BlockJob that says where each
// block goes, fills the staging buffer before a write and checks it after a
// read.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/timeline.h"
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
// Runs on the thread that drives the ring (an IoQueue's worker); must be
// thread-safe if two rings share it.
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
  // Called once when the run is over: every block done, or stopped by a
  // failure, or the ring itself broke. No fill or drain follows. Lets a
  // job whose caller waits on its blocks' progress stop waiting.
  virtual void finished() {}
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
  // Requests in the kernel, this run's and other runs' of the same ring,
  // from this run's first submission to its last completion: the most at
  // once (<= queue_depth) and the time-weighted mean. A run of many blocks
  // that only ever had one in flight shows max 1.
  core::QueueDepth depth;
  std::optional<IoFailure> failure;
};

// One run in a ring: `count` blocks of `job`, in order. Made by the caller,
// who keeps it (and the job) alive until finished() and then reads its
// report and error. Touched only by the thread that drives the ring.
class IoRun {
 public:
  IoRun(IoOp op, int64_t count, BlockJob& job) : op_(op), job_(&job), count_(count) {}
  IoRun(const IoRun&) = delete;
  IoRun& operator=(const IoRun&) = delete;

  [[nodiscard]] bool finished() const { return finished_; }
  [[nodiscard]] BlockJob& job() const { return *job_; }
  [[nodiscard]] const IoRunReport& report() const { return report_; }
  // An exception from the job (a checksum mismatch) or a caller bug found
  // in the run; null if none.
  [[nodiscard]] std::exception_ptr error() const { return error_; }

 private:
  friend class IoRing;
  [[nodiscard]] bool stopping() const { return report_.failure.has_value() || error_ != nullptr; }
  [[nodiscard]] bool blocks_left() const { return next_ < count_ && !stopping(); }
  // Its depth window: open from its first submission while it has requests
  // in the kernel or blocks still to start.
  [[nodiscard]] bool window_open() const { return first_ns_ && (in_kernel_ > 0 || blocks_left()); }

  IoOp op_;
  BlockJob* job_;
  int64_t count_;
  int64_t next_ = 0;    // the next block to start
  int holding_ = 0;     // slots it holds: staged, in the kernel, or arrived
  int in_kernel_ = 0;   // its requests given to the kernel, not yet reaped
  bool finished_ = false;
  IoRunReport report_;
  std::exception_ptr error_;
  // Its queue-depth window: from the first submission to the last completion.
  std::optional<int64_t> first_ns_;
  int64_t last_ns_ = 0;
  double depth_ns_ = 0;  // integral of requests in flight over the window
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
  // rethrown the same way, after draining. The ring must have no other run.
  [[nodiscard]] IoRunReport run(IoOp op, int64_t count, BlockJob& job);

  // The pieces run() is made of, for a thread that serves many runs (IoQueue).
  // post: `run` joins the ring behind the runs already in it, at the ring's
  // next chance to submit (even in the middle of an advance()), and a
  // wait() in progress returns. Any thread.
  void post(IoRun& run);
  // Does all the work that is ready without blocking (reaps, submits, fills
  // and drains) and appends the runs that finished to `finished`. Throws
  // IoError when the kernel refuses a submission: the ring is then unusable.
  void advance(std::vector<IoRun*>& finished);
  // Blocks until a request completes or wake() is called. Only when
  // advance() left runs unfinished or after a wake() is expected.
  void wait();
  // Makes a wait() in progress (or the next one) return. Any thread.
  void wake();
  // No run in the ring or posted to it. The driving thread only.
  [[nodiscard]] bool idle();

 private:
  struct Slot {
    IoRun* run = nullptr;
    int64_t block = -1;
    BlockRequest request;
    std::byte* memory = nullptr;  // the slot's staging buffer or the job's direct memory
    bool registered = false;      // memory is a registered (fixed) buffer
    int64_t done = 0;
    int retries = 0;
  };

  [[nodiscard]] bool submit_one();
  [[nodiscard]] bool process_one();
  [[nodiscard]] bool drain_one();
  [[nodiscard]] bool stage_one();
  [[nodiscard]] bool start(IoRun& run, int slot);
  void issue(int slot);
  void complete(int slot, int64_t result);
  void fail(int slot, IoErrorKind kind, int error_number);
  void release(int slot);
  void flush();
  void reap();
  void arm_wakeup();
  void account_depth();
  void collect_finished(std::vector<IoRun*>& finished);
  void take_posted();
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
  std::vector<IoRun*> active_;                   // runs taken in and not finished, in order
  std::mutex posted_mutex_;
  std::vector<IoRun*> posted_;  // posted from any thread, not yet taken in
  std::atomic<bool> any_posted_{false};

  int in_flight_ = 0;    // block requests given to the kernel, not yet reaped
  int unsubmitted_ = 0;  // prepared in the SQ, not yet submitted
  int64_t depth_since_ns_ = 0;  // when in_flight_ last changed

  // wake(): an eventfd the ring polls while it waits (one poll request,
  // outside in_flight_ and the queue depth).
  int wake_fd_ = -1;
  bool wake_armed_ = false;
};

}  // namespace stowage::executor
