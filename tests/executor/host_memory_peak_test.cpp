// A run whose steps would hold more host memory than the setup left is
// refused before its first step, with how much: the kernel would otherwise
// let it start and kill it partway (executor/host_memory.h). Its predicted
// peak is what it really holds, so at exactly the room it needs it runs.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "executor/host_memory.h"
#include "executor/trainer.h"
#include "sim/simulator.h"
#include "tests/executor/tiny_gpt_fixture.h"

namespace stowage::executor {
namespace {

using namespace testing;

struct Attempt {
  core::Result<TrainingRun> run = std::unexpected(core::Diagnostics{});
  int steps_reported = 0;
  std::vector<std::string> notes;
  int64_t needed = 0;  // the predicted peak beyond what the backend held once set up
};

// Trains 2 steps; the host memory asked for is plentiful before the setup
// and `room(needed)` after it, where `needed` is what the steps will add.
template <typename Room>
Attempt train_with_room(const std::string& tag, Room room) {
  const Fixture& f = fixture();
  auto b = backend(tag);
  Attempt out;
  int asked = 0;
  TrainerOptions options;
  options.steps = 2;
  options.seed = 7;
  options.predict = [&](const core::Schedule& s) {
    core::Timeline t = sim::simulate(s, f.machine).timeline;
    int64_t resident = 0;
    for (core::Tier tier : core::kAllTiers)
      resident += b->in_host_memory(tier) ? s.resident[static_cast<size_t>(tier)].count() : 0;
    out.needed = host_memory_peak(t, *b) - resident;
    return t;
  };
  options.host_memory_available = [&]() -> std::optional<int64_t> {
    return ++asked == 1 ? std::optional<int64_t>(int64_t{1} << 40) : room(out.needed);
  };
  options.on_step = [&](const StepReport&) { ++out.steps_reported; };
  options.on_note = [&](const std::string& note) { out.notes.push_back(note); };
  out.run = train(plan_where(kCpuOffload), f.machine, f.model, f.training, *b, options);
  return out;
}

TEST(HostMemoryPeak, AStepThatWouldNotFitIsRefusedBeforeItRuns) {
  const Attempt tight = train_with_room("peak-tight", [](int64_t needed) { return needed - 1; });
  ASSERT_GT(tight.needed, 0) << "the steps allocate activations beyond the setup";
  ASSERT_FALSE(tight.run);
  const std::string message = core::to_string(tight.run.error());
  EXPECT_NE(message.find("host memory: the run's predicted peak"), std::string::npos) << message;
  EXPECT_NE(message.find("(the activations and workspaces of its steps)"), std::string::npos) << message;
  EXPECT_EQ(tight.steps_reported, 0);
  const Attempt exact = train_with_room("peak-exact", [](int64_t needed) { return needed; });
  EXPECT_TRUE(exact.run) << core::to_string(exact.run.error());
  EXPECT_EQ(exact.steps_reported, 2);
  EXPECT_EQ(exact.notes.size(), 1u) << "nothing to spare: warned";
  // Less than kHostMemoryMargin to spare is warned of, once, before the
  // first step; more is not.
  const Attempt close = train_with_room("peak-close", [](int64_t needed) { return needed + (1 << 20); });
  ASSERT_TRUE(close.run) << core::to_string(close.run.error());
  ASSERT_EQ(close.notes.size(), 1u);
  EXPECT_TRUE(close.notes[0].starts_with("warning: at its predicted peak the run leaves 1.049 MB of the "))
      << close.notes[0];
  const Attempt roomy =
      train_with_room("peak-roomy", [](int64_t needed) { return needed + kHostMemoryMargin; });
  ASSERT_TRUE(roomy.run) << core::to_string(roomy.run.error());
  EXPECT_TRUE(roomy.notes.empty()) << roomy.notes.front();
  const Attempt unknown = train_with_room("peak-unknown", [](int64_t) { return std::optional<int64_t>(); });
  EXPECT_TRUE(unknown.run) << "an unreadable MemAvailable checks nothing";
}

}  // namespace
}  // namespace stowage::executor
