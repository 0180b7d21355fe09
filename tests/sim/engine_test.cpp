// Scenarios with exact answers worked out by hand in the comments.
#include "sim/engine.h"

#include <gtest/gtest.h>

#include "sim/summary.h"

namespace stowage::sim {
namespace {

using core::Bytes;
using core::Lane;
using core::Op;
using core::OpKind;
using core::Schedule;
using core::Tier;

constexpr double kHuge = 1e30;

Capacities roomy() {
  Capacities c;
  c.fill(kHuge);
  return c;
}

Op op(core::OpId id, Lane lane, std::vector<core::OpId> deps = {}, OpKind kind = OpKind::kForward) {
  return {.id = id, .kind = kind, .lane = lane, .name = "op" + std::to_string(id), .deps = std::move(deps)};
}

Demand fixed(core::SimTime ns) { return {.fixed = ns}; }

// `bytes` through one resource of capacity `rate` (per second).
Demand flow(double bytes, Resource r) {
  Demand d{.work = bytes};
  d.per_unit[static_cast<size_t>(r)] = 1;
  return d;
}

struct Outcome {
  core::Timeline timeline;
  EngineResult result;
};

Outcome run(const Schedule& s, const std::vector<Demand>& d, const Capacities& c) {
  core::TimelineRecorder rec(s.ops.size());
  EngineResult r = run_engine(s, d, c, rec);
  return {rec.take(), r};
}

Schedule schedule_of(std::vector<Op> ops) {
  Schedule s;
  s.ops = std::move(ops);
  s.capacity = {Bytes(1) * (int64_t{1} << 50), Bytes(int64_t{1} << 50), Bytes(int64_t{1} << 50)};
  return s;
}

// Three dependent ops of 100, 200 and 300 ns on one lane end at 100, 300
// and 600 ns.
TEST(Engine, ChainOfThreeOps) {
  const Schedule s = schedule_of({op(0, Lane::kGpuCompute), op(1, Lane::kGpuCompute, {0}), op(2, Lane::kGpuCompute, {1})});
  const Outcome r = run(s, {fixed(100), fixed(200), fixed(300)}, roomy());
  EXPECT_EQ(r.timeline.spans[0].end, 100);
  EXPECT_EQ(r.timeline.spans[1].start, 100);
  EXPECT_EQ(r.timeline.spans[1].end, 300);
  EXPECT_EQ(r.timeline.spans[2].end, 600);
  EXPECT_EQ(r.result.makespan, 600);
}

// Ops on one lane run in issue order even when a later one is ready first,
// as on a CUDA stream: op1 waits 1000 ns for op0's dependency... op2 has no
// dependencies but is behind op1 in the lane.
TEST(Engine, LaneRunsInIssueOrder) {
  const Schedule s = schedule_of({op(0, Lane::kPcieH2d), op(1, Lane::kGpuCompute, {0}), op(2, Lane::kGpuCompute)});
  const Outcome r = run(s, {fixed(1000), fixed(10), fixed(10)}, roomy());
  EXPECT_EQ(r.timeline.spans[1].start, 1000);
  EXPECT_EQ(r.timeline.spans[2].start, 1010);
}

// An upload of 1,000 B at 1 GB/s takes 1 µs; compute of 5 µs runs beside it;
// the consumer starts at 5 µs: the transfer is fully hidden, nothing exposed.
TEST(Engine, ComputeFullyHidesATransfer) {
  Schedule s = schedule_of({op(0, Lane::kPcieH2d, {}, OpKind::kUploadParams), op(1, Lane::kGpuCompute),
                            op(2, Lane::kGpuCompute, {0, 1})});
  Capacities c = roomy();
  c[static_cast<size_t>(Resource::kPcieH2d)] = 1e9;
  const Outcome r = run(s, {flow(1000, Resource::kPcieH2d), fixed(5000), fixed(1000)}, c);
  EXPECT_EQ(r.timeline.spans[0].end, 1000);
  EXPECT_EQ(r.timeline.spans[2].start, 5000);
  const Summary sum = summarize(s, r.timeline, r.result.peak);
  EXPECT_EQ(sum.exposed_transfer_time.value(), 0.0);
  EXPECT_DOUBLE_EQ(sum.step_time.value(), 6e-6);
}

// An upload of 10,000 B at 1 GB/s takes 10 µs; compute takes 2 µs; the
// consumer waits from 2 to 10 µs: exactly 8 µs exposed.
TEST(Engine, TransferLongerThanComputeIsExposed) {
  Schedule s = schedule_of({op(0, Lane::kPcieH2d, {}, OpKind::kUploadParams), op(1, Lane::kGpuCompute),
                            op(2, Lane::kGpuCompute, {0, 1})});
  Capacities c = roomy();
  c[static_cast<size_t>(Resource::kPcieH2d)] = 1e9;
  const Outcome r = run(s, {flow(10'000, Resource::kPcieH2d), fixed(2000), fixed(1000)}, c);
  EXPECT_EQ(r.timeline.spans[2].start, 10'000);
  const Summary sum = summarize(s, r.timeline, r.result.peak);
  EXPECT_DOUBLE_EQ(sum.exposed_transfer_time.value(), 8e-6);
  EXPECT_EQ(sum.bounding_lane, Lane::kPcieH2d);
}

// Two reads on one NVMe with room for both: 1 MB and 3 MB at a device rate
// of 1 GB/s. Sharing fairly, each gets 0.5 GB/s; the 1 MB read ends at 2 ms,
// when the 3 MB one has 2 MB left, which then runs at 1 GB/s: ends at 4 ms.
TEST(Engine, TwoReadsShareOneNvme) {
  Schedule s = schedule_of({op(0, Lane::kNvmeRead), op(1, Lane::kNvmeRead)});
  s.lane_slots[static_cast<size_t>(Lane::kNvmeRead)] = 2;
  Demand a{.work = 1e6}, b{.work = 3e6};
  a.per_unit[static_cast<size_t>(Resource::kNvme)] = 1e-9;  // device-seconds per byte at 1 GB/s
  b.per_unit[static_cast<size_t>(Resource::kNvme)] = 1e-9;
  Capacities c = roomy();
  c[static_cast<size_t>(Resource::kNvme)] = 1;  // one drive's time per second
  const Outcome r = run(s, {a, b}, c);
  EXPECT_EQ(r.timeline.spans[0].end, 2'000'000);
  EXPECT_EQ(r.timeline.spans[1].end, 4'000'000);
  EXPECT_EQ(r.timeline.spans[1].slot, 1);
}

// A read (1 GB/s alone) and a write (0.5 GB/s alone) share one drive's time.
// Max-min fairness gives both the same byte rate r with r x 1 ns + r x 2 ns
// of device time per second = 1, so r = 1/3 GB/s: both 1 MB transfers end at
// 3 ms. Then a second 1 MB read runs alone at 1 GB/s: 3 to 4 ms.
TEST(Engine, ReadAndWriteShareTheDrivesTime) {
  const Schedule s = schedule_of({op(0, Lane::kNvmeRead), op(1, Lane::kNvmeWrite), op(2, Lane::kNvmeRead)});
  Demand read{.work = 1e6}, write{.work = 1e6};
  read.per_unit[static_cast<size_t>(Resource::kNvme)] = 1e-9;
  write.per_unit[static_cast<size_t>(Resource::kNvme)] = 2e-9;
  Capacities c = roomy();
  c[static_cast<size_t>(Resource::kNvme)] = 1;
  const Outcome r = run(s, {read, write, read}, c);
  EXPECT_EQ(r.timeline.spans[0].end, 3'000'000);
  EXPECT_EQ(r.timeline.spans[1].end, 3'000'000);
  EXPECT_EQ(r.timeline.spans[2].start, 3'000'000);
  EXPECT_EQ(r.timeline.spans[2].end, 4'000'000);
}

// Demand::queue: a direction of the executor's NVMe store serves its
// regions one at a time, in the order they were asked for. Two reads of
// one queue, 3 MB then 1 MB, at 1 GB/s: the first ends at 3 ms and the
// second, which waits meanwhile, at 4 ms (shared evenly, the 1 MB read would
// end at 2 ms). A 2 MB write, of the other queue, is not held back: 0 to 2 ms.
TEST(Engine, AQueueServesItsFlowsOneAtATimeInTheOrderTheyStarted) {
  Schedule s = schedule_of({op(0, Lane::kNvmeRead), op(1, Lane::kNvmeRead), op(2, Lane::kNvmeWrite)});
  s.lane_slots[static_cast<size_t>(Lane::kNvmeRead)] = 2;
  auto transfer = [](double bytes, Resource direction, int queue) {
    Demand d{.work = bytes, .queue = queue};
    d.per_unit[static_cast<size_t>(direction)] = 1e-9;  // device-seconds per byte at 1 GB/s
    d.per_unit[static_cast<size_t>(Resource::kNvme)] = 1e-9;
    return d;
  };
  Capacities c = roomy();
  c[static_cast<size_t>(Resource::kNvmeReads)] = 1;
  c[static_cast<size_t>(Resource::kNvmeWrites)] = 1;
  c[static_cast<size_t>(Resource::kNvme)] = 2;
  const Outcome r = run(s, {transfer(3e6, Resource::kNvmeReads, 1), transfer(1e6, Resource::kNvmeReads, 1),
                            transfer(2e6, Resource::kNvmeWrites, 2)},
                        c);
  // (within 2 ns: the engine rounds each flow's end up to a whole ns)
  EXPECT_NEAR(static_cast<double>(r.timeline.spans[0].end), 3e6, 2);
  EXPECT_EQ(r.timeline.spans[1].start, 0) << "started in its slot, waiting in the queue";
  EXPECT_NEAR(static_cast<double>(r.timeline.spans[1].end), 4e6, 2);
  EXPECT_NEAR(static_cast<double>(r.timeline.spans[2].end), 2e6, 2);
  // The same rule for callers that invert the sharing (fair_rates): the
  // later flow of a queue has rate 0, and the drive's time is the others'.
  const std::vector<double> rates = fair_rates(
      std::vector<Demand>{transfer(1e6, Resource::kNvmeReads, 1), transfer(1e6, Resource::kNvmeReads, 1)}, c);
  EXPECT_DOUBLE_EQ(rates[0], 1e9);
  EXPECT_EQ(rates[1], 0);
}

// A latency tail follows the flow: 1,000 B at 1 GB/s plus 500 ns = 1,500 ns.
TEST(Engine, LatencyIsAddedAfterTheFlow) {
  const Schedule s = schedule_of({op(0, Lane::kPcieD2h)});
  Demand d = flow(1000, Resource::kPcieD2h);
  d.latency = 500;
  Capacities c = roomy();
  c[static_cast<size_t>(Resource::kPcieD2h)] = 1e9;
  EXPECT_EQ(run(s, {d}, c).timeline.spans[0].end, 1500);
}

// 60 B then 50 B on a 100 B GPU: the second allocation overflows, at its
// start (time 100 ns), held by both ops' tensors.
TEST(Engine, CapacityOverflowIsReportedAtTheRightOp) {
  Schedule s = schedule_of({op(0, Lane::kGpuCompute), op(1, Lane::kGpuCompute, {0})});
  s.capacity[static_cast<size_t>(Tier::kGpu)] = Bytes(100);
  s.ops[0].allocs = {{Tier::kGpu, Bytes(60), "activations a"}};
  s.ops[1].allocs = {{Tier::kGpu, Bytes(50), "activations b"}};
  s.ops[1].frees = {{Tier::kGpu, Bytes(110), "all"}};
  const Outcome r = run(s, {fixed(100), fixed(100)}, roomy());
  ASSERT_TRUE(r.result.overflow.has_value());
  EXPECT_EQ(r.result.overflow->tier, Tier::kGpu);
  EXPECT_EQ(r.result.overflow->op, 1);
  EXPECT_EQ(r.result.overflow->at, 100);
  EXPECT_EQ(r.result.overflow->in_use, Bytes(110));
  ASSERT_EQ(r.result.overflow->holders.size(), 2u);
  EXPECT_EQ(r.result.overflow->holders[0].first, "activations a");
  EXPECT_EQ(r.result.peak[0], Bytes(110));
}

// Demand::max_rate: a flow never runs faster than its limit, and what it
// leaves of a resource goes to the flows that can use it. Three threads'
// ops on 1.5 cores' worth of time: 0.5 each; one of them alone: its limit 1,
// not all 1.5.
TEST(Engine, AFlowsOwnLimitCapsItsShare) {
  const auto threads = static_cast<size_t>(Resource::kHostThreads);
  Capacities cap = roomy();
  cap[threads] = 1.5;
  auto thread_op = [&](double seconds) {
    Demand d{.work = seconds, .max_rate = 1};
    d.per_unit[threads] = 1;
    return d;
  };
  {
    const Schedule s = schedule_of({op(0, Lane::kGpuCompute)});
    const Outcome r = run(s, {thread_op(1e-3)}, cap);
    EXPECT_EQ(r.timeline.spans[0].end - r.timeline.spans[0].start, 1'000'000) << "alone: at its limit, not faster";
  }
  {
    const Schedule s = schedule_of({op(0, Lane::kGpuCompute), op(1, Lane::kCpuOptim), op(2, Lane::kPcieH2d)});
    const Outcome r = run(s, {thread_op(1e-3), thread_op(1e-3), thread_op(1e-3)}, cap);
    for (size_t i = 0; i < 3; ++i)
      EXPECT_EQ(r.timeline.spans[i].end - r.timeline.spans[i].start, 2'000'000) << "op " << i << ": 1.5 cores / 3";
  }
  {
    // Two capped at 1 on 1.5: 0.75 each; with a third that is capped at 0.2,
    // the other two share what it leaves (1.3 / 2 = 0.65 each).
    const Schedule s = schedule_of({op(0, Lane::kGpuCompute), op(1, Lane::kCpuOptim), op(2, Lane::kPcieH2d)});
    Demand slow = thread_op(0.2e-3);
    slow.max_rate = 0.2;
    const Outcome r = run(s, {thread_op(0.65e-3), thread_op(0.65e-3), slow}, cap);
    for (size_t i = 0; i < 3; ++i)
      EXPECT_NEAR(static_cast<double>(r.timeline.spans[i].end - r.timeline.spans[i].start), 1'000'000, 2) << "op " << i;
  }
}

// Demand::crowded_max_rate: a copy of 1 ms alone at 0.8 of its rate while
// a compute op of a crowd it is crowded by runs, the compute op not slowed. Both start
// at 0; the compute op ends at 0.5 ms, when the copy has done 0.4 ms of its
// work; the other 0.6 ms at full rate: it ends at 1.1 ms. A copy started
// after the compute op ended runs at its full rate.
TEST(Engine, ACrowdedFlowRunsAtItsCrowdedLimitOnlyWhileACrowdingFlowRuns) {
  const auto threads = static_cast<size_t>(Resource::kHostThreads);
  Capacities cap = roomy();
  cap[threads] = 2;
  Demand compute{.work = 0.5e-3, .max_rate = 1, .crowds = kCrowdCompute};
  compute.per_unit[threads] = 1;
  Demand copy{.work = 1e-3, .max_rate = 1, .crowded_max_rate = 0.8, .crowded_by = kCrowdCompute};
  copy.per_unit[static_cast<size_t>(Resource::kPcieH2d)] = 1;
  const Schedule s = schedule_of({op(0, Lane::kGpuCompute), op(1, Lane::kPcieH2d), op(2, Lane::kPcieH2d, {0})});
  const Outcome r = run(s, {compute, copy, copy}, cap);
  EXPECT_EQ(r.timeline.spans[0].end - r.timeline.spans[0].start, 500'000) << "the crowding flow is not slowed";
  EXPECT_NEAR(static_cast<double>(r.timeline.spans[1].end), 1'100'000, 2);
  EXPECT_NEAR(static_cast<double>(r.timeline.spans[2].end - r.timeline.spans[2].start), 1'000'000, 2) << "alone again";

  // Beside a flow of another crowd, or of none, the limit is max_rate.
  for (uint8_t other : {static_cast<uint8_t>(kCrowdNvme), static_cast<uint8_t>(0)}) {
    compute.crowds = other;
    const Outcome plain = run(s, {compute, copy, copy}, cap);
    EXPECT_NEAR(static_cast<double>(plain.timeline.spans[1].end), 1'000'000, 2) << "crowds " << int{other};
  }
}

TEST(Engine, SameInputsGiveTheSameTimeline) {
  Schedule s = schedule_of({op(0, Lane::kNvmeRead), op(1, Lane::kNvmeRead), op(2, Lane::kCpuOptim, {0, 1})});
  s.lane_slots[static_cast<size_t>(Lane::kNvmeRead)] = 2;
  Demand a{.work = 1234567}, b{.work = 7654321}, c{.work = 999};
  a.per_unit[static_cast<size_t>(Resource::kNvme)] = 1.0 / 3e9;
  b.per_unit[static_cast<size_t>(Resource::kNvme)] = 1.0 / 3e9;
  c.per_unit[static_cast<size_t>(Resource::kCpu)] = 12;
  const Outcome x = run(s, {a, b, c}, roomy()), y = run(s, {a, b, c}, roomy());
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(x.timeline.spans[i].start, y.timeline.spans[i].start);
    EXPECT_EQ(x.timeline.spans[i].end, y.timeline.spans[i].end);
  }
}

}  // namespace
}  // namespace stowage::sim
