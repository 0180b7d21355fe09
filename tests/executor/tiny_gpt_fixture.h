// The executor tests' small GPT (2 blocks of width 64), its plans by
// placement and backends with a private NVMe folder, shared by the trainer
// and schedule-matrix tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/policy.h"
#include "core/profile_catalog.h"
#include "core/workload.h"
#include "executor/cpu_backend.h"
#include "executor/trainer.h"

namespace stowage::executor::testing {

struct Fixture {
  core::MachineSpec machine;
  core::ModelSpec model;
  core::TrainingSpec training;
};

// The bundled profiles where the command finds them ($STOWAGE_PROFILES
// wins): tests built here run on the GPU machine, whose copy of the tree
// is elsewhere (bench/gpu/check.sh sets it).
inline std::filesystem::path profiles_dir() {
  return core::ProfileCatalog::default_root();
}

inline const Fixture& fixture() {
  static const Fixture f = [] {
    const core::ProfileCatalog catalog(profiles_dir());
    Fixture x{.machine = *catalog.machine("workstation-24gb-1nvme"),
              .model = *catalog.model("tiny-gpt"),
              .training = *catalog.training("tiny")};
    x.model.d_model = 64;
    x.model.layers = 2;
    x.model.heads = 2;
    x.model.kv_heads = 2;
    x.model.head_dim = 32;
    x.model.ffn = 256;
    x.model.max_positions = 64;
    x.training.micro_batch = 4;
    x.training.sequence_length = 32;
    return x;
  }();
  return f;
}

inline int partition_count(const core::Policy& p) {
  const core::Workload w(fixture().model, fixture().training.sequence_length);
  return static_cast<int>(core::partitions_of(w, p.sub_group_params).size());
}

inline core::PlanFile plan_where(core::PartitionPolicy where, int64_t sub_group = 0) {
  core::PlanFile plan{.machine = "workstation-24gb-1nvme", .model = "tiny-gpt", .training = "tiny"};
  plan.policy.sub_group_params = sub_group;
  plan.policy.partitions.assign(static_cast<size_t>(partition_count(plan.policy)), where);
  return plan;
}

inline const core::PartitionPolicy kAllDevice{};
inline const core::PartitionPolicy kCpuOffload{.param16 = core::Tier::kGpu,
                                               .optimizer_states = core::Tier::kCpu,
                                               .optimizer = core::OptimizerDevice::kCpu,
                                               .gradients = core::Tier::kCpu};
inline const core::PartitionPolicy kNvmeOffload{.param16 = core::Tier::kCpu,
                                                .optimizer_states = core::Tier::kNvme,
                                                .optimizer = core::OptimizerDevice::kCpu,
                                                .gradients = core::Tier::kCpu};
inline const core::PartitionPolicy kParamsOnNvme{.param16 = core::Tier::kNvme,
                                                 .optimizer_states = core::Tier::kNvme,
                                                 .optimizer = core::OptimizerDevice::kCpu,
                                                 .gradients = core::Tier::kCpu};

// A mix of every tier: layers split into sub-groups, partition j on
// device, CPU or NVMe by j % 3.
inline core::PlanFile three_tier_mix() {
  core::PlanFile mix = plan_where(kAllDevice, 20000);
  for (size_t j = 0; j < mix.policy.partitions.size(); ++j) {
    mix.policy.partitions[j] = j % 3 == 0 ? kAllDevice : j % 3 == 1 ? kCpuOffload : kNvmeOffload;
  }
  return mix;
}

// A folder of the running test's own: ctest -j runs tests at once, and two
// that named the same scratch removed each other's NVMe files.
inline std::filesystem::path scratch(const std::string& name) {
  std::string leaf = "trainer_test_" + name;
  if (const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info()) {
    leaf += std::string("-") + test->test_suite_name() + "." + test->name();
    std::replace(leaf.begin(), leaf.end(), '/', '_');  // parameterised names
  }
  const std::filesystem::path dir = std::filesystem::current_path() / leaf;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::unique_ptr<CpuBackend> backend(const std::string& name, int64_t device_cap = 0) {
  CpuBackendOptions o{.lock_host_memory = false};
  o.capacity[0] = device_cap;
  // Device pointers unusable outside the backend, as on a GPU: every run in
  // the executor's tests shows the executor never touches device memory.
  o.opaque_device_memory = true;
  o.nvme = BlockStoreOptions{.directories = {scratch(name) / "nvme"},
                             .block_bytes = core::Bytes(64 << 10),
                             .queue_depth = 4,
                             .allow_buffered = true};
  auto b = CpuBackend::create(std::move(o));
  EXPECT_TRUE(b) << (b ? "" : core::to_string(b.error()));
  return std::move(*b);
}

inline core::Result<TrainingRun> train_plan(const core::PlanFile& plan, Backend& b, TrainerOptions options) {
  const Fixture& f = fixture();
  return train(plan, f.machine, f.model, f.training, b, options);
}

inline std::vector<double> losses(const core::PlanFile& plan, int64_t steps, const std::string& name) {
  auto b = backend(name);
  auto run = train_plan(plan, *b, {.steps = steps, .seed = 7});
  EXPECT_TRUE(run) << (run ? "" : core::to_string(run.error()));
  return run ? run->losses : std::vector<double>{};
}

// Bytes per lane over a 3-step run: what the backend moved (the progress
// reports) and what the schedule's transfers declare (every lane but compute
// and the optimizer, whose bytes are memory traffic, not moves).
struct LaneBytes {
  std::array<int64_t, core::kLaneCount> measured{}, declared{};
};
inline LaneBytes lane_bytes(const core::PlanFile& plan, const std::string& name) {
  auto b = backend(name);
  LaneBytes out;
  TrainerOptions options{.steps = 3, .seed = 7};
  options.on_step = [&](const StepReport& r) {
    for (size_t l = 0; l < out.measured.size(); ++l) out.measured[l] += r.bytes[l];
  };
  auto run = train_plan(plan, *b, options);
  EXPECT_TRUE(run) << (run ? "" : core::to_string(run.error()));
  if (!run) return out;
  for (const core::Op& op : run->schedule.ops) {
    if (op.lane != core::Lane::kGpuCompute && op.lane != core::Lane::kCpuOptim)
      out.declared[static_cast<size_t>(op.lane)] += op.bytes.count();
  }
  return out;
}

}  // namespace stowage::executor::testing
