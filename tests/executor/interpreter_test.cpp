// The interpreter keeps to the schedule's lane slots (a lane with N slots
// runs up to N ops at once, as the simulator does), records the queue depth
// each NVMe op kept in the measured timeline, and its watchdog turns a
// hang into a failure that says, lane by lane, what runs and what waits.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "executor/faulty_backend.h"
#include "executor/forwarding_backend.h"
#include "tests/executor/tiny_gpt_fixture.h"

namespace stowage::executor {
namespace {

using namespace testing;

// Forwards to another backend; block reads take at least 30 ms, long
// enough that reads the interpreter issues together overlap, and the most
// in flight at once is recorded.
class SlowReads final : public ForwardingBackend {
 public:
  explicit SlowReads(Backend& inner) : ForwardingBackend(inner) {}
  [[nodiscard]] int max_reads_in_flight() const { return max_.load(); }

  [[nodiscard]] std::string_view name() const override { return "slow-reads"; }
  [[nodiscard]] core::Result<core::QueueDepth> block_read(core::Lane l, const BlockIo& io) override {
    if (l != core::Lane::kNvmeRead)
      return inner_.block_read(l, io);  // a checkpoint's or the homes' own reads
    const int now = ++in_flight_;
    int seen = max_.load();
    while (now > seen && !max_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    auto r = inner_.block_read(l, io);
    --in_flight_;
    return r;
  }

 private:
  std::atomic<int> in_flight_{0}, max_{0};
};

int most_reads_at_once(int prefetch_depth) {
  core::PlanFile plan = plan_where(kNvmeOffload);
  plan.policy.nvme_prefetch_depth = prefetch_depth;
  auto inner = backend("slots-" + std::to_string(prefetch_depth));
  SlowReads slow(*inner);
  auto run = train_plan(plan, slow, {.steps = 1, .seed = 7});
  EXPECT_TRUE(run) << (run ? "" : core::to_string(run.error()));
  return slow.max_reads_in_flight();
}

TEST(Interpreter, ALaneRunsAsManyOpsAtOnceAsItHasSlots) {
  // Step 0's first state reads have no dependencies: with two slots both
  // start together; with one, never two at once.
  EXPECT_EQ(most_reads_at_once(2), 2);
  EXPECT_EQ(most_reads_at_once(1), 1);
}

TEST(Interpreter, EveryNvmeOpOfTheMeasuredTimelineRecordsItsQueueDepth) {
  // Optimizer states on NVMe: each step reads and writes every partition's
  // states. Each of those ops reports the device queue it kept (at least 1
  // request, at most the store's depth of 4); no other op has a depth.
  auto b = backend("queue-depth");
  auto run = train_plan(plan_where(kNvmeOffload), *b, {.steps = 2, .seed = 7});
  ASSERT_TRUE(run) << core::to_string(run.error());
  int nvme_ops = 0;
  for (const core::Op& op : run->schedule.ops) {
    const auto& depth = run->timeline.spans[static_cast<size_t>(op.id)].queue_depth;
    const bool nvme = op.lane == core::Lane::kNvmeRead || op.lane == core::Lane::kNvmeWrite;
    if (!nvme) {
      EXPECT_FALSE(depth) << op.name;
      continue;
    }
    ++nvme_ops;
    ASSERT_TRUE(depth) << op.name;
    EXPECT_GE(depth->max, 1) << op.name;
    EXPECT_LE(depth->max, 4) << op.name;
    EXPECT_GT(depth->mean, 0) << op.name;
    EXPECT_LE(depth->mean, 4.0) << op.name;
    EXPECT_LE(depth->mean, depth->max) << op.name << ": the mean of a window never exceeds its most";
  }
  EXPECT_GT(nvme_ops, 0);
}

TEST(Interpreter, TheWatchdogReportsAHangLaneByLane) {
  auto inner = backend("hang");
  // The third compute call never returns until the run is cancelled.
  FaultyBackend hanging(*inner, {.kind = CallKind::kCompute, .nth = 3, .effect = FaultEffect::kHang});
  const auto started = std::chrono::steady_clock::now();
  auto run = train_plan(plan_where(kNvmeOffload), hanging,
                        {.steps = 2, .seed = 7, .watchdog = std::chrono::milliseconds(300)});
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(run);
  const std::string message = core::to_string(run.error());
  EXPECT_NE(message.find("no op finished for"), std::string::npos) << message;
  EXPECT_NE(message.find("(watchdog)"), std::string::npos) << message;
  EXPECT_NE(message.find("gpu.compute: runs 'fwd"), std::string::npos) << message;
  EXPECT_NE(message.find("waits for"), std::string::npos) << message;
  EXPECT_LT(took, std::chrono::seconds(20)) << "the run was stopped, not left hanging";
}

}  // namespace
}  // namespace stowage::executor
