// The executor end to end on a small Llama (tiny-llama shrunk to 2 blocks
// of width 64, 4 query heads over 2 kv heads): placement and activation
// checkpointing never change the loss curve, a device cap forces offload,
// and it learns more than byte frequencies. The GPT's counterpart is
// trainer_test.cpp; the plans reuse tiny_gpt_fixture.h's placements.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/policy.h"
#include "core/profile_catalog.h"
#include "core/workload.h"
#include "executor/trainer.h"
#include "tests/executor/tiny_gpt_fixture.h"

namespace stowage::executor {
namespace {

using testing::backend;
using testing::kAllDevice;
using testing::kCpuOffload;
using testing::kNvmeOffload;

const testing::Fixture& llama() {
  static const testing::Fixture f = [] {
    const core::ProfileCatalog catalog(STOWAGE_PROFILES_DIR);
    testing::Fixture x{.machine = *catalog.machine("workstation-24gb-1nvme"),
                       .model = *catalog.model("tiny-llama"),
                       .training = *catalog.training("tiny")};
    x.model.d_model = 64;
    x.model.layers = 2;
    x.model.heads = 4;
    x.model.kv_heads = 2;
    x.model.head_dim = 16;
    x.model.ffn = 128;
    x.model.max_positions = 64;
    x.training.micro_batch = 4;
    x.training.sequence_length = 32;
    return x;
  }();
  return f;
}

core::PlanFile plan_where(core::PartitionPolicy where, int64_t sub_group = 0) {
  core::PlanFile plan{.machine = "workstation-24gb-1nvme", .model = "tiny-llama", .training = "tiny"};
  plan.policy.sub_group_params = sub_group;
  const core::Workload w(llama().model, llama().training.sequence_length);
  plan.policy.partitions.assign(core::partitions_of(w, sub_group).size(), where);
  return plan;
}

// Sub-groups of 10000 parameters spread over device, CPU and NVMe by j % 3.
core::PlanFile three_tier_mix() {
  core::PlanFile mix = plan_where(kAllDevice, 10000);
  for (size_t j = 0; j < mix.policy.partitions.size(); ++j) {
    mix.policy.partitions[j] = j % 3 == 0 ? kAllDevice : j % 3 == 1 ? kCpuOffload : kNvmeOffload;
  }
  return mix;
}

core::Result<TrainingRun> train_llama(const core::PlanFile& plan, Backend& b, const TrainerOptions& options) {
  const testing::Fixture& f = llama();
  return train(plan, f.machine, f.model, f.training, b, options);
}

std::vector<double> losses(const core::PlanFile& plan, int64_t steps, const std::string& name) {
  auto b = backend("llama-" + name);
  auto run = train_llama(plan, *b, {.steps = steps, .seed = 7});
  EXPECT_TRUE(run) << (run ? "" : core::to_string(run.error()));
  return run ? run->losses : std::vector<double>{};
}

int64_t peak_device_bytes(const TrainingRun& run) {
  int64_t peak = 0;
  for (const core::MemorySample& m : run.timeline.memory) {
    if (m.tier == core::Tier::kGpu) peak = std::max(peak, m.bytes.count());
  }
  return peak;
}

TEST(LlamaTrainer, PlacementNeverChangesTheLossCurve) {
  const core::PlanFile mix = three_tier_mix();
  ASSERT_GT(mix.policy.partitions.size(), 5u);
  const std::vector<double> device = losses(plan_where(kAllDevice), 6, "device");
  ASSERT_EQ(device.size(), 6u);
  EXPECT_EQ(losses(plan_where(kNvmeOffload), 6, "nvme"), device);
  EXPECT_EQ(losses(mix, 6, "mix"), device);
  // Recomputing the blocks in backward rebuilds the same bits.
  core::PlanFile checkpointed = plan_where(kNvmeOffload);
  checkpointed.policy.activation_checkpointing = true;
  EXPECT_EQ(losses(checkpointed, 6, "recompute"), device);
}

TEST(LlamaTrainer, LossFallsBelowTheUnigramEntropy) {
  auto b = backend("llama-learns");
  auto run = train_llama(plan_where(kNvmeOffload), *b, {.steps = 120, .seed = 3});
  ASSERT_TRUE(run) << core::to_string(run.error());
  EXPECT_LT(run->losses.back(), run->losses.front() - 1.0);
  EXPECT_LT(run->held_out_loss, run->unigram_entropy);
}

TEST(LlamaTrainer, DeviceCapFailsTheAllDevicePlanAndNotTheOffloadingOne) {
  auto a = backend("llama-cap-a");
  auto b = backend("llama-cap-b");
  auto device = train_llama(plan_where(kAllDevice), *a, {.steps = 2});
  auto offload = train_llama(plan_where(kNvmeOffload), *b, {.steps = 2});
  ASSERT_TRUE(device && offload);
  const int64_t low = peak_device_bytes(*offload), high = peak_device_bytes(*device);
  ASSERT_LT(low, high);
  const int64_t cap = (low + high) / 2;
  auto small = backend("llama-cap", cap);
  auto failed = train_llama(plan_where(kAllDevice), *small, {.steps = 2});
  ASSERT_FALSE(failed);
  EXPECT_NE(core::to_string(failed.error()).find("gpu memory exhausted"), std::string::npos);
  auto fits = backend("llama-cap2", cap);
  auto ran = train_llama(plan_where(kNvmeOffload), *fits, {.steps = 2});
  EXPECT_TRUE(ran) << (ran ? "" : core::to_string(ran.error()));
}

}  // namespace
}  // namespace stowage::executor
