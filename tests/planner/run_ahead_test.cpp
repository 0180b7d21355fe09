// RunAhead (planner/run_ahead.h): results taken in order are the work's,
// whatever ran ahead, on any number of threads; what was not wanted is
// computed when taken; a failure is thrown where it is taken, and one
// never taken is dropped.
#include "planner/run_ahead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace stowage::planner {
namespace {

TEST(RunAhead, TakesEveryItemsOwnResultInOrderOnAnyNumberOfThreads) {
  constexpr size_t kItems = 200;
  for (const int threads : {0, 1, 2, 3, 8}) {
    std::atomic<int> computed{0};
    RunAhead<std::string> ahead(kItems, threads, [](size_t) { return true; }, [&](size_t i) {
      ++computed;
      if (i % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // a slow one now and then
      return "item " + std::to_string(i);
    });
    for (size_t i = 0; i < kItems; ++i) EXPECT_EQ(ahead.take(i), "item " + std::to_string(i)) << threads;
    EXPECT_EQ(computed.load(), static_cast<int>(kItems)) << threads;  // each once: none twice, none lost
  }
}

// Items not wanted when they came within reach are computed by take, on the
// loop's thread, and never by a worker.
TEST(RunAhead, AnItemNotWantedIsComputedWhenTakenOnTheLoopsThread) {
  const std::thread::id loop = std::this_thread::get_id();
  std::vector<std::thread::id> by(40);
  RunAhead<size_t> ahead(by.size(), 3, [](size_t i) { return i % 2 == 0; }, [&](size_t i) {
    by[i] = std::this_thread::get_id();
    return i * i;
  });
  for (size_t i = 0; i < by.size(); ++i) ASSERT_EQ(ahead.take(i), i * i);
  for (size_t i = 1; i < by.size(); i += 2) EXPECT_EQ(by[i], loop) << i;
}

// The loop may stop taking early (a cancelled search): what ran ahead is
// waited for, not left running on data about to go away.
TEST(RunAhead, StoppingEarlyWaitsForWhatRunsAhead) {
  std::atomic<int> running{0}, finished{0};
  {
    RunAhead<int> ahead(100, 4, [](size_t) { return true; }, [&](size_t i) {
      ++running;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ++finished;
      return static_cast<int>(i);
    });
    EXPECT_EQ(ahead.take(0), 0);
  }
  EXPECT_EQ(running.load(), finished.load());
}

TEST(RunAhead, AFailureIsThrownWhereItIsTakenAndOneNeverTakenIsDropped) {
  for (const int threads : {1, 3}) {
    RunAhead<int> ahead(10, threads, [](size_t) { return true; }, [](size_t i) {
      if (i == 2 || i == 5) throw std::runtime_error("item " + std::to_string(i));
      return static_cast<int>(i);
    });
    EXPECT_EQ(ahead.take(0), 0);
    EXPECT_EQ(ahead.take(1), 1);
    EXPECT_THROW(ahead.take(2), std::runtime_error) << threads;
    EXPECT_EQ(ahead.take(3), 3);
    // Item 5 may have failed ahead; it is never taken, and nothing escapes.
  }
}

}  // namespace
}  // namespace stowage::planner
