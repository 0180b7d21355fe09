// The step-time bound stays a bound when a machine's cost parameters come
// from its profile's `calibration:` section: every bundled machine with
// calibrations that move each lane's rate both ways (a slow measured
// link, a fast one, a slow CPU optimizer on one thread, inefficient
// compute, a compute rate curve, a disk whose reads and writes do not slow
// each other), on a sample of the candidates the search generates.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "planner/search.h"
#include "planner/step_bound.h"
#include "tests/core/test_profiles.h"

namespace stowage::planner {
namespace {

using core::testing::bundled;
using core::testing::must;

std::vector<std::pair<std::string, core::CostParameters>> calibrations() {
  std::vector<std::pair<std::string, core::CostParameters>> out;
  core::CostParameters slow_link;
  slow_link.h2d_rate = core::BytesPerSecond(3e9);
  slow_link.d2h_rate = core::BytesPerSecond(2e9);
  slow_link.pcie_latency = core::Seconds(1e-6);
  out.emplace_back("slow measured link", slow_link);
  core::CostParameters fast_link;
  fast_link.h2d_rate = core::BytesPerSecond(60e9);
  fast_link.d2h_rate = core::BytesPerSecond(60e9);
  out.emplace_back("fast measured link", fast_link);
  core::CostParameters cpu;
  cpu.cpu_core_rate = core::FlopsPerSecond(1e9);
  cpu.optimizer_threads = 1;
  cpu.dram_efficiency = 1.0;
  out.emplace_back("one slow optimizer thread", cpu);
  core::CostParameters compute;
  compute.matmul_efficiency = 0.1;
  compute.compute_overhead = core::Seconds(1e-3);
  compute.nvme_efficiency = 0.3;
  out.emplace_back("inefficient compute and disk", compute);
  // Reads and writes at their own rates side by side: a bound that adds
  // their times would be above the step.
  core::CostParameters duplex;
  duplex.nvme_read_rate = core::BytesPerSecond(3e9);
  duplex.nvme_write_rate = core::BytesPerSecond(2.5e9);
  duplex.nvme_duplex = 2;
  out.emplace_back("a full-duplex measured disk", duplex);
  // A measured curve (core/compute_rate.h): small ops far below the
  // slowest bundled GPU's peak (a T4's 65 TFLOP/s), large ones near it, and
  // not monotone, so that an op's cost depends on how lowering cuts it.
  core::CostParameters curve;
  curve.compute_rate_by_flops = {{.flops = 1e8, .rate = core::FlopsPerSecond(2e12)},
                                 {.flops = 1e11, .rate = core::FlopsPerSecond(60e12)},
                                 {.flops = 1e13, .rate = core::FlopsPerSecond(30e12)}};
  out.emplace_back("a measured compute curve", curve);
  return out;
}

TEST(CalibratedStepBound, NeverAboveTheSimulatedStepTime) {
  constexpr size_t kStride = 97;
  const core::ProfileCatalog catalog = bundled();
  int checked = 0;
  size_t pair = 0;
  for (const auto& [what, params] : calibrations()) {
    for (const std::string& m : catalog.names(core::ProfileKind::kMachine)) {
      core::MachineSpec machine = must(catalog.machine(m));
      machine.calibration = params;
      const core::TrainingSpec training = must(catalog.training(machine.gpu.bf16_rate ? "default" : "fp16-adam"));
      for (const std::string x : {"gpt2", "llama-2-7b"}) {
        const core::ModelSpec model = must(catalog.model(x));
        const core::Workload w(model, training.sequence_length);
        const std::vector<Candidate> space = search_space(machine, model, training);
        for (size_t i = (pair++ * 31) % kStride; i < space.size(); i += kStride) {
          if (space[i].policy.delayed_update) continue;  // see bounds_test.cpp: the window reads low
          const Evaluation e = evaluate(space[i], machine, model);
          if (!e.summary) continue;
          EXPECT_LE(step_lower_bound(space[i], machine, w), e.step_seconds() * (1 + 1e-4))
              << what << ", " << m << " / " << x << ": " << space[i].name;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 50);
}

// The bound reads the machine's calibration: a slower measured link raises
// the bound of a plan that moves parameters over it.
TEST(CalibratedStepBound, FollowsTheMachinesCalibration) {
  const core::ProfileCatalog catalog = bundled();
  core::MachineSpec machine = must(catalog.machine("workstation-24gb-1nvme"));
  const core::TrainingSpec training = must(catalog.training("default"));
  const core::ModelSpec model = must(catalog.model("llama-2-7b"));
  const core::Workload w(model, training.sequence_length);
  const std::vector<Candidate> space = search_space(machine, model, training);
  const auto offloads = std::find_if(space.begin(), space.end(), [](const Candidate& k) {
    return !k.policy.partitions.empty() && k.policy.partitions.front().param16 != core::Tier::kGpu;
  });
  ASSERT_NE(offloads, space.end());
  const Candidate& c = *offloads;
  const double before = step_lower_bound(c, machine, w);
  machine.calibration.h2d_rate = core::BytesPerSecond(0.1e9);
  machine.calibration.d2h_rate = core::BytesPerSecond(0.1e9);
  EXPECT_GT(step_lower_bound(c, machine, w), before);
}

}  // namespace
}  // namespace stowage::planner
