// bf16 optimizer states (issue 16, item 3) as the simulator prices them: an
// offloaded plan's states take 8 instead of 12 bytes per parameter on the
// tier they rest on (resident and peak), its CPU Adam moves 20 instead of 28
// bytes per parameter and takes that much less time where DRAM bounds it,
// and the step is shorter when the optimizer bounds it.
#include <gtest/gtest.h>

#include "core/lower.h"
#include "sim/simulator.h"
#include "tests/core/test_profiles.h"

namespace stowage::sim {
namespace {

using core::testing::bundled;
using core::testing::must;

struct SimulatedRun {
  core::Schedule schedule;
  Prediction prediction;
  int64_t params = 0;
};

SimulatedRun simulate_with(const std::string& machine_name, const std::string& model_name, core::StandardPlacement which,
                  core::StatePrecision states) {
  const core::MachineSpec machine = must(bundled().machine(machine_name));
  const core::TrainingSpec training = must(bundled().training("default"));
  const core::Workload w(must(bundled().model(model_name)), training.sequence_length);
  core::Policy policy = core::policy_for(core::standard_placement(which, machine.gpu_count), w, training);
  policy.optimizer_state_precision = states;
  core::Schedule s = must(core::lower(policy, machine, w, training, {.steps = core::steady_state_steps(policy)}));
  Prediction p = simulate(s, machine);
  return {std::move(s), std::move(p), w.total_params()};
}

core::SimTime optimizer_time(const SimulatedRun& r) {
  core::SimTime t = 0;
  for (const core::Op& op : r.schedule.ops) {
    if (op.kind != core::OpKind::kOptimizer) continue;
    const core::OpSpan& span = r.prediction.timeline.spans[static_cast<size_t>(op.id)];
    t += span.end - span.start;
  }
  return t;
}

// ZeRO-Offload of Llama-2-7B on the 24 GB workstation: states in CPU RAM,
// Adam on the CPU. Resident CPU memory drops by exactly 4 B x N (12 -> 8 B
// per parameter of master32 + adam_m + adam_v), and so does the CPU peak,
// since the states rest there the whole step; GPU memory is unchanged.
TEST(Bf16States, OffloadedStatesRestInTwoThirdsOfTheBytes) {
  const SimulatedRun fp32 = simulate_with("workstation-24gb-1nvme", "llama-2-7b", core::StandardPlacement::kZeroOffload,
                                 core::StatePrecision::kFp32);
  const SimulatedRun bf16 = simulate_with("workstation-24gb-1nvme", "llama-2-7b", core::StandardPlacement::kZeroOffload,
                                 core::StatePrecision::kBf16);
  const auto cpu = static_cast<size_t>(core::Tier::kCpu), gpu = static_cast<size_t>(core::Tier::kGpu);
  EXPECT_EQ((fp32.schedule.resident[cpu] - bf16.schedule.resident[cpu]).count(), 4 * fp32.params);
  EXPECT_EQ((fp32.prediction.engine.peak[cpu] - bf16.prediction.engine.peak[cpu]).count(), 4 * fp32.params);
  EXPECT_EQ(fp32.prediction.engine.peak[gpu], bf16.prediction.engine.peak[gpu]);
}

// ZeRO-Infinity: the states rest on NVMe (12 -> 8 B per parameter there)
// and are read and written every step: 2/3 of the NVMe state traffic.
TEST(Bf16States, NvmeStatesAndTheirTrafficShrinkByTheByteRatio) {
  const SimulatedRun fp32 = simulate_with("workstation-24gb-1nvme", "llama-2-7b", core::StandardPlacement::kZeroInfinity,
                                 core::StatePrecision::kFp32);
  const SimulatedRun bf16 = simulate_with("workstation-24gb-1nvme", "llama-2-7b", core::StandardPlacement::kZeroInfinity,
                                 core::StatePrecision::kBf16);
  const auto nvme = static_cast<size_t>(core::Tier::kNvme);
  // Whatever else rests on NVMe (param16 under ZeRO-Infinity) is the same.
  EXPECT_EQ((fp32.schedule.resident[nvme] - bf16.schedule.resident[nvme]).count(), 4 * fp32.params);
  core::Bytes states_fp32, states_bf16;
  for (const core::Op& op : fp32.schedule.ops)
    if (op.kind == core::OpKind::kReadStates || op.kind == core::OpKind::kWriteStates) states_fp32 += op.bytes;
  for (const core::Op& op : bf16.schedule.ops)
    if (op.kind == core::OpKind::kReadStates || op.kind == core::OpKind::kWriteStates) states_bf16 += op.bytes;
  ASSERT_GT(states_fp32.count(), 0);
  EXPECT_EQ(states_bf16.count() * 12, states_fp32.count() * 8);
  EXPECT_LT(bf16.prediction.summary.step_time.value(), fp32.prediction.summary.step_time.value());
}

// The CPU Adam is priced by the DRAM bytes it moves (cpu_optimizer_model):
// 28 -> 20 B per parameter. Where DRAM bounds it, its ops take 20/28 of the
// time; the FLOPs (unchanged) can only keep the ratio above that. The step
// of the plan that waits on its optimizer shortens.
TEST(Bf16States, CpuAdamTakesTheByteRatioOfItsTimeAndTheStepShortens) {
  const SimulatedRun fp32 = simulate_with("workstation-24gb-1nvme", "llama-2-7b", core::StandardPlacement::kZeroOffload,
                                 core::StatePrecision::kFp32);
  const SimulatedRun bf16 = simulate_with("workstation-24gb-1nvme", "llama-2-7b", core::StandardPlacement::kZeroOffload,
                                 core::StatePrecision::kBf16);
  core::Bytes bytes_fp32, bytes_bf16;
  for (const core::Op& op : fp32.schedule.ops)
    if (op.kind == core::OpKind::kOptimizer) bytes_fp32 += op.bytes;
  for (const core::Op& op : bf16.schedule.ops)
    if (op.kind == core::OpKind::kOptimizer) bytes_bf16 += op.bytes;
  EXPECT_EQ(bytes_bf16.count() * 28, bytes_fp32.count() * 20);
  const double ratio = static_cast<double>(optimizer_time(bf16)) / static_cast<double>(optimizer_time(fp32));
  EXPECT_GE(ratio, 20.0 / 28.0 * 0.99);
  EXPECT_LE(ratio, 20.0 / 28.0 * 1.05) << "the CPU Adam should be DRAM-bound on this machine";
  EXPECT_LT(bf16.prediction.summary.step_time.value(), fp32.prediction.summary.step_time.value());
}

}  // namespace
}  // namespace stowage::sim
