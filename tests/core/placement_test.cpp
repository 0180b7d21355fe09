#include "core/placement.h"

#include <gtest/gtest.h>

#include <set>

#include "core/policy.h"
#include "tests/core/test_profiles.h"

namespace stowage::core {
namespace {

using testing::bundled;
using testing::must;

// ZeRO 0; 1 and 2 x optimizer {gpu, cpu}; 3 x optimizer {gpu, cpu, nvme} x
// parameters {gpu, cpu, nvme}: 1 + 4 + 9 placements, each named once, and
// none DeepSpeed refuses (offload below stage 1, NVMe or parameter offload
// below stage 3).
TEST(DeepSpeedPlacements, EveryCombinationDeepSpeedAllowsOnce) {
  const std::vector<Placement> all = deepspeed_placements();
  EXPECT_EQ(all.size(), 14u);
  std::set<std::string> names;
  std::set<std::tuple<ZeroStage, Tier, Tier>> combos;
  for (const Placement& p : all) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_TRUE(combos.insert({p.stage, p.optimizer_states, p.param16}).second) << p.name;
    if (p.stage == ZeroStage::k0) {
      EXPECT_EQ(p.optimizer_states, Tier::kGpu) << p.name;
    }
    if (p.stage < ZeroStage::k3) {
      EXPECT_NE(p.optimizer_states, Tier::kNvme) << p.name;
      EXPECT_EQ(p.param16, Tier::kGpu) << p.name;
    }
    const std::optional<Placement> back = placement_named(p.name, 8);
    ASSERT_TRUE(back.has_value()) << p.name;
    EXPECT_EQ(back->stage, p.stage);
    EXPECT_EQ(back->param16, p.param16);
    EXPECT_EQ(back->optimizer_states, p.optimizer_states);
    EXPECT_EQ(back->offload_ratio, 1);
  }
  EXPECT_TRUE(names.contains("zero-3-optimizer-cpu"));           // ZeRO-3, params on the GPU, optimizer on CPU
  EXPECT_TRUE(names.contains("zero-3-optimizer-cpu-params-cpu"));  // ZeRO-3, both on CPU
  EXPECT_TRUE(names.contains("zero-3-optimizer-nvme-params-nvme"));
}

TEST(DeepSpeedPlacements, PartialOffloadRatioOnlyForStageThreeToCpu) {
  const std::optional<Placement> p = placement_named("zero-3-optimizer-cpu-params-cpu-ratio-0.4", 8);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->offload_ratio, 0.4);
  EXPECT_EQ(p->param16, Tier::kCpu);
  for (const char* bad : {"zero-2-optimizer-cpu-ratio-0.5", "zero-3-optimizer-nvme-ratio-0.5", "zero-3-ratio-0.5",
                          "zero-3-optimizer-cpu-ratio-0", "zero-3-optimizer-cpu-ratio-1", "zero-3-optimizer-cpu-ratio-1.5",
                          "zero-3-optimizer-cpu-ratio-", "zero-3-optimizer-cpu-ratio-0.5x", "zero-4", "zero-1-params-cpu"}) {
    EXPECT_FALSE(placement_named(bad, 8).has_value()) << bad;
  }
  EXPECT_EQ(placement_named("zero-offload", 1)->name, "zero-offload");
}

// A ratio keeps the first int((1 - ratio) x n) partitions' states on the
// GPU, as DeepSpeed keeps its first sub-groups: Llama-2-7B has 34
// partitions (embedding, 32 blocks, final), int(0.75 x 34) = 25 on the GPU.
TEST(DeepSpeedPlacements, RatioKeepsTheFirstPartitionsOnTheGpu) {
  const TrainingSpec training = must(bundled().training("default"));
  const Workload w(must(bundled().model("llama-2-7b")), training.sequence_length);
  const Policy policy = policy_for(*placement_named("zero-3-optimizer-cpu-ratio-0.25", 1), w, training);
  ASSERT_EQ(policy.partitions.size(), 34u);
  for (size_t j = 0; j < policy.partitions.size(); ++j) {
    const PartitionPolicy& p = policy.partitions[j];
    EXPECT_EQ(p.optimizer_states, j < 25 ? Tier::kGpu : Tier::kCpu) << j;
    EXPECT_EQ(p.optimizer, j < 25 ? OptimizerDevice::kGpu : OptimizerDevice::kCpu) << j;
    EXPECT_EQ(p.gradients, j < 25 ? Tier::kGpu : Tier::kCpu) << j;
  }
}

}  // namespace
}  // namespace stowage::core
