// The model's layers hold exactly the parameters core::Workload lists, and
// models the executor cannot train are refused with every reason.
#include "executor/model/model_shape.h"

#include <gtest/gtest.h>

#include "executor/model/gpt_model.h"
#include "tests/core/test_profiles.h"
#include "tests/executor/model/whole_model.h"

namespace stowage::executor::model {
namespace {

using core::testing::bundled;
using core::testing::must;

void expect_counts_match(const core::Workload& w) {
  const GptModel m = testing::must_create(w);
  ASSERT_EQ(m.layer_count(), static_cast<int>(w.layers().size()));
  for (int l = 0; l < m.layer_count(); ++l) {
    EXPECT_EQ(m.layer_param_count(l), w.layers()[static_cast<size_t>(l)].param_count()) << "layer " << l;
    EXPECT_EQ(m.layer_kind(l), w.layers()[static_cast<size_t>(l)].kind) << "layer " << l;
  }
}

TEST(ModelShape, TinyGptLayersMatchTheWorkload) {
  const core::Workload w(must(bundled().model("tiny-gpt")), 256);
  expect_counts_match(w);
  const GptModel m = testing::must_create(w);
  // d = 256, vocab 256, 256 positions: embedding 256*256 + 256*256;
  // block 12 d^2 + 13 d (ffn 4d, biases) = 786432 + 3328; final norm 2d.
  EXPECT_EQ(m.layer_param_count(0), 131072);
  EXPECT_EQ(m.layer_param_count(1), 789760);
  EXPECT_EQ(m.layer_param_count(5), 512);
}

TEST(ModelShape, Gpt2SmallLayersMatchTheWorkloadAndTheOfficialCount) {
  const core::Workload w(must(bundled().model("gpt2")), 1024);
  expect_counts_match(w);
  const GptModel m = testing::must_create(w);
  int64_t total = 0;
  for (int l = 0; l < m.layer_count(); ++l) total += m.layer_param_count(l);
  // 50257*768 + 1024*768 + 12 * (12*768^2 + 13*768) + 2*768: GPT-2's 124M.
  EXPECT_EQ(total, 124439808);
}

TEST(ModelShape, SmallSpecWithWiderAttentionThanResidual) {
  core::ModelSpec s = testing::small_spec();
  s.head_dim = 12;  // attention width 24 != d_model 16: q/k/v [24, 16], o [16, 24]
  expect_counts_match(core::Workload(s, 8));
}

TEST(ModelShape, BlockSlotsAreContiguousInWorkloadOrder) {
  const ModelShape s = *model_shape_of(core::Workload(testing::small_spec(), 8));
  const std::vector<TensorSlot> slots = layer_slots(core::LayerKind::kBlock, s);
  ASSERT_EQ(slots.size(), 16u);
  EXPECT_EQ(slots[2].leaf, "attn.q_proj.weight");
  EXPECT_EQ(slots[2].offset, 32);  // after attn_norm weight and bias, 16 each
  EXPECT_EQ(offset_of(slots, "mlp.down_proj.bias"), 3280 - 16);
}

TEST(ModelShape, LlamaIsRefusedWithEveryReason) {
  const core::Workload w(must(bundled().model("llama-3-8b")), 128);
  const core::Result<GptModel> m = GptModel::create(w);
  ASSERT_FALSE(m);
  const std::string text = core::to_string(m.error());
  for (const char* reason : {"rmsnorm", "swiglu", "rope", "biases false", "kv_heads 8 != heads 32"}) {
    EXPECT_NE(text.find(reason), std::string::npos) << reason << " missing from:\n" << text;
  }
  EXPECT_NE(text.find("the executor trains GPT-2-style models"), std::string::npos);
}

TEST(ModelShape, MixtureOfExpertsAndReluAreRefused) {
  const core::Result<GptModel> mixtral = GptModel::create(core::Workload(must(bundled().model("mixtral-8x7b")), 16));
  ASSERT_FALSE(mixtral);
  EXPECT_NE(core::to_string(mixtral.error()).find("mixture of experts (8 experts)"), std::string::npos);
  const core::Result<GptModel> opt = GptModel::create(core::Workload(must(bundled().model("opt-1.3b")), 16));
  ASSERT_FALSE(opt);
  EXPECT_NE(core::to_string(opt.error()).find("mlp relu"), std::string::npos);
}

TEST(ModelShape, SequenceLongerThanThePositionTableIsRefused) {
  const core::Result<GptModel> m = GptModel::create(core::Workload(testing::small_spec(), 9));
  ASSERT_FALSE(m);
  EXPECT_NE(core::to_string(m.error()).find("sequence length 9"), std::string::npos);
}

}  // namespace
}  // namespace stowage::executor::model
