#include "executor/piece_workers.h"

#include <algorithm>
#include <chrono>
#include <system_error>

#include <unistd.h>

namespace stowage::executor {
namespace {

// How long a thread polls before it sleeps: a worker for the next job after
// finishing one, the caller for the workers' last piece. About a tenth of
// a 1M-parameter step on two threads (0.3 ms). Sleeping at once, both
// handoffs went through the kernel: `cpu_adam_once --params=1048576
// --threads=2`, 8 processes each, alternating, medians 266-367 us against
// 232-305 with the poll (docs/performance.md).
constexpr auto kPollFor = std::chrono::microseconds(30);

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Whether `ready` became true within kPollFor.
template <class Ready>
bool poll_briefly(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + kPollFor;
  for (int spins = 0;; ++spins) {
    if (ready()) return true;
    if (spins % 64 == 63 && std::chrono::steady_clock::now() >= until) return false;
    relax();
  }
}

}  // namespace

PieceWorkers& PieceWorkers::shared() {
  // Never destroyed: its sleeping threads end with the process, and no
  // static destructor joins threads that another static may still use.
  static auto* workers = new PieceWorkers;
  return *workers;
}

int PieceWorkers::started() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(threads_.size());
}

bool PieceWorkers::try_run(int helpers, const std::function<void()>& take) {
  // A child of fork() has none of its parent's threads: it starts its own.
  if (::getpid() != owner_) return false;
  std::unique_lock job(job_, std::try_to_lock);
  if (!job) return false;
  {
    std::lock_guard lock(mutex_);
    const size_t before = threads_.size();
    while (static_cast<int>(threads_.size()) < helpers) {
      try {
        // A new worker has seen every job so far: it waits for the next.
        threads_.emplace_back([this, index = static_cast<int>(threads_.size()), seen = generation_.load()] {
          loop(index, seen);
        });
        handles_.push_back(threads_.back().native_handle());
      } catch (const std::system_error&) {
        break;
      }
    }
    placement_.place(handles_, threads_.size() != before);  // new workers have the caller's mask
    take_ = &take;
    wanted_ = std::min(helpers, static_cast<int>(threads_.size()));
    running_ = wanted_;
    ++generation_;
  }
  start_.notify_all();
  take();
  poll_briefly([this] { return running_ == 0; });
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return running_ == 0; });
  take_ = nullptr;
  return true;
}

void PieceWorkers::loop(int index, uint64_t seen) {
  std::unique_lock lock(mutex_);
  for (bool worked = false;;) {
    // After a job it ran: the next is likely to follow at once.
    if (worked && generation_ == seen) {
      lock.unlock();
      poll_briefly([&] { return generation_ != seen; });
      lock.lock();
    }
    start_.wait(lock, [&] { return generation_ != seen; });
    seen = generation_;
    worked = index < wanted_;
    if (!worked) continue;  // not needed for this job
    const std::function<void()>* take = take_;
    lock.unlock();
    (*take)();
    lock.lock();
    if (--running_ == 0) done_.notify_one();
  }
}

}  // namespace stowage::executor
