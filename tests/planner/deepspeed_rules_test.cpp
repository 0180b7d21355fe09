// DeepSpeed's rules (planner/deepspeed_rules.h): sub-grouping, the partial
// offload split, swap buffer pools and the limits a config must respect,
// checked by hand on small cases and as properties over every bundled model.
#include "planner/deepspeed_rules.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <numeric>

#include "core/policy.h"
#include "planner/deepspeed_export.h"
#include "tests/core/test_profiles.h"

namespace stowage::planner::deepspeed {
namespace {

using core::Bytes;
using core::testing::bundled;
using core::testing::must;

core::Workload workload(const std::string& model) {
  return core::Workload(must(bundled().model(model)), 2048);
}

int64_t sum(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}

// Every rank gets ceil(numel / ranks) of each tensor: a 10-element tensor
// over 4 ranks is padded to 12, 3 each.
TEST(DeepSpeedRules, PartitionsArePaddedToTheWorldSize) {
  const core::Workload w = workload("gpt2");
  const std::vector<int64_t> one = partition_numels(w, 1);
  const std::vector<int64_t> eight = partition_numels(w, 8);
  ASSERT_EQ(one.size(), eight.size());
  for (size_t i = 0; i < one.size(); ++i) EXPECT_EQ(eight[i], (one[i] + 7) / 8);
  EXPECT_EQ(sum(one), w.total_params());
}

// stage3.py _create_fp16_sub_groups: a size at least the total is one
// sub-group; otherwise each sub-group closes at the first tensor that takes
// it to the size, so dropping its last tensor leaves it short.
TEST(DeepSpeedRules, SubGroupsCloseOnceTheyReachTheSizeOnEveryModel) {
  for (const std::string& name : bundled().names(core::ProfileKind::kModel)) {
    const core::Workload w = workload(name);
    const std::vector<int64_t> parts = partition_numels(w, 1);
    EXPECT_EQ(sub_group_numels(w, 1, w.total_params()), std::vector<int64_t>{w.total_params()}) << name;
    EXPECT_EQ(sub_group_numels(w, 1, 1), parts) << name;  // size 1: one tensor each
    for (int64_t size : {w.largest_layer_params(), int64_t{1'000'000'000}}) {
      const std::vector<int64_t> groups = sub_group_numels(w, 1, size);
      EXPECT_EQ(sum(groups), w.total_params()) << name;
      size_t k = 0;
      for (size_t g = 0; g < groups.size(); ++g) {
        int64_t used = 0;
        while (used < groups[g]) used += parts[k++];
        EXPECT_EQ(used, groups[g]) << name << ": sub-groups hold whole tensors";
        if (g + 1 < groups.size()) {
          EXPECT_GE(groups[g], size) << name;
          EXPECT_LT(groups[g] - parts[k - 1], size) << name;
        }
      }
      EXPECT_EQ(k, parts.size()) << name;
    }
  }
}

// 1024-byte alignment (intra_op_parallelism 1): 256 fp32 or 512 16-bit elements.
TEST(DeepSpeedRules, IoAlignmentIsOneKibPerThread) {
  EXPECT_EQ(io_aligned_numel(1000, 4, 1), 1024);
  EXPECT_EQ(io_aligned_numel(256, 4, 1), 256);
  EXPECT_EQ(io_aligned_numel(1000, 2, 1), 1024);
  EXPECT_EQ(io_aligned_numel(513, 2, 1), 1024);
  EXPECT_EQ(io_aligned_numel(1000, 4, 2), 1024);  // 2048 B = 512 fp32 elements
  EXPECT_EQ(io_aligned_numel(1025, 4, 2), 1536);
}

// Four sub-groups of 10: ratio 0.5 keeps int(0.5 x 4) = 2 on the GPU; ratio
// 0.6 keeps int(0.4 x 4) = int(1.6) = 1, so 75 % is offloaded, not 60 %.
TEST(DeepSpeedRules, PartialOffloadRoundsToWholeSubGroups) {
  const std::vector<int64_t> groups = {10, 10, 10, 10};
  EXPECT_EQ(partial_offload(groups, 0.5).gpu_sub_groups, 2);
  EXPECT_DOUBLE_EQ(partial_offload(groups, 0.5).realised_ratio(), 0.5);
  EXPECT_EQ(partial_offload(groups, 0.6).gpu_sub_groups, 1);
  EXPECT_DOUBLE_EQ(partial_offload(groups, 0.6).realised_ratio(), 0.75);
  EXPECT_EQ(partial_offload(groups, 1.0).gpu_sub_groups, 0);
  EXPECT_EQ(partial_offload(groups, 0.0).gpu_sub_groups, 4);
}

// ratio_keeping(k, n) makes DeepSpeed keep exactly k sub-groups, for every k.
TEST(DeepSpeedRules, RatioKeepingIsExactForEveryCount) {
  for (int n = 1; n <= 400; ++n) {
    const std::vector<int64_t> groups(static_cast<size_t>(n), 7);
    for (int k = 0; k <= n; ++k) {
      EXPECT_EQ(partial_offload(groups, ratio_keeping(k, n)).gpu_sub_groups, k) << k << " of " << n;
    }
  }
}

// The parameter swapper asserts numel <= buffer_size for every partition it
// swaps (partitioned_param_swapper.py): the least size covers every tensor
// of every bundled model, for one and for eight ranks.
TEST(DeepSpeedRules, LeastParamBufferHoldsEveryParameter) {
  for (const std::string& name : bundled().names(core::ProfileKind::kModel)) {
    const core::Workload w = workload(name);
    for (int ranks : {1, 8}) {
      const int64_t size = least_param_buffer_size(w, ranks, 1);
      EXPECT_EQ(size % 512, 0) << name;
      for (int64_t p : partition_numels(w, ranks)) EXPECT_LE(p, size) << name;
    }
  }
}

// A GPT-2 attention's c_attn owns its weight and bias; no bundled module
// owns more than a handful, so DeepSpeed's default 5 buffers suffice there.
TEST(DeepSpeedRules, LeastParamBufferCountIsTheMostParametersOfOneModule) {
  EXPECT_EQ(least_param_buffer_count(workload("gpt2")), 2);
  for (const std::string& name : bundled().names(core::ProfileKind::kModel)) {
    const core::Workload w = workload(name);
    const int least = least_param_buffer_count(w);
    EXPECT_GE(least, 1) << name;
    EXPECT_LE(least, 5) << name;
  }
}

DeepSpeedSettings stage3(OffloadDevice optimizer, OffloadDevice param) {
  DeepSpeedSettings s;
  s.stage = 3;
  s.optimizer.device = optimizer;
  s.param.device = param;
  if (optimizer == OffloadDevice::kNvme || param == OffloadDevice::kNvme) s.aio = AioSettings{};
  return s;
}

Bytes pool(const std::vector<RuntimePool>& pools, const std::string& name) {
  for (const RuntimePool& p : pools) {
    if (p.name == name) return p.bytes;
  }
  return Bytes(0);
}

// The case: optimizer states on NVMe with buffer_count 12 and
// DeepSpeed's default 1e9-element sub-groups pin 12 buffers of the largest
// sub-group (at least 1e9 fp32 elements): at least 48 GB.
TEST(DeepSpeedRules, OptimizerSwapPoolIsBufferCountTimesLargestSubGroup) {
  const core::Workload w = workload("llama-2-13b");
  DeepSpeedSettings s = stage3(OffloadDevice::kNvme, OffloadDevice::kCpu);
  s.optimizer.buffer_count = 12;
  s.sub_group_size = 1'000'000'000;
  const std::vector<int64_t> groups = sub_group_numels(w, 1, s.sub_group_size);
  const int64_t largest = *std::max_element(groups.begin(), groups.end());
  const std::vector<RuntimePool> pools = runtime_pools(s, w);
  EXPECT_EQ(pool(pools, "optimizer swap buffers"), Bytes(12 * 4 * io_aligned_numel(largest, 4, 1)));
  EXPECT_GE(pool(pools, "optimizer swap buffers"), Bytes(48'000'000'000));
  // And the gradients of every partition in CPU memory, pinned, in the
  // model's 16-bit dtype (DeepSpeed's default grad_accum_dtype).
  EXPECT_EQ(pool(pools, "16-bit gradient partitions"), Bytes(2 * w.total_params()));
}

// Parameters on NVMe: buffer_count x aligned buffer_size 16-bit buffers,
// plus the write-back buffer once parameters exceed max_in_cpu.
TEST(DeepSpeedRules, ParamSwapPoolIsBufferCountTimesBufferSize) {
  const core::Workload w = workload("opt-30b");
  DeepSpeedSettings s = stage3(OffloadDevice::kNvme, OffloadDevice::kNvme);
  s.param.buffer_count = 5;
  s.param.buffer_size = 100'000'001;
  s.param.max_in_cpu = 0;
  const std::vector<RuntimePool> pools = runtime_pools(s, w);
  EXPECT_EQ(pool(pools, "parameter swap buffers"), Bytes(5 * 2 * io_aligned_numel(100'000'001, 2, 1)));
  EXPECT_GT(pool(pools, "parameter write-back buffer (largest sub-group)"), Bytes(0));
  EXPECT_EQ(pool(pools, "16-bit parameter partitions in CPU memory"), Bytes(0));
  EXPECT_EQ(max_reuse_distance(s), 0);
  s.param.device = OffloadDevice::kCpu;
  EXPECT_EQ(max_reuse_distance(s), kDefaultMaxReuseDistance);
}

// Pinned bytes count pinned host pools only: GPU buckets and unpinned
// buffers are not page-locked.
TEST(DeepSpeedRules, PinnedBytesCountOnlyPinnedHostPools) {
  const core::Workload w = workload("gpt2");
  DeepSpeedSettings s = stage3(OffloadDevice::kCpu, OffloadDevice::kCpu);
  s.pin_memory = false;
  const std::vector<RuntimePool> pools = runtime_pools(s, w);
  EXPECT_FALSE(pools.empty());
  EXPECT_EQ(pinned_bytes(pools), Bytes(0));
  s.pin_memory = true;
  Bytes host;
  for (const RuntimePool& p : runtime_pools(s, w)) {
    if (p.tier == core::Tier::kCpu) host += p.bytes;
  }
  EXPECT_EQ(pinned_bytes(runtime_pools(s, w)), host);
}

}  // namespace
}  // namespace stowage::planner::deepspeed
