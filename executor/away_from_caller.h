// Keeps a component's own threads off the CPU of the thread that hands
// them work. On this project's machine (Linux 6.18, 2 vCPUs, one L3) the
// kernel woke a sleeping thread on the CPU of the thread that woke it even
// with the other CPU idle, and kept it there: the woken thread then waited
// for its waker to block, or preempted it, so two threads ran at one
// thread's speed (CPU Adam's helper at 1M parameters: about 490 us a step
// on one CPU, 270-330 us apart; docs/performance.md). It helps only where
// our threads are the ones woken: a caller woken by our thread follows it
// to its CPU whatever our thread's mask says.
//
// A placement, not a condition of correctness: where it cannot be applied
// (one CPU, a refused call) the threads run wherever the kernel puts them.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <span>

namespace stowage::executor {

class AwayFromCaller {
 public:
  // Reads the process's CPUs: the main thread's mask (pid = the thread
  // group's leader), not the first caller's, since a caller pinned to one
  // CPU would otherwise leave the threads nowhere else to go.
  AwayFromCaller();

  // Restricts `threads` to the process's CPUs but the one the calling
  // thread is on now (all of them when that leaves none). A system call
  // only when that CPU differs from last time's, or with `again` (threads
  // started since, which have their creator's mask). Not thread-safe: the
  // owner calls it under its own lock.
  void place(std::span<const pthread_t> threads, bool again = false);

 private:
  cpu_set_t process_cpus_{};
  bool placing_ = false;  // the mask was read and has two CPUs or more
  int kept_off_ = -1;     // the CPU the threads are kept off now (-1: none yet)
};

}  // namespace stowage::executor
