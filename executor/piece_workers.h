// Threads kept between CPU Adam steps to run a step's pieces beside the
// calling thread. Starting a thread per step (as adam_step did) cost about
// as much as the step itself at 1M parameters on two threads here: 1M/2
// ran at 1.1x 1M/1, where DeepSpeed's OpenMP pool reached 2.1x.
//
// Idle workers sleep on a condition variable and never spin, so a core
// busy with other work loses nothing to them. They run on the process's
// CPUs other than the one the caller is on when the job starts: woken
// there, a worker waited for the caller to finish every piece (or took
// them all while the caller waited), so two threads ran at one thread's
// speed. This 6.18 kernel woke them on the waker's CPU although the other
// was idle (1M parameters, two threads: about 490 us per step with both on
// one CPU, 300-330 us apart; docs/performance.md). One job at a time: a second
// caller while one runs is told so (try_run returns false) and starts its
// own threads, as before, rather than wait for the first; so does a child
// of fork(), which has none of the workers.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <sched.h>
#include <unistd.h>

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
  PieceWorkers();
  void loop(int index, uint64_t seen);
  // Restricts every worker to the process's CPUs but `cpu` (all of them
  // when that leaves none). Called with mutex_ held.
  void keep_off(int cpu);

  pid_t owner_;  // the process whose threads these are
  std::mutex job_;  // held by the caller of the running job
  mutable std::mutex mutex_;
  std::condition_variable start_, done_;
  std::vector<std::jthread> threads_;
  const std::function<void()>* take_ = nullptr;
  uint64_t generation_ = 0;  // one per job
  int wanted_ = 0;           // workers with index < wanted_ run the job
  int running_ = 0;          // of those, not yet returned
  cpu_set_t process_cpus_{};  // the main thread's CPUs when the pool was made
  bool placing_ = false;      // process_cpus_ was read and has two CPUs or more
  int kept_off_ = -1;         // the CPU the workers are kept off now (-1: none)
};

}  // namespace stowage::executor
