// Threads kept between CPU Adam steps to run a step's pieces beside the
// calling thread. Starting a thread per step (as adam_step did) cost about
// as much as the step itself at 1M parameters on two threads here: 1M/2
// ran at 1.1x 1M/1, where DeepSpeed's OpenMP pool reached 2.1x.
//
// A worker that ran a job polls for the next for 30 us (piece_workers.cpp),
// then sleeps on a condition variable, so a core busy with other work loses at
// most that to them after each job. They run on the process's
// CPUs other than the one the caller is on when the job starts
// (away_from_caller.h): woken on the caller's CPU, a worker waited for the
// caller to finish every piece, or took them all while the caller waited.
// One job at a time: a second caller while one runs is told so (try_run
// returns false) and starts its own threads, as before, rather than wait
// for the first; so does a child of fork(), which has none of the workers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

#include "executor/away_from_caller.h"

namespace stowage::executor {

class PieceWorkers {
 public:
  // The process's workers (created on first use, grown on demand, never
  // stopped: they sleep until the next job).
  static PieceWorkers& shared();

  // Runs `take` on up to `helpers` workers and on the calling thread at
  // once, and returns when every one of those calls has returned; true.
  // False, with nothing run, when another job holds the workers. If a
  // worker cannot be started, those that run (or the caller alone) do it.
  bool try_run(int helpers, const std::function<void()>& take);

  // Workers started so far.
  [[nodiscard]] int started() const;

 private:
  PieceWorkers() : owner_(::getpid()) {}
  void loop(int index, uint64_t seen);

  pid_t owner_;  // the process whose threads these are
  std::mutex job_;  // held by the caller of the running job
  mutable std::mutex mutex_;
  std::condition_variable start_, done_;
  std::vector<std::jthread> threads_;
  std::vector<pthread_t> handles_;  // threads_' native handles, for placement_
  const std::function<void()>* take_ = nullptr;
  int wanted_ = 0;  // workers with index < wanted_ run the job
  // Changed under mutex_ (so that no wake-up is lost), read without it by
  // the threads polling before they sleep.
  std::atomic<uint64_t> generation_{0};  // one per job
  std::atomic<int> running_{0};          // of the job's workers, not yet returned
  AwayFromCaller placement_;  // under mutex_
};

}  // namespace stowage::executor
