// PieceWorkers: a job runs on the workers asked for and the caller, every
// time, with no wake-up lost between jobs; a second caller while one job
// runs is refused instead of waiting.
#include "executor/piece_workers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <sys/wait.h>
#include <unistd.h>

#include "tests/executor/process_cpus.h"

namespace stowage::executor {
namespace {

TEST(PieceWorkers, AJobRunsOnTheHelpersAskedForAndTheCaller) {
  PieceWorkers& workers = PieceWorkers::shared();
  for (const int helpers : {0, 1, 3, 2}) {
    std::mutex mutex;
    std::set<std::thread::id> threads;
    std::atomic<int> calls{0};
    ASSERT_TRUE(workers.try_run(helpers, [&] {
      ++calls;
      std::lock_guard lock(mutex);
      threads.insert(std::this_thread::get_id());
    }));
    EXPECT_EQ(calls.load(), helpers + 1) << helpers;
    EXPECT_EQ(threads.size(), static_cast<size_t>(helpers + 1)) << helpers;
    EXPECT_TRUE(threads.contains(std::this_thread::get_id()));
  }
  EXPECT_GE(workers.started(), 3);
}

// Idle workers poll for the next job only briefly (30 us), then sleep:
// over 200 ms after a job, each worker that ran it uses under 5 ms of CPU
// time (a worker that kept polling would use most of the 200). Each
// worker's own clock: the process's would count OpenBLAS's server thread,
// which yields in a loop for its first ~0.1 s.
TEST(PieceWorkers, IdleWorkersSleepAfterABriefPoll) {
  PieceWorkers& workers = PieceWorkers::shared();
  std::mutex mutex;
  std::vector<clockid_t> clocks;
  const pthread_t caller = pthread_self();
  ASSERT_TRUE(workers.try_run(3, [&] {
    if (pthread_equal(pthread_self(), caller)) return;
    clockid_t clock{};
    ASSERT_EQ(pthread_getcpuclockid(pthread_self(), &clock), 0);
    std::lock_guard lock(mutex);
    clocks.push_back(clock);
  }));
  ASSERT_EQ(clocks.size(), 3u);
  auto cpu_time = [](clockid_t clock) {
    timespec t{};
    clock_gettime(clock, &t);
    return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
  };
  std::vector<std::chrono::nanoseconds> before;
  for (clockid_t c : clocks) before.push_back(cpu_time(c));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (size_t k = 0; k < clocks.size(); ++k) {
    EXPECT_LT(cpu_time(clocks[k]) - before[k], std::chrono::milliseconds(5)) << "worker " << k;
  }
}

// Many short jobs in a row, the number of helpers changing: each returns
// only after all of its calls did (a lost wake-up would hang here).
TEST(PieceWorkers, ThousandsOfJobsInARowEachCompleteBeforeTheNext) {
  PieceWorkers& workers = PieceWorkers::shared();
  std::atomic<int> in_job{0};
  for (int job = 0; job < 5000; ++job) {
    const int helpers = job % 3;
    std::atomic<int> calls{0};
    ASSERT_TRUE(workers.try_run(helpers, [&] {
      ++in_job;
      ++calls;
      --in_job;
    }));
    ASSERT_EQ(calls.load(), helpers + 1) << "job " << job;
    ASSERT_EQ(in_job.load(), 0) << "job " << job << " returned with a call still running";
  }
}

TEST(PieceWorkers, ASecondCallerWhileAJobRunsIsRefusedNotMadeToWait) {
  PieceWorkers& workers = PieceWorkers::shared();
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  std::thread first([&] {
    bool told = false;
    EXPECT_TRUE(workers.try_run(0, [&] {
      if (!told) entered.set_value(), told = true;
      released.wait();
    }));
  });
  entered.get_future().wait();
  bool ran = false;
  EXPECT_FALSE(workers.try_run(1, [&] { ran = true; }));
  EXPECT_FALSE(ran);
  release.set_value();
  first.join();
  EXPECT_TRUE(workers.try_run(1, [] {}));
}

// The child of a fork has none of the workers: refused there (it would
// wait for them forever), so the caller starts threads of its own.
TEST(PieceWorkers, AForkedChildIsRefusedAndItsParentIsNot) {
  PieceWorkers& workers = PieceWorkers::shared();
  ASSERT_TRUE(workers.try_run(1, [] {}));
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(workers.try_run(1, [] {}) ? 1 : 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child was not refused";
  EXPECT_TRUE(workers.try_run(1, [] {}));
}

// A helper is kept off the CPU its caller is on: woken there (as this
// kernel did), it waited for the caller to finish every piece. The caller
// is pinned, so where it is when the job starts is known; each of two
// CPUs in turn, so the helpers' placement follows the caller.
TEST(PieceWorkers, AHelperRunsOffTheCpuItsCallerIsOn) {
  const std::vector<int> cpus = first_cpus(process_cpus(), 2);
  if (cpus.size() < 2) GTEST_SKIP() << "this process may run on one CPU only";
  PieceWorkers& workers = PieceWorkers::shared();
  for (const int caller_cpu : {cpus[0], cpus[1], cpus[0]}) {
    std::thread caller([&] {
      pin_this_thread(caller_cpu);
      const std::thread::id me = std::this_thread::get_id();
      std::mutex mutex;
      std::vector<std::pair<int, bool>> helpers;  // CPU, and whether its mask allows the caller's
      ASSERT_TRUE(workers.try_run(2, [&] {
        if (std::this_thread::get_id() == me) return;
        cpu_set_t mask{};
        ASSERT_EQ(::sched_getaffinity(0, sizeof mask, &mask), 0);
        std::lock_guard lock(mutex);
        helpers.emplace_back(::sched_getcpu(), CPU_ISSET(caller_cpu, &mask));
      }));
      ASSERT_EQ(helpers.size(), 2u);
      for (const auto& [cpu, allowed] : helpers) {
        EXPECT_NE(cpu, caller_cpu) << "a helper ran on its caller's CPU";
        EXPECT_FALSE(allowed) << "a helper may run on its caller's CPU " << caller_cpu;
      }
    });
    caller.join();
  }
}

}  // namespace
}  // namespace stowage::executor
