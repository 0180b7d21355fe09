#include "core/lower.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/placement.h"
#include "core/tied_head.h"
#include "tests/core/test_profiles.h"

namespace stowage::core {
namespace {

using testing::bundled;
using testing::must;

struct Lowered {
  Workload workload;
  Schedule schedule;
};

Lowered lower_tiny(StandardPlacement which, const std::string& machine_name = "workstation-24gb-1nvme",
                   int steps = 1, int64_t accumulation = 1) {
  const MachineSpec machine = must(bundled().machine(machine_name));
  TrainingSpec training = must(bundled().training("default"));
  training.gradient_accumulation = accumulation;
  Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  const Policy p = policy_for(standard_placement(which, machine.gpu_count), w, training);
  Schedule s = must(lower(p, machine, w, training, {.steps = steps}));
  return {std::move(w), std::move(s)};
}

std::map<OpKind, int> count_kinds(const Schedule& s) {
  std::map<OpKind, int> n;
  for (const Op& op : s.ops) ++n[op.kind];
  return n;
}

// tiny-gpt has 6 layers (embedding, 4 blocks, final); with checkpointing the
// 4 blocks are recomputed. All on one GPU: 6 forward, 4 recompute,
// 6 backward, the gradient check (clipping at 1.0 is on by default) and
// 6 optimizer steps on the GPU, and nothing else.
TEST(Lower, AllGpuOneStep) {
  const Lowered l = lower_tiny(StandardPlacement::kAllGpu);
  std::map<OpKind, int> n = count_kinds(l.schedule);
  EXPECT_EQ(n[OpKind::kForward], 6);
  EXPECT_EQ(n[OpKind::kRecompute], 4);
  EXPECT_EQ(n[OpKind::kBackward], 6);
  EXPECT_EQ(n[OpKind::kOptimizer], 6);
  EXPECT_EQ(n[OpKind::kGradCheck], 1);
  EXPECT_EQ(l.schedule.ops.size(), 23u);
  for (const Op& op : l.schedule.ops) EXPECT_EQ(op.lane, Lane::kGpuCompute) << op.name;
}

// ZeRO-Offload adds, per layer, a gradient offload and an upload of the
// updated parameters, and moves the optimizer and the gradient check (over
// host gradients) to the CPU: 23 + 12 ops.
TEST(Lower, ZeroOffloadMovesGradientsAndOptimizerToTheHost) {
  const Lowered l = lower_tiny(StandardPlacement::kZeroOffload);
  std::map<OpKind, int> n = count_kinds(l.schedule);
  EXPECT_EQ(n[OpKind::kOffloadGrads], 6);
  EXPECT_EQ(n[OpKind::kUploadParams], 6);
  EXPECT_EQ(l.schedule.ops.size(), 35u);
  for (const Op& op : l.schedule.ops) {
    if (op.kind == OpKind::kOptimizer || op.kind == OpKind::kGradCheck) {
      EXPECT_EQ(op.lane, Lane::kCpuOptim);
    }
    if (op.kind == OpKind::kOffloadGrads) {
      EXPECT_EQ(op.lane, Lane::kPcieD2h);
    }
  }
}

// ZeRO-Infinity: parameters come from the CPU for the forward and again for
// the backward (12 uploads), and the tied head's forward and backward fetch
// the embedding for themselves (2 more); optimizer states are read from and
// written to NVMe around each of the 6 optimizer steps: 16 compute + 14 + 6
// + 12 + 6, and the gradient check.
TEST(Lower, ZeroInfinityStreamsParamsAndStates) {
  const Lowered l = lower_tiny(StandardPlacement::kZeroInfinity);
  std::map<OpKind, int> n = count_kinds(l.schedule);
  EXPECT_EQ(n[OpKind::kUploadParams], 14);
  EXPECT_EQ(n[OpKind::kReadStates], 6);
  EXPECT_EQ(n[OpKind::kWriteStates], 6);
  EXPECT_EQ(l.schedule.ops.size(), 55u);
  // Each state read moves 12 bytes per parameter of its layer.
  for (const Op& op : l.schedule.ops) {
    if (op.kind == OpKind::kReadStates) {
      EXPECT_EQ(op.bytes, Bytes(12 * l.workload.layers()[static_cast<size_t>(op.layer)].param_count()));
    }
  }
}

// Gradient accumulation repeats forward and backward per micro-step; the
// optimizer runs once per step.
TEST(Lower, AccumulationRepeatsMicroStepsNotTheOptimizer) {
  const Lowered l = lower_tiny(StandardPlacement::kZeroOffload, "workstation-24gb-1nvme", 1, 3);
  std::map<OpKind, int> n = count_kinds(l.schedule);
  EXPECT_EQ(n[OpKind::kForward], 18);
  EXPECT_EQ(n[OpKind::kOffloadGrads], 18);
  EXPECT_EQ(n[OpKind::kOptimizer], 6);
}

// Eight ranks at stage 2 reduce-scatter each layer's gradients over NVLink
// and all-gather the updated parameters.
TEST(Lower, SeveralRanksAddCollectives) {
  const Lowered l = lower_tiny(StandardPlacement::kZeroOffload, "dgx-a100");
  std::map<OpKind, int> n = count_kinds(l.schedule);
  EXPECT_EQ(n[OpKind::kReduceScatter], 6);
  EXPECT_EQ(n[OpKind::kAllGather], 6);
  EXPECT_EQ(l.schedule.ranks, 8);
  for (const Op& op : l.schedule.ops) {
    if (op.kind == OpKind::kOffloadGrads) {
      // Each rank offloads its 1/8 of the layer's 16-bit gradients.
      EXPECT_EQ(op.bytes, Bytes(2 * l.workload.layers()[static_cast<size_t>(op.layer)].param_count() / 8));
    }
  }
}

// Tied embeddings: the final layer's head multiplies by the embedding's
// token table, so with parameters off the GPU its forward and backward each
// wait for uploads of the embedding layer's param16 (tiny-gpt's table
// and positions are one partition: 2 B x its parameters) that they free;
// with parameters on the GPU they read it where it rests. An untied model's
// head owns its weight and fetches nothing else.
TEST(Lower, TiedHeadFetchesTheEmbeddingTableForTheFinalLayer) {
  const Lowered l = lower_tiny(StandardPlacement::kZeroInfinity);
  const Schedule& s = l.schedule;
  const int final_layer = static_cast<int>(l.workload.layers().size()) - 1;
  ASSERT_EQ(tied_head(l.workload), (TiedHead{.layer = final_layer, .source = 0}));
  const Bytes embedding(2 * l.workload.layers()[0].param_count());
  int heads = 0;
  for (const Op& op : s.ops) {
    if (op.layer != final_layer || (op.kind != OpKind::kForward && op.kind != OpKind::kBackward)) continue;
    ++heads;
    Bytes uploaded;
    for (OpId d : op.deps) {
      const Op& dep = s.op(d);
      if (dep.kind != OpKind::kUploadParams || dep.layer != 0) continue;
      uploaded += dep.bytes;
      ASSERT_EQ(dep.allocs.size(), 1u);
      EXPECT_TRUE(std::any_of(op.frees.begin(), op.frees.end(), [&](const MemoryEffect& f) {
        return f.tier == Tier::kGpu && f.tensor == dep.allocs[0].tensor && f.bytes == dep.bytes;
      })) << op.name;
    }
    EXPECT_EQ(uploaded, embedding) << op.name;
  }
  EXPECT_EQ(heads, 2);
  EXPECT_TRUE(validate(s).empty());
  // Parameters on the GPU: the head reads the embedding's resting copy.
  const Lowered gpu = lower_tiny(StandardPlacement::kZeroOffload);
  for (const Op& op : gpu.schedule.ops) {
    if (op.layer != final_layer || op.kind != OpKind::kForward) continue;
    EXPECT_TRUE(std::any_of(op.reads.begin(), op.reads.end(),
                            [](const std::string& r) { return r.starts_with("param16 embedding v0 gpu"); }))
        << op.name;
  }
  // tiny-llama's head is its own: no tied head, and its final layer's ops
  // wait for no fetch of the embedding.
  const MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const TrainingSpec training = must(bundled().training("default"));
  const Workload llama(must(bundled().model("tiny-llama")), training.sequence_length);
  const Policy p = policy_for(standard_placement(StandardPlacement::kZeroInfinity, 1), llama, training);
  const Schedule untied = must(lower(p, machine, llama, training, {.steps = 1}));
  EXPECT_FALSE(tied_head(llama).has_value());
  const int llama_final = static_cast<int>(llama.layers().size()) - 1;
  int finals = 0;
  for (const Op& op : untied.ops) {
    if (op.layer != llama_final || (op.kind != OpKind::kForward && op.kind != OpKind::kBackward)) continue;
    ++finals;
    for (OpId d : op.deps) {
      EXPECT_FALSE(untied.op(d).kind == OpKind::kUploadParams && untied.op(d).layer == 0) << op.name;
    }
  }
  EXPECT_GE(finals, 2);  // a forward and a backward at least (the policy may gather it in pieces)
}

TEST(Lower, IssueOrderIsATopologicalOrderAndValid) {
  for (StandardPlacement which : {StandardPlacement::kAllGpu, StandardPlacement::kZeroOffload, StandardPlacement::kZeroInfinity}) {
    const Lowered l = lower_tiny(which, "workstation-24gb-1nvme", 2, 2);
    EXPECT_TRUE(validate(l.schedule).empty());
    for (const Op& op : l.schedule.ops) {
      for (OpId d : op.deps) EXPECT_LT(d, op.id);
    }
  }
}

TEST(Lower, ValidationCatchesAReadWithoutAProducer) {
  Lowered l = lower_tiny(StandardPlacement::kAllGpu);
  l.schedule.ops[3].reads.push_back("ghost tensor");
  const std::vector<std::string> problems = validate(l.schedule);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("reads 'ghost tensor' that no earlier op produced"), std::string::npos);
}

TEST(Lower, ValidationCatchesAReadThatDoesNotWaitForItsProducer) {
  Lowered l = lower_tiny(StandardPlacement::kAllGpu);
  // The second forward reads the first's activations; cut the dependency.
  Op& second = l.schedule.ops[1];
  ASSERT_EQ(second.kind, OpKind::kForward);
  second.deps.clear();
  const std::vector<std::string> problems = validate(l.schedule);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("without depending on it"), std::string::npos) << problems[0];
}

TEST(Lower, ValidationCatchesADependencyOnALaterOp) {
  Lowered l = lower_tiny(StandardPlacement::kAllGpu);
  l.schedule.ops[0].deps.push_back(5);
  const std::vector<std::string> problems = validate(l.schedule);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("not issued before it"), std::string::npos);
}

TEST(Lower, NvmePolicyWithoutDrivesIsRejected) {
  MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  machine.nvme_count = 0;
  const TrainingSpec training = must(bundled().training("default"));
  const Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  const Policy p = policy_for(standard_placement(StandardPlacement::kZeroInfinity, 1), w, training);
  auto r = lower(p, machine, w, training);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error()[0].what.find("no NVMe drives"), std::string::npos);
}

// Each op by name with the names of the ops it waits for: compares two
// schedules whose issue order may differ.
std::map<std::string, std::vector<std::string>> waits_by_name(const Schedule& s) {
  std::map<std::string, std::vector<std::string>> out;
  for (const Op& op : s.ops) {
    std::vector<std::string>& deps = out[op.name];
    for (OpId d : op.deps) deps.push_back(s.op(d).name);
    std::sort(deps.begin(), deps.end());
  }
  return out;
}

// Issue 11: a prefetch depth of 0 (documented as allowed) indexed one past
// the ops lowered so far and crashed. Depth 0 fetches on demand: a fetch
// waits for the compute before it, which is what depth 1 does, so the two
// schedules wait on the same ops (only the issue keys differ).
TEST(Lower, PrefetchDepthZeroFetchesOnDemand) {
  const MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const TrainingSpec training = must(bundled().training("default"));
  const Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  const Policy infinity = policy_for(standard_placement(StandardPlacement::kZeroInfinity, 1), w, training);
  for (int Policy::*depth : {&Policy::h2d_prefetch_depth, &Policy::nvme_prefetch_depth}) {
    Policy zero = infinity, one = infinity;
    zero.*depth = 0;
    one.*depth = 1;
    const Schedule s0 = must(lower(zero, machine, w, training, {.steps = 2}));
    const Schedule s1 = must(lower(one, machine, w, training, {.steps = 2}));
    EXPECT_TRUE(validate(s0).empty());
    EXPECT_EQ(waits_by_name(s0), waits_by_name(s1));
    EXPECT_EQ(s0.lane_slots, s1.lane_slots);
  }
}

// Issue 11: gradients on NVMe were accepted, allocated in CPU RAM and never
// freed there. Lowering has no gradient swap to NVMe, so it refuses them.
TEST(Lower, GradientsOnNvmeAreRefused) {
  const MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const TrainingSpec training = must(bundled().training("default"));
  const Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  Policy p = policy_for(standard_placement(StandardPlacement::kZeroInfinity, 1), w, training);
  p.partitions[2].gradients = Tier::kNvme;
  auto r = lower(p, machine, w, training);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error()[0].what, "policy.partitions[2].gradients: gradients on NVMe are not supported");
}

TEST(Lower, SubGroupsSplitBigLayers) {
  const TrainingSpec training = must(bundled().training("default"));
  const Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  // Blocks have 789,760 params (12 x 256^2 + 13 x 256); groups of 300,000
  // split each into 3; the embedding (2 x 65,536) and final norm stay whole.
  const std::vector<Partition> parts = partitions_of(w, 300'000);
  EXPECT_EQ(parts.size(), 1u + 4 * 3 + 1);
  EXPECT_EQ(parts[1].params, 300'000);
  EXPECT_EQ(parts[3].params, 789'760 - 600'000);
  Policy p = policy_for(standard_placement(StandardPlacement::kZeroInfinity, 1), w, training);
  p.sub_group_params = 300'000;
  p.partitions.assign(parts.size(), p.partitions.front());
  const Schedule s = must(lower(p, must(bundled().machine("workstation-24gb-1nvme")), w, training));
  EXPECT_EQ(count_kinds(s)[OpKind::kOptimizer], 14);
}

TEST(Lower, MemoryEffectsBalanceOverAStep) {
  for (StandardPlacement which : {StandardPlacement::kAllGpu, StandardPlacement::kZeroOffload, StandardPlacement::kZeroInfinity}) {
    const Lowered l = lower_tiny(which, "workstation-24gb-1nvme", 2, 3);
    std::array<int64_t, 3> net{};
    for (const Op& op : l.schedule.ops) {
      for (const MemoryEffect& e : op.allocs) net[static_cast<size_t>(e.tier)] += e.bytes.count();
      for (const MemoryEffect& e : op.frees) net[static_cast<size_t>(e.tier)] -= e.bytes.count();
    }
    EXPECT_EQ(net, (std::array<int64_t, 3>{}));
  }
}

// Whether `to` is reachable from `from` by dependencies.
bool depends_on(const Schedule& s, OpId to, OpId from) {
  std::vector<OpId> stack = {to};
  std::vector<bool> seen(s.ops.size());
  while (!stack.empty()) {
    const OpId at = stack.back();
    stack.pop_back();
    if (at == from) return true;
    if (seen[static_cast<size_t>(at)]) continue;
    seen[static_cast<size_t>(at)] = true;
    for (OpId d : s.op(at).deps) stack.push_back(d);
  }
  return false;
}

Schedule lower_with(StandardPlacement which, TrainingSpec training, LowerOptions options = {}) {
  const MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  const Policy p = policy_for(standard_placement(which, machine.gpu_count), w, training);
  return must(lower(p, machine, w, training, options));
}

// Clipping and fp16 gate every optimizer op on the step's gradient check,
// itself after every gradient of the step; without either there is none.
TEST(Lower, TheGradientCheckGatesEveryOptimizerOp) {
  TrainingSpec training = must(bundled().training("default"));
  ASSERT_EQ(training.max_grad_norm, 1.0);  // on by default
  for (StandardPlacement which :
       {StandardPlacement::kAllGpu, StandardPlacement::kZeroOffload, StandardPlacement::kZeroInfinity}) {
    const Schedule s = lower_with(which, training, {.steps = 2});
    std::map<int, OpId> verdict;  // the last check of each step
    for (const Op& op : s.ops) {
      if (op.kind == OpKind::kGradCheck) verdict[op.step] = std::max(verdict[op.step], op.id);
    }
    ASSERT_EQ(verdict.size(), 2u);
    for (const Op& op : s.ops) {
      if (op.kind == OpKind::kOptimizer) {
        EXPECT_TRUE(depends_on(s, op.id, verdict[op.step])) << op.name;
      }
      if (op.kind == OpKind::kBackward || op.kind == OpKind::kOffloadGrads) {
        EXPECT_TRUE(depends_on(s, verdict[op.step], op.id)) << op.name;
      }
    }
  }
  training.max_grad_norm = 0;
  EXPECT_EQ(count_kinds(lower_with(StandardPlacement::kZeroOffload, training))[OpKind::kGradCheck], 0);
  training.precision = Precision::kFp16;
  EXPECT_EQ(count_kinds(lower_with(StandardPlacement::kZeroOffload, training))[OpKind::kGradCheck], 1);
}

// fp16: a step's loss scale follows from the previous step's verdict, so its
// backward pass waits for that check (both interpreters see the edge).
TEST(Lower, Fp16BackwardWaitsForThePreviousVerdict) {
  TrainingSpec training = must(bundled().training("default"));
  training.precision = Precision::kFp16;
  const Schedule s = lower_with(StandardPlacement::kZeroOffload, training, {.steps = 2});
  OpId verdict0 = -1, first_backward1 = -1;
  for (const Op& op : s.ops) {
    if (op.kind == OpKind::kGradCheck && op.step == 0) verdict0 = op.id;
    if (op.kind == OpKind::kBackward && op.step == 1 && first_backward1 < 0) first_backward1 = op.id;
  }
  ASSERT_GE(verdict0, 0);
  ASSERT_GE(first_backward1, 0);
  EXPECT_TRUE(depends_on(s, first_backward1, verdict0));
}

// A checkpoint after step 0: a snapshot per partition waits for that
// partition's update of step 0 and holds back only its update of step 1;
// the commit waits for every snapshot; compute never waits for any of it.
TEST(Lower, ACheckpointSitsBetweenTwoStepsUpdates) {
  const TrainingSpec training = must(bundled().training("default"));
  const Schedule s =
      lower_with(StandardPlacement::kZeroInfinity, training, {.steps = 2, .checkpoint_after = {0}});
  std::map<int, OpId> snapshot;  // by partition
  OpId commit = -1;
  for (const Op& op : s.ops) {
    if (op.kind != OpKind::kCheckpoint) continue;
    if (op.partition < 0) {
      EXPECT_EQ(commit, -1) << "one commit";
      commit = op.id;
    } else {
      snapshot[op.partition] = op.id;
    }
  }
  ASSERT_GE(commit, 0);
  ASSERT_EQ(snapshot.size(), 6u);
  for (const auto& [j, id] : snapshot) EXPECT_TRUE(depends_on(s, commit, id));
  for (const Op& op : s.ops) {
    const bool update = op.kind == OpKind::kOptimizer || op.kind == OpKind::kWriteStates;
    if (update && op.step == 0) {
      EXPECT_TRUE(depends_on(s, snapshot[op.partition], op.id)) << op.name;
    }
    if (op.kind == OpKind::kOptimizer && op.step == 1) {
      EXPECT_TRUE(depends_on(s, op.id, snapshot[op.partition])) << op.name;
      // Optimizers run from the last layer down: none waits for the
      // snapshot of a partition whose update comes after its own.
      for (const auto& [j, id] : snapshot) {
        if (j < op.partition) {
          EXPECT_FALSE(depends_on(s, op.id, id)) << op.name << " waits for a later snapshot";
        }
      }
    }
    if (op.kind == OpKind::kForward || op.kind == OpKind::kBackward) {
      EXPECT_FALSE(depends_on(s, op.id, commit)) << op.name;
    }
  }
}

// Speculative updates: optimizer ops no longer wait for the gradient check,
// each allocates a rollback copy of its states, and an accept op after the
// check frees them; the next step's use of the parameters waits for it.
TEST(Lower, SpeculativeUpdatesRunAheadOfTheCheckAndAreAccepted) {
  const TrainingSpec training = must(bundled().training("default"));
  const MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  Policy p = policy_for(standard_placement(StandardPlacement::kZeroOffload, machine.gpu_count), w, training);
  p.speculative_update = true;
  const Schedule s = must(lower(p, machine, w, training, {.steps = 2}));
  std::map<int, OpId> verdict, accept;
  for (const Op& op : s.ops) {
    if (op.kind == OpKind::kGradCheck) verdict[op.step] = op.id;
    if (op.kind == OpKind::kAcceptUpdate) accept[op.step] = op.id;
  }
  ASSERT_EQ(accept.size(), 2u);
  Bytes copies;
  for (const Op& op : s.ops) {
    if (op.kind == OpKind::kOptimizer) {
      EXPECT_FALSE(depends_on(s, op.id, verdict[op.step])) << op.name;
      EXPECT_TRUE(depends_on(s, accept[op.step], op.id)) << op.name;
      const MemoryEffect* copy = rollback_copy(op);
      ASSERT_NE(copy, nullptr) << op.name;
      EXPECT_EQ(copy->bytes, Bytes(12 * op.params)) << "a copy of master32, adam_m, adam_v";
      if (op.step == 0) copies += copy->bytes;
    }
    if (op.kind == OpKind::kForward && op.step == 1) {
      EXPECT_TRUE(depends_on(s, op.id, accept[0])) << op.name;
    }
  }
  EXPECT_TRUE(depends_on(s, accept[0], verdict[0]));
  Bytes freed;
  for (const MemoryEffect& e : s.op(accept[0]).frees) {
    if (e.tensor.starts_with("rollback copy")) freed += e.bytes;
  }
  EXPECT_EQ(freed, copies);
}

}  // namespace
}  // namespace stowage::core

namespace stowage::core {
namespace {

// Issue 11: a GPU optimizer whose parameters rest on the CPU or on NVMe
// (DeepSpeed's ZeRO-3 with offload_param and no offload_optimizer, and
// many planner candidates) writes the updated param16 on the GPU. They go
// home by one d2h copy per partition and step (2 B per parameter), from a
// device buffer the optimizer allocates; on NVMe through a host buffer
// that the d2h copy fills and the NVMe write frees.
TEST(Lower, AGpuOptimizerCopiesUpdatedParametersOffTheGpu) {
  const MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const TrainingSpec training = must(bundled().training("default"));
  const Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  for (const char* name : {"zero-3-params-cpu", "zero-3-params-nvme"}) {
    const std::optional<Placement> placement = placement_named(name, 1);
    ASSERT_TRUE(placement) << name;
    const Policy p = policy_for(*placement, w, training);
    ASSERT_EQ(p.partitions.front().optimizer, OptimizerDevice::kGpu) << name;
    const bool nvme = p.partitions.front().param16 == Tier::kNvme;
    const Schedule s = must(lower(p, machine, w, training, {.steps = 2}));
    int64_t down = 0;
    int count = 0;
    for (const Op& op : s.ops) {
      if (op.kind == OpKind::kOptimizer) {
        ASSERT_EQ(op.allocs.size(), 1u) << op.name;
        EXPECT_EQ(op.allocs[0].tier, Tier::kGpu) << op.name;
        EXPECT_EQ(op.allocs[0].bytes, Bytes(2 * op.params)) << op.name;
      }
      if (op.kind != OpKind::kOffloadParams) continue;
      ++count;
      down += op.bytes.count();
      EXPECT_EQ(op.lane, Lane::kPcieD2h);
      EXPECT_EQ(s.op(op.deps.front()).kind, OpKind::kOptimizer) << op.name;
      EXPECT_EQ(op.allocs.size(), nvme ? 1u : 0u) << op.name;
      if (nvme) {
        EXPECT_EQ(op.allocs[0].tier, Tier::kCpu) << op.name;
      }
      ASSERT_EQ(op.frees.size(), 1u) << op.name;
      EXPECT_EQ(op.frees[0].tier, Tier::kGpu) << op.name;
    }
    EXPECT_EQ(count, 2 * static_cast<int>(w.layers().size())) << name;
    EXPECT_EQ(down, 2 * 2 * w.total_params()) << name;
    for (const Op& op : s.ops) {
      if (op.kind == OpKind::kWriteParams) {
        EXPECT_EQ(s.op(op.deps.front()).kind, OpKind::kOffloadParams) << op.name;
      }
    }
    std::array<int64_t, 3> net{};
    for (const Op& op : s.ops) {
      for (const MemoryEffect& e : op.allocs) net[static_cast<size_t>(e.tier)] += e.bytes.count();
      for (const MemoryEffect& e : op.frees) net[static_cast<size_t>(e.tier)] -= e.bytes.count();
    }
    EXPECT_EQ(net, (std::array<int64_t, 3>{})) << name;
  }
}

}  // namespace
}  // namespace stowage::core

namespace stowage::core {
namespace {

// The most steps one schedule holds is where lowering starts refusing: a
// step more is refused at once (before anything is lowered), with the ops it
// would make. Fewer micro-steps per step hold more steps.
TEST(MaxStepsInOneSchedule, IsWhereLoweringRefuses) {
  const ModelSpec model = testing::must(testing::bundled().model("tiny-gpt"));
  const MachineSpec machine = testing::must(testing::bundled().machine("workstation-24gb-1nvme"));
  TrainingSpec training = testing::must(testing::bundled().training("tiny"));
  const Workload w(model, training.sequence_length);
  const Policy policy = policy_for(*placement_named("zero-offload", 1), w, training);
  const int64_t most = max_steps_in_one_schedule(policy, w, training);
  ASSERT_GT(most, 1000);
  const auto refused = lower(policy, machine, w, training, {.steps = static_cast<int>(most + 1)});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().front().what.find(" steps make about "), std::string::npos)
      << refused.error().front().what;
  training.gradient_accumulation *= 4;
  EXPECT_EQ(max_steps_in_one_schedule(policy, w, training), most / 4);
}

}  // namespace
}  // namespace stowage::core
