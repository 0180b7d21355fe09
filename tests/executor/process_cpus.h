// For tests that pin a caller to one CPU and then another: the CPUs this
// process may run on, the first of them, and pinning the calling thread.
#pragma once

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <cstddef>
#include <vector>

namespace stowage::executor {

inline cpu_set_t process_cpus() {
  cpu_set_t set{};
  EXPECT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  return set;
}

// The first `n` CPUs of `set` (fewer when it has fewer).
inline std::vector<int> first_cpus(const cpu_set_t& set, size_t n) {
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < n; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

inline void pin_this_thread(int cpu) {
  cpu_set_t only{};
  CPU_SET(cpu, &only);
  ASSERT_EQ(::pthread_setaffinity_np(::pthread_self(), sizeof only, &only), 0);
}

}  // namespace stowage::executor
