// The executor allocates exactly what the schedule's ops declare (issue 10):
// the interpreter tallies each op's allocations and frees against its
// memory effects and fails the op on any difference, and a run starts with
// exactly the schedule's resident bytes. A model that keeps more than it
// declares is caught at its first forward; the same run declared truthfully
// finishes. Likewise every compute op does exactly the matrix-product FLOPs
// lowering gave it (issue 17): one extra product fails the run.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>

#include "core/lower.h"
#include "executor/compute_footprint.h"
#include "executor/interpreter.h"
#include "executor/model/matmul.h"
#include "executor/partition_homes.h"
#include "executor/resident_buffers.h"
#include "executor/trained_model.h"
#include "tests/executor/tiny_gpt_fixture.h"

namespace stowage::executor {
namespace {

using namespace testing;

// How a model misreports its first block: it keeps 4 bytes more than it
// declares, or computes one 2x2x2 product (16 FLOPs) the workload does not count.
enum class Lie { kNone, kKeepsMore, kComputesMore };

class Misreporting final : public LayerCompute {
 public:
  Misreporting(LayerCompute& inner, Lie lie) : inner_(inner), lie_(lie) {}
  int64_t forward(int64_t s, int m, int l, std::span<const float> p, std::span<float> kept) override {
    if (lie_ == Lie::kComputesMore && l == 1) {
      std::array<float, 4> a{1, 2, 3, 4}, c{};
      model::matmul(model::Transpose::kNo, model::Transpose::kNo, 2, 2, 2, 1.0f, a.data(), 2, a.data(), 2, 0.0f,
                    c.data(), 2);
    }
    return inner_.forward(s, m, l, p, kept);
  }
  int64_t recompute(int64_t s, int m, int l, std::span<const float> p, std::span<float> rebuilt) override {
    return inner_.recompute(s, m, l, p, rebuilt);
  }
  void backward(int64_t s, int m, int l, std::span<const float> p, std::span<float> g, float scale) override {
    inner_.backward(s, m, l, p, g, scale);
  }
  [[nodiscard]] core::ComputeFootprint footprint(int layer) const override {
    core::ComputeFootprint f = inner_.footprint(layer);
    if (lie_ == Lie::kKeepsMore && layer == 1) f.saved = f.saved - core::Bytes(4);
    return f;
  }
  [[nodiscard]] double loss(int64_t s, int m) const override { return inner_.loss(s, m); }

 private:
  LayerCompute& inner_;
  Lie lie_;
};

// Runs one step of `plan` with the model misreporting as `lie` says; the error, or "".
std::string run_declared(const core::PlanFile& plan, Lie lie, const std::string& tag) {
  const Fixture& f = fixture();
  const core::Workload workload(f.model, f.training.sequence_length);
  auto trained = make_trained_model(workload);
  EXPECT_TRUE(trained);
  const model::MicroBatch mb{.batch = f.training.micro_batch, .seq = f.training.sequence_length};
  const std::unique_ptr<ModelCompute> real = (*trained)->compute(
      mb,
      [](int64_t, int, std::span<int32_t> in, std::span<int32_t> target) {
        for (size_t i = 0; i < in.size(); ++i) {
          in[i] = static_cast<int32_t>(i % 7);
          target[i] = static_cast<int32_t>((i + 1) % 7);
        }
      },
      plan.policy.activation_checkpointing ? Activations::kCheckpoint : Activations::kKeep);
  Misreporting model(*real, lie);
  const core::Workload run_workload = executor_workload(workload, model, mb.tokens());
  auto schedule = core::lower(plan.policy, f.machine, run_workload, f.training,
                              {.buffers = {.gpu_reserve = core::Bytes(0), .host_reserve = core::Bytes(0)}});
  EXPECT_TRUE(schedule);
  auto b = backend(tag);
  const std::vector<core::Partition> parts = core::partitions_of(workload, plan.policy.sub_group_params);
  std::vector<std::string> names;
  for (size_t j = 0; j < parts.size(); ++j) names.push_back("partition " + std::to_string(j));
  auto homes = PartitionHomes::allocate(*b, parts, names, plan.policy);
  EXPECT_TRUE(homes);
  auto resident = ResidentBuffers::hold(*b, *schedule);
  if (!resident) return core::to_string(resident.error());
  Interpreter interpreter(*schedule, *b, *homes, model,
                          {.tied_head = core::tied_head(run_workload), .watchdog = std::chrono::seconds(30)});
  auto ran = interpreter.run();
  return ran ? "" : core::to_string(ran.error());
}

TEST(MemoryEffects, AnOpThatAllocatesOtherThanItDeclaresFailsTheRun) {
  // (Placements whose homes need no initial write: the states on NVMe are
  // written by the trainer before a run.)
  for (const core::PartitionPolicy where : {kAllDevice, kCpuOffload}) {
    for (bool checkpointing : {false, true}) {
      core::PlanFile plan = plan_where(where);
      plan.policy.activation_checkpointing = checkpointing;
      EXPECT_EQ(run_declared(plan, Lie::kNone, "declared-truthfully"), "");
      const std::string error = run_declared(plan, Lie::kKeepsMore, "declared-short");
      // Its forward, or with checkpointing the recompute that rebuilds it.
      const std::string op = checkpointing ? "recompute layers.0 s0 m0" : "fwd layers.0 s0 m0";
      EXPECT_NE(error.find("op '" + op + "' failed: compute '" + op + "' failed: the layer keeps"), std::string::npos)
          << error;
      EXPECT_NE(error.find("disagree on memory"), std::string::npos) << error;
    }
  }
}

TEST(MemoryEffects, AComputeOpThatDoesOtherFlopsThanDeclaredFailsTheRun) {
  for (bool checkpointing : {false, true}) {
    core::PlanFile plan = plan_where(kCpuOffload);
    plan.policy.activation_checkpointing = checkpointing;
    const std::string error = run_declared(plan, Lie::kComputesMore, "computes-more");
    EXPECT_NE(error.find("op 'fwd layers.0 s0 m0' failed: computed"), std::string::npos) << error;
    EXPECT_NE(error.find("the executor's model and the workload disagree on FLOPs"), std::string::npos) << error;
  }
}

TEST(MemoryEffects, ARunStartsWithExactlyTheResidentBytesTheScheduleDeclares) {
  const Fixture& f = fixture();
  const core::Workload workload(f.model, f.training.sequence_length);
  const core::PlanFile plan = plan_where(kCpuOffload);
  auto schedule = core::lower(plan.policy, f.machine, workload, f.training);
  ASSERT_TRUE(schedule);
  auto b = backend("resident");
  const std::vector<core::Partition> parts = core::partitions_of(workload, plan.policy.sub_group_params);
  auto homes = PartitionHomes::allocate(*b, parts, std::vector<std::string>(parts.size(), "p"), plan.policy);
  ASSERT_TRUE(homes);
  {
    auto held = ResidentBuffers::hold(*b, *schedule);
    EXPECT_TRUE(held) << (held ? "" : core::to_string(held.error()));
    for (core::Tier t : core::kAllTiers)
      EXPECT_EQ(b->in_use(t), schedule->resident[static_cast<size_t>(t)].count());
  }
  // Anything else on a tier is a difference the run refuses to start with.
  auto stray = b->allocate(core::Tier::kCpu, 64, "stray");
  ASSERT_TRUE(stray);
  auto held = ResidentBuffers::hold(*b, *schedule);
  ASSERT_FALSE(held);
  EXPECT_NE(core::to_string(held.error()).find("the schedule declares"), std::string::npos);
  b->release(*stray);
}

}  // namespace
}  // namespace stowage::executor
