// The executor end to end on a small GPT: placement never changes the
// math, a device cap forces offload, delayed update still learns,
// checkpoints resume exactly, and a failing backend call stops the run with
// a clear message and leaves the last checkpoint intact.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/policy.h"
#include "core/profile_catalog.h"
#include "core/workload.h"
#include "executor/checkpoint/checkpoint_reader.h"
#include "executor/cpu_backend.h"
#include "executor/faulty_backend.h"
#include "executor/trainer.h"

namespace stowage::executor {
namespace {

namespace fs = std::filesystem;
using core::Tier;

struct Fixture {
  core::MachineSpec machine;
  core::ModelSpec model;
  core::TrainingSpec training;
};

// A GPT small enough for a unit test: 2 blocks of width 64.
const Fixture& fixture() {
  static const Fixture f = [] {
    const core::ProfileCatalog catalog(STOWAGE_PROFILES_DIR);
    Fixture x{.machine = *catalog.machine("workstation-24gb-1nvme"), .model = *catalog.model("tiny-gpt"),
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

int partition_count(const core::Policy& p) {
  const core::Workload w(fixture().model, fixture().training.sequence_length);
  return static_cast<int>(core::partitions_of(w, p.sub_group_params).size());
}

core::PlanFile plan_where(core::PartitionPolicy where, int64_t sub_group = 0) {
  core::PlanFile plan{.machine = "workstation-24gb-1nvme", .model = "tiny-gpt", .training = "tiny"};
  plan.policy.sub_group_params = sub_group;
  plan.policy.partitions.assign(static_cast<size_t>(partition_count(plan.policy)), where);
  return plan;
}

const core::PartitionPolicy kAllDevice{};
const core::PartitionPolicy kCpuOffload{.param16 = Tier::kGpu, .optimizer_states = Tier::kCpu,
                                        .optimizer = core::OptimizerDevice::kCpu, .gradients = Tier::kCpu};
const core::PartitionPolicy kNvmeOffload{.param16 = Tier::kCpu, .optimizer_states = Tier::kNvme,
                                         .optimizer = core::OptimizerDevice::kCpu, .gradients = Tier::kCpu};

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::current_path() / ("trainer_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::unique_ptr<CpuBackend> backend(const std::string& name, int64_t device_cap = 0) {
  CpuBackendOptions o{.lock_host_memory = false};
  o.capacity[0] = device_cap;
  o.nvme = BlockStoreOptions{.directories = {scratch(name) / "nvme"}, .block_bytes = core::Bytes(64 << 10),
                             .queue_depth = 4, .allow_buffered = true};
  auto b = CpuBackend::create(std::move(o));
  EXPECT_TRUE(b) << (b ? "" : core::to_string(b.error()));
  return std::move(*b);
}

core::Result<TrainingRun> train_plan(const core::PlanFile& plan, Backend& b, TrainerOptions options) {
  const Fixture& f = fixture();
  return train(plan, f.machine, f.model, f.training, b, options);
}

std::vector<double> losses(const core::PlanFile& plan, int64_t steps, const std::string& name) {
  auto b = backend(name);
  auto run = train_plan(plan, *b, {.steps = steps, .seed = 7});
  EXPECT_TRUE(run) << (run ? "" : core::to_string(run.error()));
  return run ? run->losses : std::vector<double>{};
}

TEST(Trainer, PlacementNeverChangesTheLossCurve) {
  // A mix: layers split into sub-groups, spread over every tier.
  core::PlanFile mix = plan_where(kAllDevice, 20000);
  for (size_t j = 0; j < mix.policy.partitions.size(); ++j) {
    mix.policy.partitions[j] = j % 3 == 0 ? kAllDevice : j % 3 == 1 ? kCpuOffload : kNvmeOffload;
  }
  ASSERT_GT(mix.policy.partitions.size(), 5u);
  const std::vector<double> device = losses(plan_where(kAllDevice), 6, "device");
  ASSERT_EQ(device.size(), 6u);
  EXPECT_EQ(losses(plan_where(kCpuOffload), 6, "cpu"), device);
  EXPECT_EQ(losses(plan_where(kNvmeOffload), 6, "nvme"), device);
  EXPECT_EQ(losses(mix, 6, "mix"), device);
  // Sub-groups alone change nothing either.
  EXPECT_EQ(losses(plan_where(kNvmeOffload, 20000), 6, "nvme-sub"), device);
}

TEST(Trainer, LossFallsBelowTheUnigramEntropy) {
  auto b = backend("learns");
  auto run = train_plan(plan_where(kNvmeOffload), *b, {.steps = 120, .seed = 3});
  ASSERT_TRUE(run) << core::to_string(run.error());
  EXPECT_LT(run->losses.back(), run->losses.front() - 1.0);
  EXPECT_LT(run->held_out_loss, run->unigram_entropy);
}

int64_t peak_device_bytes(const TrainingRun& run) {
  int64_t peak = 0;
  for (const core::MemorySample& m : run.timeline.memory) {
    if (m.tier == Tier::kGpu) peak = std::max(peak, m.bytes.count());
  }
  return peak;
}

TEST(Trainer, DeviceCapFailsTheAllDevicePlanAndNotTheOffloadingOne) {
  // Uncapped, the offloading plan needs less device memory; a cap between
  // the two peaks fails the all-device plan and not the offloading one.
  auto a = backend("cap-a");
  auto b = backend("cap-b");
  auto device = train_plan(plan_where(kAllDevice), *a, {.steps = 2});
  auto offload = train_plan(plan_where(kNvmeOffload), *b, {.steps = 2});
  ASSERT_TRUE(device && offload);
  const int64_t low = peak_device_bytes(*offload), high = peak_device_bytes(*device);
  ASSERT_LT(low, high);
  const int64_t cap = (low + high) / 2;
  auto small = backend("cap", cap);
  auto failed = train_plan(plan_where(kAllDevice), *small, {.steps = 2});
  ASSERT_FALSE(failed);
  const std::string message = core::to_string(failed.error());
  EXPECT_NE(message.find("gpu memory exhausted"), std::string::npos) << message;
  auto fits = backend("cap2", cap);
  auto ran = train_plan(plan_where(kNvmeOffload), *fits, {.steps = 2});
  EXPECT_TRUE(ran) << (ran ? "" : core::to_string(ran.error()));
  if (ran) {
    EXPECT_LE(peak_device_bytes(*ran), cap);
  }
}

TEST(Trainer, DelayedUpdateChangesTheMathAndStillLearns) {
  core::PlanFile dpu = plan_where(kCpuOffload);
  dpu.policy.delayed_update = true;
  const std::vector<double> delayed = losses(dpu, 60, "dpu");
  const std::vector<double> plain = losses(plan_where(kCpuOffload), 60, "plain");
  ASSERT_EQ(delayed.size(), 60u);
  // Step 0 and 1 both train on the initial parameters.
  EXPECT_EQ(delayed[0], plain[0]);
  EXPECT_NE(delayed[2], plain[2]);
  EXPECT_LT(delayed.back(), delayed.front() - 0.8);
}

TEST(Trainer, ResumingFromACheckpointGivesTheSameLosses) {
  for (const bool delayed : {false, true}) {
    core::PlanFile plan = plan_where(kNvmeOffload);
    plan.policy.delayed_update = delayed;
    const std::vector<double> straight = losses(plan, 6, "straight");
    const fs::path root = scratch("ckpt") / "checkpoints";
    auto first = backend("first");
    auto head = train_plan(plan, *first, {.steps = 3, .seed = 7, .checkpoint_root = root});
    ASSERT_TRUE(head) << core::to_string(head.error());
    auto second = backend("second");
    auto tail = train_plan(plan, *second, {.steps = 6, .seed = 7, .resume = root / "step-000003"});
    ASSERT_TRUE(tail) << core::to_string(tail.error());
    EXPECT_EQ(tail->first_step, 3);
    ASSERT_EQ(tail->losses.size(), 3u);
    EXPECT_EQ(tail->losses, std::vector<double>(straight.begin() + 3, straight.end())) << "delayed " << delayed;
  }
}

TEST(Trainer, AResumeFromAnotherSeedIsRefused) {
  const fs::path root = scratch("seed") / "checkpoints";
  auto b = backend("seed-a");
  ASSERT_TRUE(train_plan(plan_where(kCpuOffload), *b, {.steps = 1, .seed = 7, .checkpoint_root = root}));
  auto c = backend("seed-b");
  auto r = train_plan(plan_where(kCpuOffload), *c, {.steps = 2, .seed = 8, .resume = root / "step-000001"});
  ASSERT_FALSE(r);
  EXPECT_NE(core::to_string(r.error()).find("another plan, model or seed"), std::string::npos);
}

// Issue 12: a checkpoint's step and model were trusted. A checkpoint moved
// to another step's name, or whose manifest names another model, is
// refused with what it says and what was expected.
TEST(Trainer, ACheckpointOfAnotherStepOrModelIsRefused) {
  const fs::path root = scratch("identity") / "checkpoints";
  auto b = backend("identity-a");
  ASSERT_TRUE(train_plan(plan_where(kCpuOffload), *b, {.steps = 1, .seed = 7, .checkpoint_root = root}));
  fs::rename(root / "step-000001", root / "step-000002");
  auto c = backend("identity-b");
  auto moved =
      train_plan(plan_where(kCpuOffload), *c, {.steps = 3, .seed = 7, .resume = root / "step-000002"});
  ASSERT_FALSE(moved);
  EXPECT_NE(core::to_string(moved.error()).find("the manifest says step 1, its directory's name step 2"),
            std::string::npos)
      << core::to_string(moved.error());

  fs::rename(root / "step-000002", root / "step-000001");
  const fs::path manifest = root / "step-000001" / "manifest.json";
  std::string text = core::read_text_file(manifest).value();
  const std::string model = "\"model\": \"" + plan_where(kCpuOffload).model + "\"";
  ASSERT_NE(text.find(model), std::string::npos) << text;
  text.replace(text.find(model), model.size(), "\"model\": \"gpt2\"");
  std::ofstream(manifest, std::ios::trunc) << text;
  auto d = backend("identity-c");
  auto other =
      train_plan(plan_where(kCpuOffload), *d, {.steps = 3, .seed = 7, .resume = root / "step-000001"});
  ASSERT_FALSE(other);
  EXPECT_NE(core::to_string(other.error()).find("the checkpoint is of model \"gpt2\""), std::string::npos)
      << core::to_string(other.error());
}

TEST(Trainer, AFailingWriteStopsTheRunAndKeepsTheLastCheckpoint) {
  const fs::path root = scratch("fault") / "checkpoints";
  auto inner = backend("fault");
  // Each partition's states are written once at the start and once per
  // step: fail a write in the fourth step, after the checkpoint of step 2.
  const int64_t n = partition_count(plan_where(kNvmeOffload).policy);
  FaultyBackend faulty(*inner, {.kind = CallKind::kBlockWrite, .nth = n + 3 * n + 2, .message = "No space left on device"});
  auto r = train_plan(plan_where(kNvmeOffload), faulty, {.steps = 6, .seed = 7, .checkpoint_root = root,
                                                         .checkpoint_every = 2});
  ASSERT_FALSE(r);
  const std::string message = core::to_string(r.error());
  EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
  EXPECT_NE(message.find("op 'write states"), std::string::npos) << message;
  auto checkpoint = CheckpointReader::open(root / "step-000002");
  ASSERT_TRUE(checkpoint) << core::to_string(checkpoint.error());
  EXPECT_TRUE(checkpoint->verify());
  EXPECT_FALSE(fs::exists(root / "step-000004"));
}

// Issue 12: "the previous one is intact" was printed even when there was
// none. A directory that is not a checkpoint where one is to go makes the
// save fail (it is never replaced): first for the first checkpoint, then,
// planted once step 2's is written, for the second.
TEST(Trainer, AFailedCheckpointSaysWhetherAnEarlierOneIsIntact) {
  const fs::path root = scratch("intact") / "checkpoints";
  fs::create_directories(root / "step-000002");
  auto b = backend("intact-1");  // not "intact": scratch() would empty the root
  auto first = train_plan(plan_where(kCpuOffload), *b,
                          {.steps = 4, .seed = 7, .checkpoint_root = root, .checkpoint_every = 2});
  ASSERT_FALSE(first);
  EXPECT_NE(core::to_string(first.error()).find("there is no earlier checkpoint"), std::string::npos)
      << core::to_string(first.error());

  fs::remove(root / "step-000002");
  auto c = backend("intact-2");
  auto second =
      train_plan(plan_where(kCpuOffload), *c,
                 {.steps = 4,
                  .seed = 7,
                  .checkpoint_root = root,
                  .checkpoint_every = 2,
                  .on_note = [&](const std::string&) { fs::create_directories(root / "step-000004"); }});
  ASSERT_FALSE(second);
  const std::string message = core::to_string(second.error());
  EXPECT_NE(message.find("the previous one (" + (root / "step-000002").string() + ") is intact"),
            std::string::npos)
      << message;
}

TEST(Trainer, Fp16WithDynamicLossScalingLearns) {
  core::TrainingSpec fp16 = fixture().training;
  fp16.precision = core::Precision::kFp16;
  fp16.loss_scaling.window = 10;
  auto b = backend("fp16");
  const Fixture& f = fixture();
  auto run = train(plan_where(kCpuOffload), f.machine, f.model, fp16, *b, {.steps = 60, .seed = 7});
  ASSERT_TRUE(run) << core::to_string(run.error());
  EXPECT_LT(run->losses.back(), run->losses.front() - 0.8);
}

TEST(Trainer, TheMeasuredTimelineHasEveryOpOnceAndLanesRunInOrder) {
  auto b = backend("timeline");
  auto run = train_plan(plan_where(kNvmeOffload), *b, {.steps = 3, .seed = 7, .checkpoint_root = scratch("tl") / "c",
                                                       .checkpoint_every = 2});
  ASSERT_TRUE(run) << core::to_string(run.error());
  const core::Schedule& s = run->schedule;
  ASSERT_EQ(s.steps, 3);
  ASSERT_EQ(run->timeline.spans.size(), s.ops.size());
  std::map<core::Lane, int64_t> lane_end;
  std::set<core::OpKind> kinds;
  for (const core::Op& op : s.ops) {
    const core::OpSpan& span = run->timeline.spans[static_cast<size_t>(op.id)];
    EXPECT_LE(span.start, span.end) << op.name;
    EXPECT_GT(span.end, 0) << op.name;
    for (core::OpId d : op.deps) EXPECT_LE(run->timeline.spans[static_cast<size_t>(d)].end, span.start) << op.name;
    EXPECT_LE(lane_end[op.lane], span.start) << op.name;  // lanes run in issue order, one op at a time
    lane_end[op.lane] = span.end;
    kinds.insert(op.kind);
  }
  EXPECT_TRUE(kinds.contains(core::OpKind::kReadStates));
  EXPECT_TRUE(kinds.contains(core::OpKind::kWriteStates));
  bool gpu = false, cpu = false;
  for (const core::MemorySample& m : run->timeline.memory) {
    gpu |= m.tier == Tier::kGpu && m.bytes.count() > 0;
    cpu |= m.tier == Tier::kCpu && m.bytes.count() > 0;
  }
  EXPECT_TRUE(gpu && cpu);
}

}  // namespace
}  // namespace stowage::executor
