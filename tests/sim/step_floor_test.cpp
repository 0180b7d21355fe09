// The step floor (sim/step_floor.h) and the summary's step time, which is
// never below it: schedules whose window between first forward ops reads
// shorter than a lane's work per step, worked out by hand.
#include "sim/step_floor.h"

#include <gtest/gtest.h>

#include "sim/engine.h"
#include "sim/summary.h"

namespace stowage::sim {
namespace {

using core::Lane;
using core::Op;
using core::OpKind;
using core::Schedule;

constexpr double kHuge = 1e30;
constexpr core::SimTime kUs = 1000;  // ns

// One drive: each direction at most 1 device-second per second, and both
// together 1 (no duplex); everything else without limit.
Capacities one_drive() {
  Capacities c;
  c.fill(kHuge);
  for (Resource r : {Resource::kNvme, Resource::kNvmeReads, Resource::kNvmeWrites}) c[static_cast<size_t>(r)] = 1;
  return c;
}

// `seconds` of work through `r` at capacity 1 (device-seconds per second).
Demand drive_time(double seconds, Resource r) {
  Demand d{.work = seconds};
  d.per_unit[static_cast<size_t>(r)] = 1;
  return d;
}

struct Steps {
  Schedule schedule;
  std::vector<Demand> demands;
};

// Four steps: a forward of 100 µs, each after the last, and after each an
// NVMe write of `write_us` of drive time (the write lane one op at a time,
// in order, as the executor's store serves a direction). With an optional
// read of `read_us` beside each write, sharing the drive (kNvme, capacity 1).
Steps four_steps(double write_us, double read_us = 0) {
  Steps out;
  Schedule& s = out.schedule;
  s.steps = 4;
  s.capacity = {core::Bytes(int64_t{1} << 50), core::Bytes(int64_t{1} << 50), core::Bytes(int64_t{1} << 50)};
  core::OpId previous_forward = -1;
  for (int step = 0; step < 4; ++step) {
    const auto forward = static_cast<core::OpId>(s.ops.size());
    s.ops.push_back({.id = forward, .kind = OpKind::kForward, .lane = Lane::kGpuCompute, .name = "forward",
                     .step = step, .deps = previous_forward < 0 ? std::vector<core::OpId>{}
                                                                     : std::vector<core::OpId>{previous_forward}});
    out.demands.push_back({.fixed = 100 * kUs});
    previous_forward = forward;
    const auto write = static_cast<core::OpId>(s.ops.size());
    s.ops.push_back({.id = write, .kind = OpKind::kWriteStates, .lane = Lane::kNvmeWrite, .name = "write",
                     .step = step, .deps = {forward}});
    Demand w = drive_time(write_us * 1e-6, Resource::kNvmeWrites);
    w.per_unit[static_cast<size_t>(Resource::kNvme)] = 1;
    out.demands.push_back(w);
    if (read_us > 0) {
      const auto read = static_cast<core::OpId>(s.ops.size());
      s.ops.push_back({.id = read, .kind = OpKind::kReadStates, .lane = Lane::kNvmeRead, .name = "read",
                       .step = step, .deps = {forward}});
      Demand r = drive_time(read_us * 1e-6, Resource::kNvmeReads);
      r.per_unit[static_cast<size_t>(Resource::kNvme)] = 1;
      out.demands.push_back(r);
    }
  }
  return out;
}

Summary simulate_steps(const Steps& steps, const Capacities& capacities) {
  core::TimelineRecorder recorder(steps.schedule.ops.size());
  const EngineResult r = run_engine(steps.schedule, steps.demands, capacities, recorder);
  return summarize(steps.schedule, recorder.take(), r.peak, step_floor(steps.schedule, steps.demands, capacities));
}

// Writes of 150 µs after forwards 100 µs apart end at 250, 400, 550 and
// 700 µs: they fall 50 µs further behind each step, while the first
// forward ops stay 100 µs apart. The step is the writes' 150 µs, and the
// 50 µs a longer run would wait on them are exposed.
TEST(StepFloor, WorkFallingBehindSetsTheStep) {
  const Steps steps = four_steps(150);
  const StepFloor floor = step_floor(steps.schedule, steps.demands, one_drive());
  EXPECT_EQ(floor.length, 150 * kUs);
  EXPECT_EQ(floor.lane, Lane::kNvmeWrite);
  const Summary sum = simulate_steps(steps, one_drive());
  EXPECT_DOUBLE_EQ(sum.window_step_time.value(), 100e-6);
  EXPECT_DOUBLE_EQ(sum.step_time.value(), 150e-6);
  ASSERT_TRUE(sum.falls_behind.has_value());
  EXPECT_EQ(*sum.falls_behind, Lane::kNvmeWrite);
  EXPECT_EQ(sum.bounding_lane, Lane::kNvmeWrite);
  EXPECT_NEAR(sum.exposed_transfer_time.value(), 50e-6, 1e-12);
}

// Writes of 60 µs keep up: the window's 100 µs stands, set by compute.
TEST(StepFloor, WorkThatKeepsUpLeavesTheWindow) {
  const Steps steps = four_steps(60);
  const StepFloor floor = step_floor(steps.schedule, steps.demands, one_drive());
  EXPECT_EQ(floor.length, 100 * kUs);
  EXPECT_EQ(floor.lane, Lane::kGpuCompute);
  const Summary sum = simulate_steps(steps, one_drive());
  EXPECT_DOUBLE_EQ(sum.step_time.value(), 100e-6);
  EXPECT_FALSE(sum.falls_behind.has_value());
  EXPECT_EQ(sum.exposed_transfer_time.value(), 0.0);
}

// A read of 50 and a write of 70 µs per step, each direction within the
// 100 µs step, but the drive's shared time (capacity 1) is 120 µs a step:
// the floor is the drive's, named after the lane using the most of it.
TEST(StepFloor, ASharedResourceCountsBothLanesWork) {
  const Steps steps = four_steps(70, 50);
  const StepFloor floor = step_floor(steps.schedule, steps.demands, one_drive());
  EXPECT_EQ(floor.length, 120 * kUs);
  EXPECT_EQ(floor.lane, Lane::kNvmeWrite);
  Capacities full_duplex = one_drive();
  full_duplex[static_cast<size_t>(Resource::kNvme)] = 2;  // both directions at their full rates together
  EXPECT_EQ(step_floor(steps.schedule, steps.demands, full_duplex).length, 100 * kUs);
  const Summary sum = simulate_steps(steps, one_drive());
  EXPECT_GE(sum.step_time.value(), 120e-6 * (1 - 1e-9));
}

// Ops of fixed length on a lane of two slots run two at once: the lane's
// 150 µs a step counts 75, under compute's 100; with one slot, 150.
TEST(StepFloor, ALanesSlotsShareItsWork) {
  Steps steps = four_steps(150);
  for (size_t i = 0; i < steps.demands.size(); ++i) {
    if (steps.schedule.ops[i].lane == Lane::kNvmeWrite) steps.demands[i] = {.fixed = 150 * kUs};
  }
  EXPECT_EQ(step_floor(steps.schedule, steps.demands, one_drive()).length, 150 * kUs);
  steps.schedule.lane_slots[static_cast<size_t>(Lane::kNvmeWrite)] = 2;
  EXPECT_EQ(step_floor(steps.schedule, steps.demands, one_drive()).length, 100 * kUs);
}

}  // namespace
}  // namespace stowage::sim
