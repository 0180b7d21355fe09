// Lowering and simulation together on the bundled profiles: invariants that
// hold for every model, and the delayed update's effect.
#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <optional>

#include "core/lower.h"
#include "sim/lane_models.h"
#include "tests/core/test_profiles.h"

namespace stowage::sim {
namespace {

using core::testing::bundled;
using core::testing::must;

struct Case {
  core::Schedule schedule;
  Prediction prediction;
};

Case simulate_placement(const std::string& machine_name, const std::string& model_name,
                        core::StandardPlacement which, int steps, bool delayed = false) {
  const core::MachineSpec machine = must(bundled().machine(machine_name));
  const core::TrainingSpec training = must(bundled().training("default"));
  const core::Workload w(must(bundled().model(model_name)), training.sequence_length);
  core::Policy policy = core::policy_for(core::standard_placement(which, machine.gpu_count), w, training);
  policy.delayed_update = delayed;
  core::Schedule s = must(core::lower(policy, machine, w, training, {.steps = steps > 0 ? steps : core::steady_state_steps(policy)}));
  Prediction p = simulate(s, machine);
  return {std::move(s), std::move(p)};
}

// On every bundled model, for each placement the machine can hold: the
// makespan of one step is at least every single-stream lane's total work and
// at least the critical path, and every tier ends where it started.
TEST(Simulator, InvariantsHoldOnEveryBundledModel) {
  for (const std::string& model : bundled().names(core::ProfileKind::kModel)) {
    for (core::StandardPlacement which : {core::StandardPlacement::kAllGpu, core::StandardPlacement::kZeroOffload,
                                          core::StandardPlacement::kZeroInfinity}) {
      SCOPED_TRACE(model + " placement " + std::to_string(static_cast<int>(which)));
      const Case c = simulate_placement("dgx-a100", model, which, 1);
      const core::Timeline& t = c.prediction.timeline;
      std::array<core::SimTime, core::kLaneCount> work{};
      for (const core::Op& op : c.schedule.ops) {
        work[static_cast<size_t>(op.lane)] += t.spans[static_cast<size_t>(op.id)].end - t.spans[static_cast<size_t>(op.id)].start;
      }
      const core::SimTime makespan = c.prediction.engine.makespan;
      for (core::Lane lane : core::kAllLanes) {
        if (c.schedule.lane_slots[static_cast<size_t>(lane)] == 1) {
          EXPECT_GE(makespan, work[static_cast<size_t>(lane)]);
        }
      }
      core::SimTime path = 0;
      for (core::OpId id : c.prediction.summary.critical_path) {
        path += t.spans[static_cast<size_t>(id)].end - t.spans[static_cast<size_t>(id)].start;
      }
      EXPECT_GE(makespan, path);
      EXPECT_EQ(static_cast<double>(makespan) * 1e-9, c.prediction.summary.step_time.value());
      std::array<core::Bytes, 3> last = c.schedule.resident;
      for (const core::MemorySample& m : t.memory) last[static_cast<size_t>(m.tier)] = m.bytes;
      for (size_t tier = 0; tier < 3; ++tier) EXPECT_EQ(last[tier], c.schedule.resident[tier]) << "tier " << tier;
    }
  }
}

// With a one-step delayed update, the forward of step t+1 no longer waits
// for the optimizer of step t. Without it, the GPU idles between the end of
// step t's last backward and the start of step t+1's first forward: the
// optimizer tail (Adam over 6.7B parameters from DRAM, then the upload of the
// last updated layers). With host gradients double-buffered, nothing else
// in step t+1 waits for step t's optimizer, so the step is shorter by
// exactly that gap.
TEST(Simulator, DelayedUpdateShortensTheStepByTheOptimizerTail) {
  const Case plain = simulate_placement("workstation-24gb-1nvme", "llama-2-7b", core::StandardPlacement::kZeroOffload, 0);
  const Case delayed =
      simulate_placement("workstation-24gb-1nvme", "llama-2-7b", core::StandardPlacement::kZeroOffload, 0, true);
  // The GPU's idle gap at the step boundary in the plain run.
  core::SimTime last_backward_end = 0, next_forward_start = 0;
  for (const core::Op& op : plain.schedule.ops) {
    const core::OpSpan& sp = plain.prediction.timeline.spans[static_cast<size_t>(op.id)];
    if (op.step == 1 && op.lane == core::Lane::kGpuCompute) last_backward_end = std::max(last_backward_end, sp.end);
    if (op.step == 2 && op.kind == core::OpKind::kForward && next_forward_start == 0) next_forward_start = sp.start;
  }
  const double gap = static_cast<double>(next_forward_start - last_backward_end) * 1e-9;
  ASSERT_GT(gap, 0.1) << "plain " << plain.prediction.summary.step_time.value() << " s, delayed "
                      << delayed.prediction.summary.step_time.value() << " s";  // the CPU optimizer of a 7B model takes seconds
  EXPECT_NEAR(plain.prediction.summary.step_time.value() - delayed.prediction.summary.step_time.value(), gap, 1e-9);
}

// CostParameters::host_lane_cores (the CPU backend's lanes sharing the
// host's cores): ops slow down only while other lanes' threads run beside
// them. With more cores than lanes nothing changes; with one core the
// delayed update's CPU optimizer, beside compute, stretches the step and
// no compute op runs faster, nor the lanes on the cores in all; all on the
// device (one busy lane) is unchanged. The copies take no share of the
// cores (sim::runs_on_a_host_thread): they run at their own rate, and may
// run faster with one core, where the slowed optimizer leaves them more of
// the host's memory bandwidth (and an optimizer op beside a copy no
// longer may then).
TEST(Simulator, LanesSharingTheHostsCoresSlowOnlyOpsThatOverlap) {
  const core::MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const core::TrainingSpec training = must(bundled().training("tiny"));
  const core::Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  auto run = [&](core::StandardPlacement which, std::optional<double> cores) {
    core::Policy policy = core::policy_for(core::standard_placement(which, 1), w, training);
    policy.delayed_update = which == core::StandardPlacement::kZeroOffload;
    Case c{must(core::lower(policy, machine, w, training, {.steps = core::steady_state_steps(policy)})), {}};
    core::CostParameters params = machine.calibration;
    params.host_lane_cores = cores;
    c.prediction = simulate(c.schedule, machine, {.params = params});
    return c;
  };
  auto step = [](const Case& c) { return c.prediction.summary.step_time.value(); };
  const Case own = run(core::StandardPlacement::kZeroOffload, std::nullopt);
  const Case wide = run(core::StandardPlacement::kZeroOffload, 8.0);
  const Case one = run(core::StandardPlacement::kZeroOffload, 1.0);
  EXPECT_NEAR(step(wide), step(own), 0.01 * step(own));
  EXPECT_GT(step(one), 1.05 * step(wide)) << "one core for compute and the delayed CPU optimizer";
  core::SimTime on_cores_one = 0, on_cores_wide = 0;
  for (size_t i = 0; i < one.schedule.ops.size(); ++i) {
    const core::Lane lane = one.schedule.ops[i].lane;
    if (!runs_on_a_host_thread(lane)) continue;
    const core::OpSpan a = one.prediction.timeline.spans[i], b = wide.prediction.timeline.spans[i];
    on_cores_one += a.end - a.start, on_cores_wide += b.end - b.start;
    if (lane == core::Lane::kGpuCompute) {
      EXPECT_GE(a.end - a.start + 2, b.end - b.start) << one.schedule.ops[i].name << " ran faster sharing a core";
    }
  }
  EXPECT_GT(on_cores_one, on_cores_wide);
  const Case device = run(core::StandardPlacement::kAllGpu, std::nullopt);
  const Case device_one = run(core::StandardPlacement::kAllGpu, 1.0);
  EXPECT_NEAR(step(device_one), step(device), 1e-3 * step(device));
}

// Every op of `s` at the same span in both predictions.
void expect_same_spans(const core::Schedule& s, const Prediction& a, const Prediction& b) {
  for (size_t i = 0; i < s.ops.size(); ++i) {
    EXPECT_EQ(a.timeline.spans[i].start, b.timeline.spans[i].start) << s.ops[i].name;
    EXPECT_EQ(a.timeline.spans[i].end, b.timeline.spans[i].end) << s.ops[i].name;
  }
}

// CostParameters::h2d_rate_beside_compute and d2h_rate_beside_compute (the
// CPU backend's copies slowed beside a layer pass): at half the copies'
// rates, a copy that a compute op overlaps takes longer, at most twice as
// long; no compute op takes longer (on eight cores nothing else slows
// them) and the step is no shorter. On a real GPU (no host_lane_cores)
// the same parameters change nothing.
TEST(Simulator, CopiesSlowToTheirRateBesideComputeOnlyWhereTheDeviceIsOnTheHost) {
  const core::MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const core::TrainingSpec training = must(bundled().training("tiny"));
  const core::Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  const core::Policy policy = core::policy_for(core::standard_placement(core::StandardPlacement::kZeroOffload, 1), w, training);
  const core::Schedule s = must(core::lower(policy, machine, w, training, {.steps = core::steady_state_steps(policy)}));
  core::CostParameters plain = machine.calibration;
  plain.h2d_rate = plain.d2h_rate = core::BytesPerSecond(4e9);
  core::CostParameters crowded = plain;
  crowded.h2d_rate_beside_compute = crowded.d2h_rate_beside_compute = core::BytesPerSecond(2e9);
  auto simulated = [&](core::CostParameters p, std::optional<double> cores) {
    p.host_lane_cores = cores;
    return simulate(s, machine, {.params = p});
  };
  const Prediction alone = simulated(plain, 8.0), beside = simulated(crowded, 8.0);
  int slower = 0;
  for (const core::Op& op : s.ops) {
    const core::OpSpan a = alone.timeline.spans[static_cast<size_t>(op.id)], b = beside.timeline.spans[static_cast<size_t>(op.id)];
    const core::SimTime was = a.end - a.start, is = b.end - b.start;
    if (op.lane == core::Lane::kGpuCompute) {
      EXPECT_LE(is, was + 2) << op.name;
    }
    if (op.lane != core::Lane::kPcieH2d && op.lane != core::Lane::kPcieD2h) continue;
    EXPECT_GE(is + 2, was) << op.name;
    EXPECT_LE(is, 2 * was + 2) << op.name;
    if (is > was + was / 10) ++slower;
  }
  EXPECT_GT(slower, 0) << "no copy ran beside compute";
  EXPECT_GE(beside.summary.step_time.value(), alone.summary.step_time.value() * (1 - 1e-9));

  expect_same_spans(s, simulated(plain, std::nullopt), simulated(crowded, std::nullopt));
}

// CostParameters::compute_share_beside_nvme (the CPU backend's layer passes
// slowed beside NVMe I/O): at half their rate, a layer pass that NVMe I/O
// overlaps takes longer, at most twice as long; no NVMe op takes longer
// (on eight cores nothing else slows them, and the I/O is not crowded)
// and the step is no shorter. On a real GPU (no host_lane_cores) the same
// parameter changes nothing.
TEST(Simulator, LayerPassesSlowToTheirShareBesideNvmeOnlyWhereTheDeviceIsOnTheHost) {
  const core::MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const core::TrainingSpec training = must(bundled().training("tiny"));
  const core::Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  const core::Policy policy = core::policy_for(core::standard_placement(core::StandardPlacement::kZeroInfinity, 1), w, training);
  const core::Schedule s = must(core::lower(policy, machine, w, training, {.steps = core::steady_state_steps(policy)}));
  const core::CostParameters plain = machine.calibration;
  core::CostParameters crowded = plain;
  crowded.compute_share_beside_nvme = 0.5;
  auto simulated = [&](core::CostParameters p, std::optional<double> cores) {
    p.host_lane_cores = cores;
    return simulate(s, machine, {.params = p});
  };
  const Prediction alone = simulated(plain, 8.0), beside = simulated(crowded, 8.0);
  int slower = 0;
  for (const core::Op& op : s.ops) {
    const core::OpSpan a = alone.timeline.spans[static_cast<size_t>(op.id)], b = beside.timeline.spans[static_cast<size_t>(op.id)];
    const core::SimTime was = a.end - a.start, is = b.end - b.start;
    if (op.lane == core::Lane::kNvmeRead || op.lane == core::Lane::kNvmeWrite) {
      EXPECT_LE(is, was + 2) << op.name;
    }
    if (!core::is_layer_pass(op.kind)) continue;
    EXPECT_GE(is + 2, was) << op.name;
    EXPECT_LE(is, 2 * was + 2) << op.name;
    if (is > was + was / 10) ++slower;
  }
  EXPECT_GT(slower, 0) << "no layer pass ran beside NVMe I/O";
  EXPECT_GE(beside.summary.step_time.value(), alone.summary.step_time.value() * (1 - 1e-9));

  expect_same_spans(s, simulated(plain, std::nullopt), simulated(crowded, std::nullopt));
}

// CostParameters::nvme_duplex: with 2 a read beside a write runs as fast
// as alone, with 1 they share the drive, and two reads share their
// direction's rate whatever the duplex. Ops of ZeRO-Infinity's tiny-gpt
// (prefetch depth 2, so reads overlap reads and writes).
TEST(Simulator, ReadsAndWritesShareTheDriveAsFarAsItsDuplexSays) {
  const core::MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const core::TrainingSpec training = must(bundled().training("tiny"));
  const core::Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  core::Policy policy = core::policy_for(core::standard_placement(core::StandardPlacement::kZeroInfinity, 1), w, training);
  policy.nvme_prefetch_depth = 2;
  const core::Schedule s = must(core::lower(policy, machine, w, training, {.steps = 2}));
  auto nvme_busy = [&](double duplex) {
    core::CostParameters params = machine.calibration;
    params.nvme_duplex = duplex;
    const core::Timeline t = simulate(s, machine, {.params = params}).timeline;
    double busy = 0;
    for (const core::Op& op : s.ops) {
      if (op.lane == core::Lane::kNvmeRead || op.lane == core::Lane::kNvmeWrite)
        busy += static_cast<double>(t.spans[static_cast<size_t>(op.id)].end - t.spans[static_cast<size_t>(op.id)].start);
    }
    return busy;
  };
  const double shared = nvme_busy(1), full = nvme_busy(2), beyond = nvme_busy(4);
  EXPECT_LT(full, 0.9 * shared) << "reads beside writes ran no faster with the drive serving both";
  EXPECT_NEAR(beyond, full, 1e-6 * full) << "each direction is held to its own rate";
}

TEST(Simulator, SixteenGpusSimulateOneRepresentativeRank) {
  const Case one = simulate_placement("workstation-24gb-1nvme", "gpt2-xl", core::StandardPlacement::kZeroInfinity, 1);
  const Case many = simulate_placement("dgx-2", "gpt2-xl", core::StandardPlacement::kZeroInfinity, 1);
  // Same ops per rank apart from the collectives the ranks need.
  size_t collectives = 0;
  for (const core::Op& op : many.schedule.ops) collectives += op.lane == core::Lane::kGpuComm;
  EXPECT_GT(collectives, 0u);
  EXPECT_EQ(many.schedule.ops.size() - collectives, one.schedule.ops.size());
  EXPECT_EQ(many.schedule.ranks, 16);
}

TEST(Simulator, TheSameInputsGiveTheSameTimeline) {
  const Case a = simulate_placement("workstation-24gb-1nvme", "tiny-gpt", core::StandardPlacement::kZeroInfinity, 2);
  const Case b = simulate_placement("workstation-24gb-1nvme", "tiny-gpt", core::StandardPlacement::kZeroInfinity, 2);
  ASSERT_EQ(a.prediction.timeline.spans.size(), b.prediction.timeline.spans.size());
  for (size_t i = 0; i < a.prediction.timeline.spans.size(); ++i) {
    EXPECT_EQ(a.prediction.timeline.spans[i].start, b.prediction.timeline.spans[i].start);
    EXPECT_EQ(a.prediction.timeline.spans[i].end, b.prediction.timeline.spans[i].end);
  }
}

}  // namespace
}  // namespace stowage::sim

namespace stowage::sim {
namespace {

// Pageable host buffers copy through a bounce buffer at about half the
// pinned rate (cost parameters 0.4 against 0.8 of the link), so a plan that
// moves parameters over PCIe every micro-step is slower without pinning.
TEST(Simulator, PageableMemorySlowsPcieBoundPlans) {
  const core::MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const core::TrainingSpec training = must(bundled().training("default"));
  const core::Workload w(must(bundled().model("llama-2-7b")), training.sequence_length);
  core::Policy policy = core::policy_for(core::standard_placement(core::StandardPlacement::kZeroInfinity, 1), w, training);
  const double pinned = simulate(must(core::lower(policy, machine, w, training, {.steps = 3})), machine).summary.step_time.value();
  policy.pinned_memory = false;
  const double pageable = simulate(must(core::lower(policy, machine, w, training, {.steps = 3})), machine).summary.step_time.value();
  EXPECT_GT(pageable, pinned * 1.05);
}

}  // namespace
}  // namespace stowage::sim
