#include "executor/piece_workers.h"

#include <algorithm>
#include <system_error>

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

namespace stowage::executor {

PieceWorkers& PieceWorkers::shared() {
  // Never destroyed: its sleeping threads end with the process, and no
  // static destructor joins threads that another static may still use.
  static auto* workers = new PieceWorkers;
  return *workers;
}

PieceWorkers::PieceWorkers() : owner_(::getpid()) {
  // The main thread's mask (pid = the thread group's leader), not the first
  // caller's: a caller pinned to one CPU would leave its workers nowhere else.
  placing_ = ::sched_getaffinity(owner_, sizeof process_cpus_, &process_cpus_) == 0 &&
             CPU_COUNT(&process_cpus_) >= 2;
}

void PieceWorkers::keep_off(int cpu) {
  if (!placing_ || cpu < 0 || cpu == kept_off_) return;
  cpu_set_t elsewhere = process_cpus_;
  CPU_CLR(cpu, &elsewhere);
  if (CPU_COUNT(&elsewhere) == 0) elsewhere = process_cpus_;
  // A placement, not a condition of correctness: a worker the kernel will
  // not move (a cpuset changed under us) still takes pieces where it runs.
  for (std::jthread& t : threads_) (void)::pthread_setaffinity_np(t.native_handle(), sizeof elsewhere, &elsewhere);
  kept_off_ = cpu;
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
      } catch (const std::system_error&) {
        break;
      }
    }
    if (threads_.size() != before) kept_off_ = -1;  // new workers have the caller's mask
    keep_off(::sched_getcpu());
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
