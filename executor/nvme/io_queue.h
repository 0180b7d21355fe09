// One direction's device queue: an IoRing served by a thread of its own and
// shared by every caller of that direction. Each call's run joins the queue
// behind those already there, and its blocks go to the device as soon as
// there is room, while the previous region's last blocks are still in
// flight: the device keeps the plan's queue depth across region boundaries,
// whichever lane slot issued the regions (issue 16, item 4). One queue per
// direction is also what the plan's nvme_queue_depth means: requests in
// flight per direction, however many regions are being moved at once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "executor/nvme/io_ring.h"

namespace stowage::executor {

class IoQueue {
 public:
  // As IoRing's constructor; also starts the serving thread. Throws IoError
  // (kSetup) when io_uring is unavailable.
  IoQueue(std::span<const int> fds, int queue_depth, int64_t buffer_bytes, FaultHook fault);
  ~IoQueue();  // waits for the runs already submitted, then stops the thread
  IoQueue(const IoQueue&) = delete;
  IoQueue& operator=(const IoQueue&) = delete;

  // A submitted run; wait() on it before the job goes away.
  class Ticket {
   public:
    Ticket(IoOp op, int64_t count, BlockJob& job) : run(op, count, job) {}

   private:
    friend class IoQueue;
    IoRun run;
    bool done = false;
    std::exception_ptr ring_error;  // the ring itself failed (submit or wait refused)
  };

  // Queues `count` blocks of `job` behind the runs already queued and
  // returns at once. Any thread.
  [[nodiscard]] std::unique_ptr<Ticket> submit(IoOp op, int64_t count, BlockJob& job);
  // Blocks until the run is finished; returns its report, or rethrows the
  // job's exception or the ring's IoError. Any thread; once per ticket.
  IoRunReport wait(Ticket& ticket);
  // submit and wait.
  IoRunReport run(IoOp op, int64_t count, BlockJob& job);

 private:
  void serve();
  void fail_everything(std::exception_ptr error);
  void hand_back(const std::vector<IoRun*>& finished);

  IoRing ring_;  // touched only by the serving thread (wake() excepted)
  std::mutex mutex_;
  std::condition_variable work_;  // the thread: submissions or stop
  std::condition_variable done_;  // callers: runs finished
  std::vector<Ticket*> pending_;  // submitted, not yet finished
  bool stopping_ = false;
  std::exception_ptr broken_;  // set once the ring failed: every later run fails with it
  std::jthread thread_;        // last: started when the rest exists
};

}  // namespace stowage::executor
