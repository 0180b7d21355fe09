// A schedule's memory order (core/memory_gate.h) in the simulator's engine:
// hand scenarios with their answers worked out in the comments, the order's
// validation, and the property the executor relies on: the order a
// prediction applied, given back to the schedule, leaves that prediction as
// it was (every bundled model, machine and standard placement, two steps).
#include "core/memory_gate.h"

#include <gtest/gtest.h>

#include "core/lower.h"
#include "core/placement.h"
#include "core/policy.h"
#include "core/memory_replay.h"
#include "sim/engine.h"
#include "sim/simulator.h"
#include "tests/core/test_profiles.h"

namespace stowage::sim {
namespace {

using core::Bytes;
using core::Lane;
using core::MemoryStep;
using core::Op;
using core::Schedule;
using core::Tier;

Op op(core::OpId id, Lane lane, std::vector<core::OpId> deps = {}) {
  return {.id = id, .lane = lane, .name = "op" + std::to_string(id), .deps = std::move(deps)};
}

core::MemoryEffect gpu(int64_t bytes) { return {.tier = Tier::kGpu, .bytes = Bytes(bytes), .tensor = "t"}; }

Capacities roomy() {
  Capacities c;
  c.fill(1e30);
  return c;
}

struct Outcome {
  core::Timeline timeline;
  EngineResult result;
};

Outcome run(const Schedule& s, const std::vector<Demand>& d) {
  core::TimelineRecorder rec(s.ops.size());
  EngineResult r = run_engine(s, d, roomy(), rec);
  return {rec.take(), r};
}

Schedule schedule_of(std::vector<Op> ops) {
  Schedule s;
  s.ops = std::move(ops);
  s.capacity = {Bytes(int64_t{1} << 50), Bytes(int64_t{1} << 50), Bytes(int64_t{1} << 50)};
  return s;
}

// op0 on gpu.compute holds a 50 B workspace for 300 ns; op1 on pcie.h2d
// allocates 100 B for 100 ns. Free running, both start at 0 and the peak
// is 150 B. With op0's free ordered before op1's allocation, op1 waits for
// it: it runs from 300 to 400 ns and the peak is 100 B.
TEST(MemoryOrder, AnAllocationWaitsForTheFreesBeforeIt) {
  Schedule s = schedule_of({op(0, Lane::kGpuCompute), op(1, Lane::kPcieH2d)});
  s.ops[0].allocs = {gpu(50)};
  s.ops[0].frees = {gpu(50)};
  s.ops[1].allocs = {gpu(100)};
  const std::vector<Demand> d = {{.fixed = 300}, {.fixed = 100}};
  const Outcome free_running = run(s, d);
  EXPECT_EQ(free_running.timeline.spans[1].start, 0);
  EXPECT_EQ(free_running.result.peak[0].count(), 150);

  s.memory_order = {{0, true}, {0, false}, {1, true}};
  ASSERT_EQ(core::validate_memory_order(s), std::vector<std::string>{});
  const Outcome ordered = run(s, d);
  EXPECT_EQ(ordered.timeline.spans[1].start, 300);
  EXPECT_EQ(ordered.timeline.spans[1].end, 400);
  EXPECT_EQ(ordered.result.peak[0].count(), 100);
  EXPECT_EQ(core::replay_peak(s, ordered.timeline)[0].count(), 100);
}

// op0 (gpu.compute, 100 ns) holds 50 B; op1 (pcie.h2d) allocates 100 B once
// op2 (pcie.h2d, 200 ns, no memory) is done. Free running, op0's 50 B are
// back at 100 ns and the peak is 100 B. Ordered with op0's free after op1's
// allocation, the free is held until op1 starts at 200 ns: 150 B then, and
// op0 itself is not delayed.
TEST(MemoryOrder, AFreeIsHeldUntilTheEffectsBeforeItHaveApplied) {
  Schedule s = schedule_of({op(0, Lane::kGpuCompute), op(1, Lane::kPcieD2h, {2}), op(2, Lane::kPcieH2d)});
  s.ops[0].allocs = {gpu(50)};
  s.ops[0].frees = {gpu(50)};
  s.ops[1].allocs = {gpu(100)};
  const std::vector<Demand> d = {{.fixed = 100}, {.fixed = 100}, {.fixed = 200}};
  EXPECT_EQ(run(s, d).result.peak[0].count(), 100);

  s.memory_order = {{0, true}, {1, true}, {0, false}};
  ASSERT_EQ(core::validate_memory_order(s), std::vector<std::string>{});
  const Outcome ordered = run(s, d);
  EXPECT_EQ(ordered.timeline.spans[0].end, 100);
  EXPECT_EQ(ordered.timeline.spans[1].start, 200);
  EXPECT_EQ(ordered.result.peak[0].count(), 150);
  // The trace's memory: 50 B at 0, 150 B and then 100 B at 200 ns.
  const std::vector<core::MemorySample> expected = {
      {0, Tier::kGpu, Bytes(0)}, {0, Tier::kGpu, Bytes(50)}, {200, Tier::kGpu, Bytes(150)}, {200, Tier::kGpu, Bytes(100)}};
  std::vector<core::MemorySample> gpu_samples;
  for (const core::MemorySample& m : ordered.timeline.memory) {
    if (m.tier == Tier::kGpu) gpu_samples.push_back(m);
  }
  ASSERT_EQ(gpu_samples.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(gpu_samples[i].time, expected[i].time) << i;
    EXPECT_EQ(gpu_samples[i].bytes, expected[i].bytes) << i;
  }
  // The replay puts the held free where the gate applied it.
  const std::vector<core::MemoryEvent> events = core::memory_events(s, ordered.timeline);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].op, 0);
  EXPECT_FALSE(events[2].start);
  EXPECT_EQ(events[2].time, 200);
  EXPECT_EQ(core::replay_peak(s, ordered.timeline)[0].count(), 150);
}

// What an interpreter asks the gate: whether an op may start, what it waits
// for (the watchdog's report), and that a stopped run's ops that never
// start hold nothing up.
TEST(MemoryOrder, TheGateSaysWhatAnOpWaitsForAndForgetsAbandonedOps) {
  Schedule s = schedule_of({op(0, Lane::kGpuCompute), op(1, Lane::kPcieH2d), op(2, Lane::kPcieD2h)});
  s.ops[0].allocs = {gpu(50)};
  s.ops[0].frees = {gpu(50)};
  s.ops[1].allocs = {gpu(100)};
  s.ops[2].allocs = {gpu(10)};
  s.memory_order = {{0, true}, {0, false}, {1, true}, {2, true}};
  ASSERT_EQ(core::validate_memory_order(s), std::vector<std::string>{});
  core::MemoryGate gate(s);
  std::vector<MemoryStep> applied;
  const core::MemoryGate::Apply record = [&](const MemoryStep& m) { applied.push_back(m); };
  EXPECT_TRUE(gate.may_start(0));
  EXPECT_FALSE(gate.may_start(1));
  EXPECT_EQ(gate.waits_for(1), (MemoryStep{0, true}));
  gate.started(0, record);
  EXPECT_EQ(gate.waits_for(1), (MemoryStep{0, false}));
  gate.ended(0, record);
  EXPECT_TRUE(gate.may_start(1));
  EXPECT_EQ(gate.waits_for(1), std::nullopt);
  gate.abandon(1, record);  // never runs: op 2 no longer waits for it
  EXPECT_TRUE(gate.may_start(2));
  gate.started(2, record);
  EXPECT_EQ(applied, (std::vector<MemoryStep>{{0, true}, {0, false}, {2, true}}));
}

TEST(MemoryOrder, AnOrderThatCannotRunOrMissesAnEffectIsRefused) {
  // op1 depends on op0, yet its allocation comes first: op0 could never start.
  Schedule s = schedule_of({op(0, Lane::kGpuCompute), op(1, Lane::kPcieH2d, {0})});
  s.ops[0].allocs = {gpu(10)};
  s.ops[1].allocs = {gpu(10)};
  s.memory_order = {{1, true}, {0, true}};
  const std::vector<std::string> stuck = core::validate_memory_order(s);
  ASSERT_EQ(stuck.size(), 1u);
  EXPECT_NE(stuck[0].find("can never start"), std::string::npos) << stuck[0];
  EXPECT_EQ(core::validate(s), stuck);

  s.memory_order = {{0, true}};
  const std::vector<std::string> missing = core::validate_memory_order(s);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("op1: 0 start"), std::string::npos) << missing[0];

  s.memory_order = {{0, true}, {1, true}, {1, false}, {5, true}};
  const std::vector<std::string> bad = core::validate_memory_order(s);
  ASSERT_EQ(bad.size(), 3u);
  EXPECT_NE(bad[0].find("memory_order[2]: op1 has no frees"), std::string::npos) << bad[0];
  EXPECT_NE(bad[1].find("memory_order[3]: no op 5"), std::string::npos) << bad[1];
  EXPECT_NE(bad[2].find("op1: 1 start and 1 end steps"), std::string::npos) << bad[2];
}

bool same_spans(const core::Timeline& a, const core::Timeline& b) {
  if (a.spans.size() != b.spans.size()) return false;
  for (size_t i = 0; i < a.spans.size(); ++i) {
    if (a.spans[i].start != b.spans[i].start || a.spans[i].end != b.spans[i].end) return false;
  }
  return true;
}

TEST(MemoryOrder, APredictionsOwnOrderLeavesItAsItWasForEveryBundledModelAndMachine) {
  using core::testing::bundled;
  using core::testing::must;
  const core::TrainingSpec training = must(bundled().training("tiny"));
  int cases = 0;
  for (const std::string& machine_name : bundled().names(core::ProfileKind::kMachine)) {
    const core::MachineSpec machine = must(bundled().machine(machine_name));
    for (const std::string& model_name : bundled().names(core::ProfileKind::kModel)) {
      const core::Workload w(must(bundled().model(model_name)), training.sequence_length);
      for (const core::StandardPlacement which : {core::StandardPlacement::kAllGpu, core::StandardPlacement::kZeroOffload,
                                                  core::StandardPlacement::kZeroInfinity}) {
        const core::Policy policy = core::policy_for(core::standard_placement(which, machine.gpu_count), w, training);
        core::Result<Schedule> s = core::lower(policy, machine, w, training, {.steps = 2});
        if (!s) continue;  // a placement this machine cannot lower
        const std::string where = model_name + " on " + machine_name;
        const Prediction free_running = simulate(*s, machine);
        s->memory_order = core::memory_order_of(*s, free_running.timeline);
        EXPECT_EQ(core::validate_memory_order(*s), std::vector<std::string>{}) << where;
        const Prediction ordered = simulate(*s, machine);
        EXPECT_TRUE(same_spans(ordered.timeline, free_running.timeline)) << where;
        EXPECT_EQ(ordered.engine.peak, free_running.engine.peak) << where;
        EXPECT_EQ(core::replay_peak(*s, ordered.timeline), ordered.engine.peak) << where;
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 10);
}

}  // namespace
}  // namespace stowage::sim
