// Gathering by parameter (issue 11 item 4): how a layer is cut into
// pieces, and what lowering makes of a layer gathered in pieces.
#include "core/gather_pieces.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/lower.h"
#include "core/placement.h"
#include "core/policy.h"
#include "tests/core/test_profiles.h"

namespace stowage::core {
namespace {

using testing::bundled;
using testing::must;

Workload tiny() {
  const TrainingSpec training = must(bundled().training("default"));
  return Workload(must(bundled().model("tiny-gpt")), training.sequence_length);
}

// A tiny-gpt block (789,760 params) in module order: attn_norm 512, q, k,
// v, o 65,792 each (256 x 256 + bias), mlp_norm 512, up 263,168
// (1024 x 256 + 1024), down 262,400 (256 x 1024 + 256). Pieces of at most
// 200,000: attn_norm+q+k+v = 197,888; o+mlp_norm = 66,304 (up does not
// fit beside them); up tiled in two of 131,584; down in two of 131,200.
TEST(GatherPieces, ModulesArePackedInOrderAndALargerModuleIsTiled) {
  const Workload w = tiny();
  const Layer& block = w.layers()[1];
  ASSERT_EQ(block.param_count(), 789'760);
  const std::vector<GatherPiece> pieces = gather_pieces(block, 200'000);
  const std::vector<GatherPiece> expected = {{0, 197'888},       {197'888, 66'304}, {264'192, 131'584},
                                             {395'776, 131'584}, {527'360, 131'200}, {658'560, 131'200}};
  EXPECT_EQ(pieces, expected);
}

TEST(GatherPieces, ALayerThatFitsOrNoGatherSizeIsOnePiece) {
  const Workload w = tiny();
  for (const Layer& l : w.layers()) {
    EXPECT_EQ(gather_pieces(l, 0), (std::vector<GatherPiece>{{0, l.param_count()}})) << l.name;
    EXPECT_EQ(gather_pieces(l, l.param_count()).size(), 1u) << l.name;
  }
}

// Over every bundled model and a range of gather sizes, the pieces cover
// each layer exactly, in order, and none is larger than the gather size.
TEST(GatherPieces, PiecesCoverEveryLayerAndStayWithinTheSize) {
  const ProfileCatalog catalog = bundled();
  for (const std::string& name : catalog.names(ProfileKind::kModel)) {
    const ModelSpec model = must(catalog.model(name));
    const Workload w(model, 2048);
    // Sizes far below a layer cut huge models into millions of tiles: the
    // smallest only on the small models.
    std::vector<int64_t> sizes = {int64_t{20'000'000}, int64_t{100'000'000}, gather_params_for(Bytes(int64_t{24} << 30))};
    if (w.total_params() < int64_t{2'000'000'000}) sizes.push_back(1'000);
    for (int64_t size : sizes) {
      for (const Layer& l : w.layers()) {
        int64_t next = 0;
        for (const GatherPiece& p : gather_pieces(l, size)) {
          EXPECT_EQ(p.first_param, next) << name << " " << l.name;
          EXPECT_GT(p.params, 0) << name << " " << l.name;
          EXPECT_LE(p.params, size) << name << " " << l.name;
          next += p.params;
        }
        EXPECT_EQ(next, l.param_count()) << name << " " << l.name;
      }
    }
  }
}

Policy infinity(const Workload& w, const TrainingSpec& t, int64_t gather) {
  Policy p = policy_for(standard_placement(StandardPlacement::kZeroInfinity, 1), w, t);
  for (PartitionPolicy& part : p.partitions) part.param16 = Tier::kNvme;  // read from NVMe for each fetch
  p.gather_params = gather;
  return p;
}

std::map<OpKind, int> kinds(const Schedule& s) {
  std::map<OpKind, int> n;
  for (const Op& op : s.ops) ++n[op.kind];
  return n;
}

// ZeRO-Infinity's tiny-gpt (parameters on NVMe, one micro-step) gathered in
// pieces of 200,000: each block is 6
// pieces, fetched for its forward, again for its recompute and again for
// its backward (18 uploads and NVMe reads a block, 2 for the embedding and
// 2 for the final norm, which stay whole, and 2 more of the embedding for
// the tied head's forward and backward: 78 of each); no upload, no NVMe
// read and no backward's gradient is larger than a piece; the compute does
// the same FLOPs as whole layers, and every byte allocated is freed.
TEST(GatherPieces, LoweringFetchesComputesAndReleasesPieceByPiece) {
  const MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  TrainingSpec training = must(bundled().training("default"));
  training.gradient_accumulation = 1;
  const Workload w = tiny();
  const Schedule whole = must(lower(infinity(w, training, 0), machine, w, training, {.steps = 2}));
  const Schedule pieces = must(lower(infinity(w, training, 200'000), machine, w, training, {.steps = 2}));
  std::map<OpKind, int> n = kinds(pieces);
  EXPECT_EQ(n[OpKind::kUploadParams], 2 * 78);
  EXPECT_EQ(n[OpKind::kReadParams], 2 * 78);
  EXPECT_EQ(n[OpKind::kForward], 2 * (4 * 6 + 2));
  EXPECT_EQ(n[OpKind::kRecompute], 2 * 4 * 6);
  EXPECT_EQ(n[OpKind::kBackward], 2 * (4 * 6 + 2));
  EXPECT_EQ(n[OpKind::kOptimizer], kinds(whole)[OpKind::kOptimizer]);
  const Bytes piece(2 * 200'000);
  int64_t h2d = 0;
  double flops_whole = 0, flops_pieces = 0;
  for (const Op& op : pieces.ops) {
    if (op.kind == OpKind::kUploadParams || op.kind == OpKind::kReadParams) {
      EXPECT_LE(op.bytes, piece) << op.name;
    }
    if (op.kind == OpKind::kUploadParams) h2d += op.bytes.count();
    if (op.kind == OpKind::kBackward) {
      for (const MemoryEffect& e : op.allocs) {
        if (e.tensor.starts_with("grad16")) {
          EXPECT_LE(e.bytes, piece) << op.name;
        }
      }
    }
    if (op.lane == Lane::kGpuCompute) flops_pieces += op.flops.count();
  }
  for (const Op& op : whole.ops) {
    if (op.lane == Lane::kGpuCompute) flops_whole += op.flops.count();
  }
  EXPECT_NEAR(flops_pieces, flops_whole, 1e-9 * flops_whole);
  // Blocks three times per step, the embedding and the final norm twice,
  // and the embedding twice more for the tied head.
  const int64_t blocks = 4 * 789'760, ends = w.layers().front().param_count() + w.layers().back().param_count();
  EXPECT_EQ(h2d, 2 * (2 * 3 * blocks + 2 * 2 * ends + 2 * 2 * w.layers().front().param_count()));
  std::array<int64_t, 3> net{};
  for (const Op& op : pieces.ops) {
    for (const MemoryEffect& e : op.allocs) net[static_cast<size_t>(e.tier)] += e.bytes.count();
    for (const MemoryEffect& e : op.frees) net[static_cast<size_t>(e.tier)] -= e.bytes.count();
  }
  EXPECT_EQ(net, (std::array<int64_t, 3>{}));
}

// A gather size that holds every layer lowers exactly the whole-layer schedule.
TEST(GatherPieces, AGatherSizeThatHoldsEveryLayerChangesNothing) {
  const MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const TrainingSpec training = must(bundled().training("default"));
  const Workload w = tiny();
  const Schedule whole = must(lower(infinity(w, training, 0), machine, w, training));
  const Schedule same = must(lower(infinity(w, training, w.largest_layer_params()), machine, w, training));
  ASSERT_EQ(whole.ops.size(), same.ops.size());
  for (size_t i = 0; i < whole.ops.size(); ++i) {
    EXPECT_EQ(whole.ops[i].name, same.ops[i].name);
    EXPECT_EQ(whole.ops[i].bytes, same.ops[i].bytes);
    EXPECT_EQ(whole.ops[i].deps, same.ops[i].deps);
  }
}

}  // namespace
}  // namespace stowage::core
