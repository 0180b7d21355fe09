#include "executor/piece_workers.h"

#include <algorithm>
#include <system_error>

#include <unistd.h>

namespace stowage::executor {

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
        threads_.emplace_back([this, index = static_cast<int>(threads_.size()), seen = generation_] {
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
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return running_ == 0; });
  take_ = nullptr;
  return true;
}

void PieceWorkers::loop(int index, uint64_t seen) {
  std::unique_lock lock(mutex_);
  for (;;) {
    start_.wait(lock, [&] { return generation_ != seen; });
    seen = generation_;
    if (index >= wanted_) continue;  // not needed for this job
    const std::function<void()>* take = take_;
    lock.unlock();
    (*take)();
    lock.lock();
    if (--running_ == 0) done_.notify_one();
  }
}

}  // namespace stowage::executor
