// compute_work is the one rule for what a layer's compute ops cost: the
// schedule's forward, recompute and backward ops of each layer, summed over
// the layer's gather pieces, carry exactly its bytes and FLOPs, for every
// bundled model, with activation checkpointing on and off, whole layers
// and layers gathered in pieces.
#include "core/compute_work.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <stdexcept>
#include <tuple>

#include "core/lower.h"
#include "core/placement.h"
#include "tests/core/test_profiles.h"

namespace stowage::core {
namespace {

using testing::bundled;
using testing::must;

class ComputeWorkTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ComputeWorkTest, TheSchedulesComputeOpsCarryItsBytesAndFlops) {
  const MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const TrainingSpec training = must(bundled().training("default"));
  const Workload w(must(bundled().model(GetParam())), training.sequence_length);
  const int64_t tokens = training.tokens_per_micro_batch();
  for (const bool checkpointing : {false, true}) {
    for (const int64_t gather : {int64_t{0}, w.largest_layer_params() / 3 + 1}) {
      Policy p = policy_for(standard_placement(StandardPlacement::kZeroInfinity, 1), w, training);
      p.activation_checkpointing = checkpointing;
      p.gather_params = gather;
      const Schedule s = must(lower(p, machine, w, training, {.steps = 1}));
      // (layer, kind) -> the sums over its pieces of one micro-step.
      std::map<std::tuple<int, OpKind>, ComputeWork> sums;
      for (const Op& op : s.ops) {
        if (op.kind != OpKind::kForward && op.kind != OpKind::kRecompute && op.kind != OpKind::kBackward) continue;
        if (op.micro_step != 0) continue;
        ComputeWork& sum = sums[{op.layer, op.kind}];
        sum.bytes += op.bytes;
        sum.flops += op.flops;
      }
      for (const auto& [key, sum] : sums) {
        const auto [l, kind] = key;
        const Layer& layer = w.layers()[static_cast<size_t>(l)];
        const ComputeWork want = compute_work(kind, layer, w.footprint(static_cast<size_t>(l), tokens),
                                              tokens, checkpointing, Bytes(2 * layer.param_count()));
        const std::string where = layer.name + " kind " + std::to_string(static_cast<int>(kind)) +
                                  (checkpointing ? ", checkpointing" : "") + ", gather " + std::to_string(gather);
        EXPECT_EQ(sum.bytes, want.bytes) << where;
        EXPECT_NEAR(sum.flops.count(), want.flops.count(), 1e-9 * want.flops.count()) << where;
      }
      EXPECT_EQ(sums.size(), w.layers().size() * 2 + (checkpointing ? static_cast<size_t>(std::count_if(
          w.layers().begin(), w.layers().end(), [](const Layer& l) { return l.kind == LayerKind::kBlock; })) : 0));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryBundledModel, ComputeWorkTest,
                         ::testing::ValuesIn(bundled().names(ProfileKind::kModel)), testing::test_name_of);

TEST(ComputeWork, ABackwardDoesTwiceItsForwardsFlopsAndReadsTheParametersTwice) {
  const TrainingSpec training = must(bundled().training("default"));
  const Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  const Layer& block = w.layers()[1];
  const ComputeFootprint f = w.footprint(1, 1024);
  const Bytes param16(2 * block.param_count());
  const ComputeWork forward = compute_work(OpKind::kForward, block, f, 1024, false, param16);
  const ComputeWork backward = compute_work(OpKind::kBackward, block, f, 1024, false, param16);
  EXPECT_DOUBLE_EQ(backward.flops.count(), 2 * forward.flops.count());
  EXPECT_EQ(backward.bytes - forward.bytes, param16);
  EXPECT_THROW((void)compute_work(OpKind::kOptimizer, block, f, 1024, false, param16), std::logic_error);
}

}  // namespace
}  // namespace stowage::core
