#include "core/memory_at_peak.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/lower.h"
#include "tests/core/test_profiles.h"

namespace stowage::core {
namespace {

using testing::bundled;
using testing::must;

Op op_at(OpId id, std::vector<MemoryEffect> allocs, std::vector<MemoryEffect> frees) {
  return {.id = id, .name = "op" + std::to_string(id), .allocs = std::move(allocs), .frees = std::move(frees)};
}

// Three ops one after another, worked out by hand:
//   resident: gpu 100 (param16 at rest), cpu 50 (host reserve)
//   op0 [0, 10):  +30 activations, +5 scratch (freed at its end)  gpu 135
//   op1 [10, 20): ends before starts at t = 10, so -5 then +20 grad16  gpu 150 <- peak
//                 and frees the 30 of activations at its end
//   op2 [20, 30): -20 grad16 at its end; +12 states staged on the cpu  cpu 62 <- peak
TEST(MemoryAtPeak, HoldersAtThePeakByItem) {
  Schedule s;
  s.resident = {Bytes(100), Bytes(50), Bytes(0)};
  s.resident_items = {{Tier::kGpu, Bytes(100), std::string(kParamsAtRest)}, {Tier::kCpu, Bytes(50), "host reserve"}};
  s.ops.push_back(op_at(0, {{Tier::kGpu, Bytes(30), "activations l0"}, {Tier::kGpu, Bytes(5), "scratch fwd l0"}},
                        {{Tier::kGpu, Bytes(5), "scratch fwd l0"}}));
  s.ops.push_back(op_at(1, {{Tier::kGpu, Bytes(20), "grad16 l0"}}, {{Tier::kGpu, Bytes(30), "activations l0"}}));
  s.ops.push_back(op_at(2, {{Tier::kCpu, Bytes(12), "states l0 staged"}},
                        {{Tier::kGpu, Bytes(20), "grad16 l0"}, {Tier::kCpu, Bytes(12), "states l0 staged"}}));
  Timeline t;
  t.spans = {{.start = 0, .end = 10}, {.start = 10, .end = 20}, {.start = 20, .end = 30}};
  const std::array<TierPeak, 3> p = memory_at_peak(s, t);
  const TierPeak& gpu = p[static_cast<size_t>(Tier::kGpu)];
  EXPECT_EQ(gpu.peak, Bytes(150));
  EXPECT_EQ(gpu.at, 10);
  ASSERT_EQ(gpu.held.size(), 3u);
  EXPECT_EQ(gpu.held[0].item, MemoryItem::kParam16);
  EXPECT_EQ(gpu.held[0].bytes, Bytes(100));
  EXPECT_EQ(gpu.held[1].item, MemoryItem::kActivations);
  EXPECT_EQ(gpu.held[1].bytes, Bytes(30));
  EXPECT_EQ(gpu.held[2].item, MemoryItem::kGrad16);
  EXPECT_EQ(gpu.held[2].bytes, Bytes(20));
  const TierPeak& cpu = p[static_cast<size_t>(Tier::kCpu)];
  EXPECT_EQ(cpu.peak, Bytes(62));
  EXPECT_EQ(cpu.at, 20);
  ASSERT_EQ(cpu.held.size(), 2u);
  EXPECT_EQ(cpu.held[0].item, MemoryItem::kReserve);
  EXPECT_EQ(cpu.held[1].item, MemoryItem::kOptimizerStates);
  EXPECT_EQ(cpu.held[1].bytes, Bytes(12));
  EXPECT_EQ(p[static_cast<size_t>(Tier::kNvme)].peak, Bytes(0));
  EXPECT_TRUE(p[static_cast<size_t>(Tier::kNvme)].held.empty());
}

// A name no one gave is counted apart, never dropped; a runtime pool named
// by the caller is a pool.
TEST(MemoryAtPeak, UnknownNamesAreCountedAndPoolsRecognised) {
  Schedule s;
  s.resident = {Bytes(0), Bytes(70), Bytes(0)};
  s.resident_items = {{Tier::kCpu, Bytes(40), "optimizer swap buffers"}, {Tier::kCpu, Bytes(30), "mystery"}};
  Timeline t;
  const TierPeak cpu = memory_at_peak(s, t, {"optimizer swap buffers"})[static_cast<size_t>(Tier::kCpu)];
  EXPECT_EQ(cpu.peak, Bytes(70));
  EXPECT_EQ(cpu.unknown, Bytes(30));
  ASSERT_EQ(cpu.held.size(), 1u);
  EXPECT_EQ(cpu.held[0].item, MemoryItem::kRuntimePools);
  EXPECT_EQ(cpu.held[0].bytes, Bytes(40));
}

// Checks every effect has an item; returns the items seen.
std::set<MemoryItem> expect_every_effect_known(const Schedule& s, const std::string& what) {
  std::set<MemoryItem> seen;
  auto known = [&](const MemoryEffect& e) {
    const std::optional<MemoryItem> item = memory_item_of(e.tensor);
    EXPECT_TRUE(item.has_value()) << what << ": '" << e.tensor << "'";
    if (item) seen.insert(*item);
  };
  for (const MemoryEffect& e : s.resident_items) known(e);
  for (const Op& op : s.ops) {
    for (const MemoryEffect& e : op.allocs) known(e);
    for (const MemoryEffect& e : op.frees) known(e);
  }
  return seen;
}

// Every memory effect lowering declares has an item, for every bundled
// model on every bundled machine under every standard placement, so the
// breakdown `stowage memory` prints has no "other" for Stowage's schedules.
TEST(MemoryAtPeak, EveryBundledScheduleIsFullyClassified) {
  const ProfileCatalog catalog = bundled();
  const TrainingSpec training = must(catalog.training("default"));
  for (const std::string& machine_name : catalog.names(ProfileKind::kMachine)) {
    const MachineSpec machine = must(catalog.machine(machine_name));
    for (const std::string& model_name : catalog.names(ProfileKind::kModel)) {
      const Workload w(must(catalog.model(model_name)), training.sequence_length);
      for (const Placement& p : standard_placements(machine.gpu_count)) {
        auto s = lower(policy_for(p, w, training), machine, w, training, {.steps = 1, .validate = false});
        if (!s) continue;  // zero-infinity on a machine without drives
        expect_every_effect_known(*s, model_name + " on " + machine_name + ", " + p.name);
      }
    }
  }
}

// The policy variants that add their own buffers: a delayed update,
// speculative updates under fp16, checkpoint snapshots, parameters on NVMe
// and sub-groups.
TEST(MemoryAtPeak, PolicyVariantsAreFullyClassified) {
  const ProfileCatalog catalog = bundled();
  const MachineSpec machine = must(catalog.machine("workstation-24gb-1nvme"));
  TrainingSpec training = must(catalog.training("fp16-adam"));
  training.gradient_accumulation = 2;
  const Workload w(must(catalog.model("tiny-gpt")), training.sequence_length);
  Policy offload = policy_for(standard_placement(StandardPlacement::kZeroOffload, 1), w, training);
  Policy delayed = offload;
  delayed.delayed_update = true;
  Policy speculative = offload;
  speculative.speculative_update = true;
  Policy nvme = policy_for(standard_placement(StandardPlacement::kZeroInfinity, 1), w, training);
  for (PartitionPolicy& p : nvme.partitions) p.param16 = Tier::kNvme;
  Policy groups = offload;
  groups.sub_group_params = w.largest_layer_params() / 3 + 1;
  groups.partitions.assign(partitions_of(w, groups.sub_group_params).size(), offload.partitions.front());
  std::set<MemoryItem> seen;
  for (const auto& [name, policy] : std::vector<std::pair<std::string, Policy>>{
           {"delayed", delayed}, {"speculative", speculative}, {"nvme params", nvme}, {"sub-groups", groups}}) {
    const Schedule s = must(lower(policy, machine, w, training, {.steps = 3, .checkpoint_after = {0, 1}}));
    seen.merge(expect_every_effect_known(s, name));
  }
  // The variants did add the buffers they are here for.
  for (MemoryItem item : {MemoryItem::kRollbackCopies, MemoryItem::kCheckpointSnapshots,
                          MemoryItem::kStagingBuffers, MemoryItem::kOptimizerStates}) {
    EXPECT_TRUE(seen.contains(item)) << to_string(item);
  }
}

}  // namespace
}  // namespace stowage::core
