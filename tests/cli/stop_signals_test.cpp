// Issue 12 item 3: the first SIGINT or SIGTERM asks a run to stop cleanly
// (RunCommand.Sig*WritesAFinalCheckpoint* hold that end to end); a second one
// ends the process at once with 128 + the signal, the run's code, without
// waiting for the steps under way. Death tests: each runs in a child.
#include "cli/stop_signals.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

namespace stowage::cli {
namespace {

// Raises `signal_number` twice under StopSignals. The first is only recorded
// (the child carries on: exit 1 if it was lost); the second must end the
// child with 128 + the signal before it reaches exit 0.
[[noreturn]] void raise_twice(int signal_number) {
  const StopSignals stop;
  ::raise(signal_number);
  if (StopSignals::received().load() != signal_number) ::_exit(1);
  ::raise(signal_number);
  ::_exit(0);
}

TEST(StopSignalsDeathTest, ASecondSigintEndsTheProcessAtOnceWith130) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(raise_twice(SIGINT), ::testing::ExitedWithCode(130), "");
}

TEST(StopSignalsDeathTest, ASecondSigtermEndsTheProcessAtOnceWith143) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(raise_twice(SIGTERM), ::testing::ExitedWithCode(143), "");
}

// The first signal alone is a request, and the handlers go when the run ends.
TEST(StopSignals, TheFirstSignalIsRecordedAndTheHandlersAreRestoredAfter) {
  struct sigaction before {};
  sigaction(SIGTERM, nullptr, &before);
  {
    const StopSignals stop;
    EXPECT_EQ(StopSignals::received().load(), 0);
    ::raise(SIGTERM);
    EXPECT_EQ(StopSignals::received().load(), SIGTERM);
  }
  struct sigaction after {};
  sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

}  // namespace
}  // namespace stowage::cli
