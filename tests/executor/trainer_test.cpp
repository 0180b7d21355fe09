// The executor end to end on a small GPT: placement never changes the
// math, a device cap forces offload, delayed update still learns,
// checkpoints resume exactly, and a failing backend call stops the run with
// a clear message and leaves the last checkpoint intact.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>

#include "core/policy.h"
#include "core/profile_catalog.h"
#include "core/workload.h"
#include "core/memory_replay.h"
#include "executor/checkpoint/checkpoint_reader.h"
#include "executor/checkpoint/manifest.h"
#include "executor/cpu_backend.h"
#include "executor/faulty_backend.h"
#include "executor/forwarding_backend.h"
#include "executor/trained_model.h"
#include "executor/trainer.h"
#include "tests/core/memory_by_class_check.h"
#include "tests/executor/stream_order_checker.h"
#include "tests/executor/tiny_gpt_fixture.h"

namespace stowage::executor {
namespace {

namespace fs = std::filesystem;
using core::Tier;

using namespace testing;

TEST(Trainer, PlacementNeverChangesTheLossCurve) {
  // A mix: layers split into sub-groups, spread over every tier.
  const core::PlanFile mix = three_tier_mix();
  ASSERT_GT(mix.policy.partitions.size(), 5u);
  const std::vector<double> device = losses(plan_where(kAllDevice), 6, "device");
  ASSERT_EQ(device.size(), 6u);
  EXPECT_EQ(losses(plan_where(kCpuOffload), 6, "cpu"), device);
  EXPECT_EQ(losses(plan_where(kNvmeOffload), 6, "nvme"), device);
  EXPECT_EQ(losses(mix, 6, "mix"), device);
  // Sub-groups alone change nothing either.
  EXPECT_EQ(losses(plan_where(kNvmeOffload, 20000), 6, "nvme-sub"), device);
}

// The trainer draws its layers' initial weights on several threads; each
// layer has a stream of its own, so the run starts from exactly the weights
// init_parameters gives layer by layer on one thread.
TEST(Trainer, LayersInitialisedAtOnceAreTheWeightsDrawnOneByOne) {
  const Fixture& f = fixture();
  const core::Workload workload(f.model, f.training.sequence_length);
  auto model = make_trained_model(workload);
  ASSERT_TRUE(model);
  ASSERT_GE((*model)->layer_count(), 3);
  std::vector<std::vector<float>> one_by_one;
  for (int l = 0; l < (*model)->layer_count(); ++l) {
    one_by_one.emplace_back(static_cast<size_t>((*model)->layer_param_count(l)));
    (*model)->init_parameters(l, one_by_one.back(), 7);
  }
  const std::vector<double> drawn = losses(plan_where(kCpuOffload), 3, "init-drawn");
  auto b = backend("init-given");
  auto given = train_plan(plan_where(kCpuOffload), *b, {.steps = 3, .seed = 7, .initial_weights = one_by_one});
  ASSERT_TRUE(given) << core::to_string(given.error());
  ASSERT_EQ(drawn.size(), 3u);
  EXPECT_EQ(given->losses, drawn);
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
    // Homes on every tier: restored on the copy and NVMe lanes, read first on others.
    core::PlanFile plan = delayed ? plan_where(kNvmeOffload) : three_tier_mix();
    plan.policy.delayed_update = delayed;
    const std::vector<double> straight = losses(plan, 6, "straight");
    const fs::path root = scratch("ckpt") / "checkpoints";
    auto first = backend("first");
    auto head = train_plan(plan, *first, {.steps = 3, .seed = 7, .checkpoint_root = root});
    ASSERT_TRUE(head) << core::to_string(head.error());
    auto second = backend("second");
    StreamOrderChecker checked(*second);  // the restored homes are ordered before the first op
    auto tail = train_plan(plan, checked, {.steps = 6, .seed = 7, .resume = root / "step-000003"});
    ASSERT_TRUE(tail) << core::to_string(tail.error());
    EXPECT_EQ(checked.violations(), "");
    EXPECT_EQ(tail->first_step, 3);
    ASSERT_EQ(tail->losses.size(), 3u);
    EXPECT_EQ(tail->losses, std::vector<double>(straight.begin() + 3, straight.end())) << "delayed " << delayed;
  }
}

// After the last step the trainer gives the backend's kept buffers back
// before it evaluates the held-out loss with allocations of its own: a plan
// whose activations filled the host was killed by the kernel there.
class RecordsGiveBacks final : public ForwardingBackend {
 public:
  RecordsGiveBacks(CpuBackend& inner, const int& steps)
      : ForwardingBackend(inner), cpu_(inner), steps_(steps) {}
  void give_back_kept() override {
    ForwardingBackend::give_back_kept();
    steps_done.push_back(steps_);
    kept_after.push_back(cpu_.kept_bytes(Tier::kGpu) + cpu_.kept_bytes(Tier::kCpu));
  }
  std::vector<int> steps_done;
  std::vector<int64_t> kept_after;

 private:
  CpuBackend& cpu_;
  const int& steps_;
};

TEST(Trainer, GivesTheStepsBuffersBackBeforeEvaluating) {
  auto b = backend("give-back");
  int steps = 0;
  RecordsGiveBacks recording(*b, steps);
  TrainerOptions options{.steps = 3, .seed = 7};
  options.on_step = [&](const StepReport&) { ++steps; };
  auto run = train_plan(plan_where(kCpuOffload), recording, options);
  ASSERT_TRUE(run) << core::to_string(run.error());
  EXPECT_EQ(recording.steps_done, std::vector<int>{3});
  EXPECT_EQ(recording.kept_after, std::vector<int64_t>{0});
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

// Issue 12: the checkpoint records the plan and the data it was trained
// with; resuming under another plan (here one knob changed) or on other
// data is refused, naming which, and the same plan and data resume.
TEST(Trainer, AResumeUnderAnotherPlanOrOnOtherDataIsRefused) {
  const fs::path dir = scratch("digests");
  const fs::path root = dir / "checkpoints";
  const core::PlanFile plan = plan_where(kCpuOffload);
  auto b = backend("digests-a");
  ASSERT_TRUE(train_plan(plan, *b, {.steps = 1, .seed = 7, .checkpoint_root = root}));
  core::PlanFile tuned = plan;
  tuned.policy.h2d_prefetch_depth += 1;
  auto c = backend("digests-b");
  auto r = train_plan(tuned, *c, {.steps = 2, .seed = 7, .resume = root / "step-000001"});
  ASSERT_FALSE(r);
  EXPECT_NE(core::to_string(r.error()).find("made with another plan"), std::string::npos)
      << core::to_string(r.error());
  std::ofstream(dir / "other.txt") << std::string(200000, 'x') << "the quick brown fox " << std::string(200000, 'y');
  auto d = backend("digests-c");
  auto other = train_plan(plan, *d, {.steps = 2, .seed = 7, .data = dir / "other.txt", .resume = root / "step-000001"});
  ASSERT_FALSE(other);
  EXPECT_NE(core::to_string(other.error()).find("made with another training data (--data)"), std::string::npos)
      << core::to_string(other.error());
  auto e = backend("digests-d");
  EXPECT_TRUE(train_plan(plan, *e, {.steps = 2, .seed = 7, .resume = root / "step-000001"}));
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
  std::ofstream(manifest, std::ios::trunc) << seal_manifest_text(text);  // as if saved so: the model is checked
  auto d = backend("identity-c");
  auto other =
      train_plan(plan_where(kCpuOffload), *d, {.steps = 3, .seed = 7, .resume = root / "step-000001"});
  ASSERT_FALSE(other);
  EXPECT_NE(core::to_string(other.error()).find("the checkpoint is of model \"gpt2\""), std::string::npos)
      << core::to_string(other.error());
}

// Found by tests/adversarial/sweep.py: a manifest (sealed as if saved so)
// whose loss-scaler count is INT64_MAX resumed, and the count overflowed at
// the next step. The scaler's state is checked before it is used.
TEST(Trainer, ALossScalerStateOutOfRangeIsRefused) {
  const fs::path root = scratch("scaler") / "checkpoints";
  auto b = backend("scaler-a");
  ASSERT_TRUE(train_plan(plan_where(kCpuOffload), *b, {.steps = 1, .seed = 7, .checkpoint_root = root}));
  const fs::path manifest = root / "step-000001" / "manifest.json";
  std::string text = core::read_text_file(manifest).value();
  const size_t at = text.find("\"good_steps\": ");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, text.find_first_of(",\n}", at) - at, "\"good_steps\": 9223372036854775807");
  std::ofstream(manifest, std::ios::trunc) << seal_manifest_text(text);
  auto c = backend("scaler-b");
  auto r = train_plan(plan_where(kCpuOffload), *c, {.steps = 2, .seed = 7, .resume = root / "step-000001"});
  ASSERT_FALSE(r);
  EXPECT_NE(core::to_string(r.error()).find("the loss scaler's state"), std::string::npos)
      << core::to_string(r.error());
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
    if (s.lane_slots[static_cast<size_t>(op.lane)] == 1) {
      EXPECT_LE(lane_end[op.lane], span.start) << op.name;  // one slot: in issue order, one op at a time
    }
    lane_end[op.lane] = std::max(lane_end[op.lane], span.end);
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

// The progress line's bytes are what the backend moved, lane by lane; over
// a run they add up to exactly what the schedule's transfers declare.
TEST(Trainer, BytesMovedAreMeasuredAndMatchTheSchedule) {
  for (const core::PlanFile& plan : {plan_where(kNvmeOffload), three_tier_mix(), plan_where(kParamsOnNvme)}) {
    const LaneBytes bytes = lane_bytes(plan, "bytes");
    EXPECT_EQ(bytes.measured, bytes.declared);
    EXPECT_GT(bytes.measured[static_cast<size_t>(core::Lane::kNvmeRead)], 0);
  }
}

// Forced overflows: a loss scale far above fp16's range overflows the
// first steps; each is skipped and reported, the scale comes down after
// DeepSpeed's hysteresis, and training goes on with finite losses.
TEST(Trainer, Fp16OverflowsAreSkippedReportedAndRecoveredFrom) {
  core::TrainingSpec fp16 = fixture().training;
  fp16.precision = core::Precision::kFp16;
  fp16.loss_scaling.initial_scale = 1 << 30;
  fp16.gradient_accumulation = 3;
  for (const core::PlanFile& plan : {plan_where(kAllDevice), plan_where(kCpuOffload), three_tier_mix()}) {
    auto b = backend("overflow");
    std::vector<StepReport> reports;
    TrainerOptions options{.steps = 26, .seed = 7};
    options.on_step = [&](const StepReport& r) { reports.push_back(r); };
    const Fixture& f = fixture();
    auto run = train(plan, f.machine, f.model, fp16, *b, options);
    ASSERT_TRUE(run) << core::to_string(run.error());
    ASSERT_EQ(reports.size(), 26u);
    std::sort(reports.begin(), reports.end(), [](const auto& a, const auto& c) { return a.step < c.step; });
    // 2^30 halves to 2^15 or so in ~15 steps, the first overflow tolerated
    // (hysteresis 2).
    EXPECT_TRUE(reports[0].skipped && reports[1].skipped);
    const int64_t skipped = reports.back().skipped_total;
    EXPECT_GE(skipped, 10);
    EXPECT_LE(skipped, 20) << "the scale came down and steps were taken";
    EXPECT_FALSE(reports.back().skipped);
    for (double loss : run->losses) EXPECT_TRUE(std::isfinite(loss));
    EXPECT_LT(run->losses.back(), run->losses.front() - 0.3);
  }
}

// Speculative updates never change the math: when the step's check passes
// they are kept, when it fails (a norm above max_grad_norm, an fp16
// overflow) they are rolled back and replayed, and either way the losses
// equal those of updates that wait for the check, on every placement:
// a GPU optimizer's too, whose replay updates on the device and sends the
// parameters home to the CPU or NVMe (every backend refuses an optimizer
// step over device states into host memory, buffer_sides.h).
TEST(Trainer, SpeculativeUpdatesGiveTheSameLossesWhetherKeptOrReplayed) {
  const Fixture& f = fixture();
  struct Setting {
    const char* what;
    core::Precision precision;
    double max_grad_norm;
    double initial_scale;
    bool replays;
  };
  const Setting settings[] = {
      {"bf16, never clipped: kept", core::Precision::kBf16, 1e9, 1, false},
      {"bf16, clipped at 0.05: replayed", core::Precision::kBf16, 0.05, 1, true},
      {"fp16, forced overflows: rolled back", core::Precision::kFp16, 1e9, 1 << 26, true},
  };
  for (const Setting& x : settings) {
    core::TrainingSpec training = f.training;
    training.precision = x.precision;
    training.max_grad_norm = x.max_grad_norm;
    training.gradient_accumulation = 2;
    if (x.precision == core::Precision::kFp16) training.loss_scaling.initial_scale = x.initial_scale;
    const core::PlanFile gpu_optimizer_params_on_cpu = plan_where({.param16 = core::Tier::kCpu});
    const core::PlanFile gpu_optimizer_params_on_nvme = plan_where({.param16 = core::Tier::kNvme});
    for (const core::PlanFile& waiting :
         {plan_where(kCpuOffload), three_tier_mix(), plan_where(kParamsOnNvme), gpu_optimizer_params_on_cpu,
          gpu_optimizer_params_on_nvme}) {
      core::PlanFile speculative = waiting;
      speculative.policy.speculative_update = true;
      auto a = backend("spec-a");
      auto b = backend("spec-b");
      StreamOrderChecker checked(*b);  // a replay's write-backs are ordered too
      auto plain = train(waiting, f.machine, f.model, training, *a, {.steps = 6, .seed = 7});
      auto spec = train(speculative, f.machine, f.model, training, checked, {.steps = 6, .seed = 7});
      ASSERT_TRUE(plain) << x.what << ": " << core::to_string(plain.error());
      ASSERT_TRUE(spec) << x.what << ": " << core::to_string(spec.error());
      EXPECT_EQ(checked.violations(), "") << x.what;
      EXPECT_EQ(spec->losses, plain->losses) << x.what;
      EXPECT_EQ(spec->held_out_loss, plain->held_out_loss) << x.what;
      int accepts = 0;
      for (const core::Op& op : spec->schedule.ops) accepts += op.kind == core::OpKind::kAcceptUpdate ? 1 : 0;
      EXPECT_EQ(accepts, 6) << x.what;
      EXPECT_EQ(spec->replayed_steps > 0, x.replays) << x.what << ": " << spec->replayed_steps << " replayed";
      EXPECT_EQ(plain->replayed_steps, 0);
    }
  }
}

}  // namespace
}  // namespace stowage::executor

namespace stowage::executor {
namespace {

using namespace testing;

// Issue 11: a GPU optimizer whose partition's parameters rest on the CPU
// or on NVMe updates them on the GPU; before, lowering had no op taking
// them home (2 B per parameter of d2h traffic and a host buffer missing).
// Now an offload_params op copies them off the GPU, then a write stores
// them on NVMe; the executor runs both, with the math of the all-device
// run, and moves exactly the bytes the schedule declares.
TEST(Trainer, AGpuOptimizerSendsUpdatedParametersHomeOffTheGpu) {
  const std::vector<double> device = losses(plan_where(kAllDevice), 4, "device-gpu-opt");
  for (core::Tier home : {core::Tier::kCpu, core::Tier::kNvme}) {
    const core::PartitionPolicy where{.param16 = home};
    const core::PlanFile plan = plan_where(where);
    auto b = backend("gpu-opt-home");
    std::array<int64_t, core::kLaneCount> measured{};
    TrainerOptions options{.steps = 4, .seed = 7};
    options.on_step = [&](const StepReport& r) {
      for (size_t l = 0; l < measured.size(); ++l) measured[l] += r.bytes[l];
    };
    auto run = train_plan(plan, *b, options);
    ASSERT_TRUE(run) << core::to_string(run.error());
    EXPECT_EQ(run->losses, device) << core::to_string(home);
    int64_t offloaded = 0, written = 0, declared_d2h = 0;
    for (const core::Op& op : run->schedule.ops) {
      if (op.kind == core::OpKind::kOffloadParams) offloaded += op.bytes.count();
      if (op.kind == core::OpKind::kWriteParams) written += op.bytes.count();
      if (op.lane == core::Lane::kPcieD2h) declared_d2h += op.bytes.count();
    }
    const int64_t params = core::Workload(fixture().model, fixture().training.sequence_length).total_params();
    EXPECT_EQ(offloaded, 2 * params * run->schedule.steps) << core::to_string(home);
    EXPECT_EQ(written, home == core::Tier::kNvme ? 2 * params * run->schedule.steps : 0);
    EXPECT_EQ(measured[static_cast<size_t>(core::Lane::kPcieD2h)], declared_d2h);
  }
}

// Gathering by parameter splits a layer's compute into pieces; the
// executor's kernels compute whole layers, so such a plan is refused up
// front, naming the field and the fix, instead of running other ops.
TEST(Trainer, APlanThatGathersLayersInPiecesIsRefusedWithTheFix) {
  core::PlanFile plan = plan_where(kNvmeOffload);
  plan.policy.gather_params = 1000;
  auto b = backend("gather-refused");
  auto run = train_plan(plan, *b, {.steps = 1, .seed = 7});
  ASSERT_FALSE(run);
  const std::string text = core::to_string(run.error());
  EXPECT_NE(text.find("policy.gather_params: 1000 gathers embedding in"), std::string::npos) << text;
  EXPECT_NE(text.find("the executor computes whole layers only"), std::string::npos) << text;
  EXPECT_NE(text.find("gather_params: 0"), std::string::npos) << text;
  // A gather size that holds every layer gathers whole layers: it runs.
  plan.policy.gather_params = 1'000'000'000;
  EXPECT_EQ(losses(plan, 2, "gather-whole"), losses(plan_where(kNvmeOffload), 2, "gather-none"));
}

// A backend whose clock runs a second ahead of the host's and marks every
// op (Backend::mark), as one that only enqueues would: its ops' spans are
// then the marks' times, not the host's.
class ClockAheadBackend final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  static constexpr int64_t kAhead = 1'000'000'000;
  core::Result<std::optional<TimeMark>> mark(core::Lane lane) override {
    const int64_t at = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now().time_since_epoch())
                           .count();
    ++marks;
    return TimeMark{.lane = lane, .handle = std::make_shared<const int64_t>(at + kAhead)};
  }
  core::Result<int64_t> marked_at(const TimeMark& mark) override {
    return *static_cast<const int64_t*>(mark.handle.get());
  }
  std::atomic<int64_t> marks{0};
};

// Issue 15 item 5: where the backend times ops on its own clock, the
// measured timeline has those times, every op's, and its memory samples are
// the schedule's effects replayed over them (the peak per tier unchanged,
// the memory by class summing to them); the math is untouched.
TEST(Trainer, OpSpansComeFromTheBackendsClockWhereItMarksOps) {
  for (const core::PlanFile& plan : {plan_where(kCpuOffload), three_tier_mix()}) {
    auto plain = backend("clock-plain");
    auto cpu = backend("clock-ahead");
    ClockAheadBackend ahead(*cpu);
    auto expected = train_plan(plan, *plain, {.steps = 2, .seed = 7});
    auto run = train_plan(plan, ahead, {.steps = 2, .seed = 7});
    ASSERT_TRUE(expected && run) << (run ? "" : core::to_string(run.error()));
    EXPECT_EQ(run->losses, expected->losses);
    EXPECT_EQ(ahead.marks.load(), 2 * static_cast<int64_t>(run->schedule.ops.size()));
    for (const core::Op& op : run->schedule.ops) {
      const core::OpSpan& span = run->timeline.spans[static_cast<size_t>(op.id)];
      EXPECT_GE(span.start, ClockAheadBackend::kAhead) << op.name;
      EXPECT_GE(span.end, span.start) << op.name;
    }
    std::array<int64_t, 3> sampled_peak{};
    for (const core::MemorySample& m : run->timeline.memory) {
      int64_t& peak = sampled_peak[static_cast<size_t>(m.tier)];
      peak = std::max(peak, m.bytes.count());
    }
    const std::array<core::Bytes, 3> replayed = core::replay_peak(run->schedule, run->timeline);
    for (size_t t = 0; t < 3; ++t) EXPECT_EQ(sampled_peak[t], replayed[t].count()) << "tier " << t;
    EXPECT_EQ(core::testing::classes_mismatch(run->schedule, run->timeline), "");
    // Memory samples after the start lie within the retimed spans.
    for (size_t i = 3; i < run->timeline.memory.size(); ++i)
      EXPECT_GE(run->timeline.memory[i].time, ClockAheadBackend::kAhead);
  }
}

}  // namespace
}  // namespace stowage::executor
