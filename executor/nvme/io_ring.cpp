// The submission loop. Each turn it reaps what completed (no system call:
// the completion ring is shared memory), tops the device up to queue_depth,
// and only then does one block's CPU work (a write's copy and checksum, a
// read's check and copy out), so the device always has queue_depth requests
// while the CPU works. Completions are collected first and handled after the
// completion queue is advanced, so handling (which may queue resubmissions)
// never races the CQ ring.
#include "executor/nvme/io_ring.h"

#include <liburing.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace stowage::executor {
namespace {

// A device that keeps answering -EAGAIN is not going to stop; after this
// many retries of one attempt the error is reported as it is.
constexpr int kMaxRetries = 64;

// Staging buffers per queue slot: one set in the device, one for the CPU.
constexpr int kBuffersPerSlot = 2;

}  // namespace

IoRing::IoRing(std::span<const int> fds, int queue_depth, int64_t buffer_bytes, FaultHook fault)
    : ring_(std::make_unique<io_uring>()),
      fds_(fds.begin(), fds.end()),
      buffer_bytes_(buffer_bytes),
      fault_(std::move(fault)),
      staging_(static_cast<size_t>(kBuffersPerSlot * queue_depth) * static_cast<size_t>(buffer_bytes)),
      queue_depth_(queue_depth),
      slots_(static_cast<size_t>(kBuffersPerSlot * queue_depth)) {
  // COOP_TASKRUN (Linux 5.19): completions are posted when this thread next
  // enters the kernel instead of by interrupting it, which it does often
  // anyway. Older kernels refuse the flag: then without it.
  int rc = io_uring_queue_init(static_cast<unsigned>(queue_depth), ring_.get(), IORING_SETUP_COOP_TASKRUN);
  if (rc == -EINVAL) rc = io_uring_queue_init(static_cast<unsigned>(queue_depth), ring_.get(), 0);
  if (rc < 0) {
    ring_.reset();
    throw IoError(IoErrorKind::kSetup, -rc, {}, -1,
                  "nvme: cannot set up an io_uring of depth " + std::to_string(queue_depth) + ": " +
                      describe_errno(-rc) +
                      " (needs Linux >= 5.6, not disabled by sysctl kernel.io_uring_disabled or seccomp)");
  }
  std::vector<iovec> buffers(slots_.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    buffers[i] = {staging_.data() + i * static_cast<size_t>(buffer_bytes), static_cast<size_t>(buffer_bytes)};
  }
  fixed_buffers_ =
      io_uring_register_buffers(ring_.get(), buffers.data(), static_cast<unsigned>(buffers.size())) == 0;
  fixed_files_ = io_uring_register_files(ring_.get(), fds_.data(), static_cast<unsigned>(fds_.size())) == 0;
  for (int i = static_cast<int>(slots_.size()) - 1; i >= 0; --i) free_slots_.push_back(i);
  reaped_.reserve(slots_.size());
}

IoRing::~IoRing() {
  if (ring_) io_uring_queue_exit(ring_.get());
}

IoRunReport IoRing::run(IoOp op, int64_t count, BlockJob& job) {
  op_ = op;
  job_ = &job;
  count_ = count;
  next_ = 0;
  report_ = {};
  job_error_ = nullptr;
  for (;;) {
    reap();
    if (submit_one()) continue;
    flush();
    if (process_one()) continue;
    if (in_flight_ == 0) break;
    wait_for_completion();
  }
  discard_pending();
  job_ = nullptr;
  if (job_error_) std::rethrow_exception(std::exchange(job_error_, nullptr));
  return report_;
}

bool IoRing::stopping() const {
  return report_.failure.has_value() || job_error_ != nullptr;
}

// Gives the device one more request if it has room: a staged write, or the
// next block to read.
bool IoRing::submit_one() {
  if (stopping() || in_flight_ >= queue_depth_) return false;
  if (op_ == IoOp::kWrite) {
    if (filled_.empty()) return false;
    const int s = filled_.front();
    filled_.pop_front();
    issue(s);
    return true;
  }
  if (next_ >= count_ || free_slots_.empty()) return false;
  const int s = free_slots_.back();
  free_slots_.pop_back();
  start(s);
  issue(s);
  return true;
}

// One block's CPU work: check and copy out a read that arrived, or stage
// the next write (at most queue_depth staged ahead).
bool IoRing::process_one() {
  if (stopping()) return false;
  if (op_ == IoOp::kRead) {
    if (arrived_.empty()) return false;
    const int s = arrived_.front();
    arrived_.pop_front();
    const Slot& slot = slots_[static_cast<size_t>(s)];
    try {
      job_->drain(slot.block, memory(s));
    } catch (...) {
      job_error_ = std::current_exception();
    }
    free_slots_.push_back(s);
    return true;
  }
  if (next_ >= count_ || free_slots_.empty() || std::ssize(filled_) >= queue_depth_) return false;
  const int s = free_slots_.back();
  free_slots_.pop_back();
  start(s);
  const Slot& slot = slots_[static_cast<size_t>(s)];
  try {
    job_->fill(slot.block, memory(s));
    filled_.push_back(s);
  } catch (...) {
    job_error_ = std::current_exception();
    free_slots_.push_back(s);
  }
  return true;
}

void IoRing::start(int s) {
  const int64_t block = next_++;
  Slot& slot = slots_[static_cast<size_t>(s)];
  slot = {.block = block, .request = job_->request(block)};
  if (slot.request.bytes <= 0 || slot.request.bytes > buffer_bytes_) {
    throw std::logic_error("nvme: block request of " + std::to_string(slot.request.bytes) +
                           " bytes does not fit a staging buffer of " + std::to_string(buffer_bytes_));
  }
  const std::span<std::byte> direct = job_->direct(block);
  if (direct.empty()) {
    slot.memory = staging_.data() + static_cast<size_t>(s) * static_cast<size_t>(buffer_bytes_);
    slot.registered = fixed_buffers_;
    return;
  }
  if (std::ssize(direct) != slot.request.bytes ||
      reinterpret_cast<uintptr_t>(direct.data()) % kDirectIoAlignment != 0) {
    throw std::logic_error("nvme: direct memory for block " + std::to_string(block) + " is not " +
                           std::to_string(slot.request.bytes) + " bytes aligned at 4096");
  }
  slot.memory = direct.data();
}

// Prepares what is left of the slot's request, or completes it at once with
// the error the fault hook injects.
void IoRing::issue(int s) {
  Slot& slot = slots_[static_cast<size_t>(s)];
  const IoAttempt attempt{.op = op_,
                          .file = slot.request.file,
                          .offset = slot.request.offset + slot.done,
                          .bytes = slot.request.bytes - slot.done};
  int64_t bytes = attempt.bytes;
  if (fault_) {
    const int64_t injected = fault_(attempt);
    if (injected < 0) return complete(s, injected);
    if (injected > 0 && injected < bytes) bytes = injected;
  }
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  if (sqe == nullptr)
    throw std::logic_error("nvme: io_uring submission queue full; more requests than its depth");
  std::byte* buffer = slot.memory + slot.done;
  const int fd = fixed_files_ ? attempt.file : fds_[static_cast<size_t>(attempt.file)];
  const auto length = static_cast<unsigned>(bytes);
  const auto offset = static_cast<uint64_t>(attempt.offset);
  if (op_ == IoOp::kRead) {
    if (slot.registered)
      io_uring_prep_read_fixed(sqe, fd, buffer, length, offset, s);
    else
      io_uring_prep_read(sqe, fd, buffer, length, offset);
  } else {
    if (slot.registered)
      io_uring_prep_write_fixed(sqe, fd, buffer, length, offset, s);
    else
      io_uring_prep_write(sqe, fd, buffer, length, offset);
  }
  if (fixed_files_) sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(s));
  ++in_flight_;
  ++unsubmitted_;
  report_.max_in_flight = std::max(report_.max_in_flight, in_flight_);
}

void IoRing::complete(int s, int64_t result) {
  Slot& slot = slots_[static_cast<size_t>(s)];
  if ((result == -EAGAIN || result == -EINTR) && slot.retries < kMaxRetries) {
    ++slot.retries;
    ++report_.resubmissions;
    return issue(s);
  }
  if (result < 0) return fail(s, IoErrorKind::kIo, static_cast<int>(-result));
  // 0 bytes: end of file for a read; for a write the kernel made no
  // progress, which repeating would not change.
  if (result == 0) {
    return op_ == IoOp::kRead ? fail(s, IoErrorKind::kUnexpectedEof, 0) : fail(s, IoErrorKind::kIo, EIO);
  }
  slot.done += result;
  if (slot.done < slot.request.bytes) {
    slot.retries = 0;
    ++report_.resubmissions;
    return issue(s);
  }
  ++report_.completed;
  if (op_ == IoOp::kRead)
    arrived_.push_back(s);
  else
    free_slots_.push_back(s);
}

void IoRing::fail(int s, IoErrorKind kind, int error_number) {
  const Slot& slot = slots_[static_cast<size_t>(s)];
  if (!report_.failure) {
    report_.failure = IoFailure{.block = slot.block,
                                .request = slot.request,
                                .done = slot.done,
                                .kind = kind,
                                .error_number = error_number};
  }
  free_slots_.push_back(s);
}

void IoRing::flush() {
  if (unsubmitted_ == 0) return;
  int rc = io_uring_submit(ring_.get());
  while (rc == -EINTR || rc == -EAGAIN) rc = io_uring_submit(ring_.get());
  if (rc < 0) {
    // The kernel refused the submission itself (not one request): nothing
    // sensible can continue on this ring.
    throw IoError(IoErrorKind::kIo, -rc, {}, -1, "nvme: io_uring_submit failed: " + describe_errno(-rc));
  }
  unsubmitted_ = 0;
}

// Handles every completion already posted; never blocks.
void IoRing::reap() {
  reaped_.clear();
  unsigned head = 0;
  io_uring_cqe* cqe = nullptr;
  io_uring_for_each_cqe(ring_.get(), head, cqe) {
    reaped_.emplace_back(static_cast<int>(io_uring_cqe_get_data64(cqe)), cqe->res);
  }
  io_uring_cq_advance(ring_.get(), static_cast<unsigned>(reaped_.size()));
  in_flight_ -= static_cast<int>(reaped_.size());
  for (const auto& [s, result] : reaped_) complete(s, result);
}

void IoRing::wait_for_completion() {
  flush();
  io_uring_cqe* cqe = nullptr;
  int rc = io_uring_wait_cqe(ring_.get(), &cqe);
  while (rc == -EINTR || rc == -EAGAIN) rc = io_uring_wait_cqe(ring_.get(), &cqe);
  if (rc < 0)
    throw IoError(IoErrorKind::kIo, -rc, {}, -1, "nvme: io_uring_wait_cqe failed: " + describe_errno(-rc));
}

// After a failure: staged writes that never went out and reads never
// drained give their buffers back.
void IoRing::discard_pending() {
  for (const int s : filled_) free_slots_.push_back(s);
  for (const int s : arrived_) free_slots_.push_back(s);
  filled_.clear();
  arrived_.clear();
}

std::span<std::byte> IoRing::memory(int s) const {
  const Slot& slot = slots_[static_cast<size_t>(s)];
  return {slot.memory, static_cast<size_t>(slot.request.bytes)};
}

}  // namespace stowage::executor
