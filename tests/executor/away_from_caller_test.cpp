// AwayFromCaller: threads are kept off the CPU their caller is on, follow
// the caller when it moves, and keep the process's only CPU when there is
// one (nowhere else to go is not an error).
#include "executor/away_from_caller.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "tests/executor/process_cpus.h"

namespace stowage::executor {
namespace {

cpu_set_t mask_of(pthread_t t) {
  cpu_set_t mask{};
  EXPECT_EQ(::pthread_getaffinity_np(t, sizeof mask, &mask), 0);
  return mask;
}

TEST(AwayFromCaller, KeepsTheThreadsOffTheCallersCpuAndFollowsItsMoves) {
  const cpu_set_t process = process_cpus();
  const std::vector<int> cpus = first_cpus(process, 2);
  if (cpus.size() < 2) GTEST_SKIP() << "this process may run on one CPU only";
  std::promise<void> stop;
  std::jthread worker([done = stop.get_future()] { done.wait(); });
  const pthread_t handle = worker.native_handle();
  AwayFromCaller placement;
  std::thread caller([&] {
    for (const int cpu : {cpus[0], cpus[1], cpus[0]}) {
      pin_this_thread(cpu);
      placement.place({&handle, 1});
      const cpu_set_t mask = mask_of(handle);
      EXPECT_FALSE(CPU_ISSET(cpu, &mask)) << "the thread may run on its caller's CPU " << cpu;
      EXPECT_EQ(CPU_COUNT(&mask), CPU_COUNT(&process) - 1);
    }
  });
  caller.join();
  stop.set_value();
}

// In a child whose only thread is pinned to one CPU, as `taskset -c 0`
// would leave the whole process: the thread keeps that CPU. (Taking the
// machine's CPUs instead of the process's would move it off.)
TEST(AwayFromCaller, LeavesTheProcesssOnlyCpuToTheThreads) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cpu_set_t only{};
    CPU_SET(::sched_getcpu(), &only);
    if (::sched_setaffinity(0, sizeof only, &only) != 0) _exit(2);
    std::promise<void> stop;
    std::thread worker([done = stop.get_future()] { done.wait(); });
    const pthread_t handle = worker.native_handle();
    AwayFromCaller placement;
    placement.place({&handle, 1});
    cpu_set_t mask{};
    const bool kept = ::pthread_getaffinity_np(handle, sizeof mask, &mask) == 0 && CPU_EQUAL(&mask, &only);
    stop.set_value();
    worker.join();
    _exit(kept ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the thread lost the process's only CPU";
}

}  // namespace
}  // namespace stowage::executor
