// IoQueue's serving thread: takes new runs into the ring, advances it, waits
// in the kernel for a completion (or a wake-up from a new submission), and
// tells the callers whose runs finished. Callers post their runs to the
// ring (IoRing::post is thread-safe) and wait on their tickets under the
// mutex; everything else in the ring is the thread's.
#include "executor/nvme/io_queue.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace stowage::executor {

IoQueue::IoQueue(std::span<const int> fds, int queue_depth, int64_t buffer_bytes, FaultHook fault)
    : ring_(fds, queue_depth, buffer_bytes, std::move(fault)), thread_([this] { serve(); }) {}

IoQueue::~IoQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_one();
  // thread_ joins here: it leaves once the ring is idle and nothing is queued.
}

std::unique_ptr<IoQueue::Ticket> IoQueue::submit(IoOp op, int64_t count, BlockJob& job) {
  auto ticket = std::make_unique<Ticket>(op, count, job);
  {
    std::lock_guard lock(mutex_);
    if (broken_) {
      ticket->ring_error = broken_;
      ticket->done = true;
      job.finished();
      return ticket;
    }
    pending_.push_back(ticket.get());
    ring_.post(ticket->run);  // joins at the ring's next submission, even mid-advance
  }
  work_.notify_one();
  return ticket;
}

IoRunReport IoQueue::wait(Ticket& ticket) {
  {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return ticket.done; });
  }
  if (ticket.ring_error) std::rethrow_exception(ticket.ring_error);
  if (ticket.run.error()) std::rethrow_exception(ticket.run.error());
  return ticket.run.report();
}

IoRunReport IoQueue::run(IoOp op, int64_t count, BlockJob& job) {
  const std::unique_ptr<Ticket> ticket = submit(op, count, job);
  return wait(*ticket);
}

// The ring failed as a whole: every run in it fails with the error, and so
// does every later one. Requests the kernel still holds are left to it
// (they complete into memory whose callers are told the I/O failed).
void IoQueue::fail_everything(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    broken_ = error;
    for (Ticket* t : pending_) {
      t->ring_error = error;
      t->done = true;
      t->run.job().finished();
    }
    pending_.clear();
  }
  done_.notify_all();
}

// Marks the tickets of the runs that finished as done.
void IoQueue::hand_back(const std::vector<IoRun*>& finished) {
  {
    std::lock_guard lock(mutex_);
    std::erase_if(pending_, [&](Ticket* t) {
      if (std::ranges::find(finished, &t->run) == finished.end()) return false;
      t->done = true;
      return true;
    });
  }
  done_.notify_all();
}

void IoQueue::serve() {
  std::vector<IoRun*> finished;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping, and every run submitted is done
    }
    finished.clear();
    try {
      ring_.advance(finished);
      if (finished.empty()) ring_.wait();
    } catch (...) {
      fail_everything(std::current_exception());
      return;
    }
    if (!finished.empty()) hand_back(finished);
  }
}

}  // namespace stowage::executor
