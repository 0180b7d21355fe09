// Properties of the layer API the executor relies on: causality,
// recompute for checkpointing, determinism, accumulation, initialisation
// and size checks.
#include "executor/model/gpt_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "executor/model/rng.h"
#include "tests/executor/model/whole_model.h"

namespace stowage::executor::model {
namespace {

TokenBatch random_batch(uint64_t seed) {
  SplitMix64 rng(seed);
  TokenBatch b{.batch = 2, .seq = 8};
  for (int i = 0; i < 16; ++i) {
    b.inputs.push_back(static_cast<int32_t>(rng.below(32)));
    b.targets.push_back(static_cast<int32_t>(rng.below(32)));
  }
  return b;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Changing the input token at position 5 of sequence 0 leaves every layer's
// output and the next-token probabilities at positions 0..4 of that
// sequence, and all of sequence 1, unchanged to the bit (masked scores
// contribute exact zeros), and changes position 5 itself.
TEST(GptModel, ChangingTokenTLeavesEarlierPositionsUntouched) {
  const core::Workload w(testing::small_spec(), 8);
  testing::WholeModel whole(w, 3);
  TokenBatch batch = random_batch(4);
  whole.forward(batch);
  const std::vector<float> probs_before(whole.final_saved().probs.begin(), whole.final_saved().probs.end());
  const std::vector<float> last_before = whole.output(2);
  batch.inputs[5] = (batch.inputs[5] + 1) % 32;
  whole.forward(batch);
  const std::span<const float> probs_after = whole.final_saved().probs;
  const std::vector<float>& last_after = whole.output(2);
  const size_t v = 32;
  const size_t d = 16;
  for (size_t pos = 0; pos < 16; ++pos) {
    const bool may_change = pos >= 5 && pos < 8;  // sequence 0, positions 5..7
    const bool probs_same = std::memcmp(&probs_before[pos * v], &probs_after[pos * v], v * sizeof(float)) == 0;
    const bool out_same = std::memcmp(&last_before[pos * d], &last_after[pos * d], d * sizeof(float)) == 0;
    if (!may_change) {
      EXPECT_TRUE(probs_same) << "position " << pos;
      EXPECT_TRUE(out_same) << "position " << pos;
    }
  }
  EXPECT_NE(std::memcmp(&probs_before[5 * v], &probs_after[5 * v], v * sizeof(float)), 0);
}

// Checkpointing: forward again from the block's input rebuilds its saved
// state bit for bit, and backward from it gives the same gradients.
TEST(GptModel, BlockForwardRecomputesSavedStateBitForBit) {
  const core::Workload w(testing::small_spec(), 8);
  testing::WholeModel whole(w, 5);
  const TokenBatch batch = random_batch(6);
  whole.forward(batch);
  const GptModel& m = whole.model();
  const MicroBatch mb{.batch = 2, .seq = 8};
  const std::vector<float>& in = whole.output(0);
  std::vector<float> out_a(in.size());
  std::vector<float> out_b(in.size());
  BlockSaved a;
  BlockSaved b;
  m.block_forward(whole.params()[1], in, mb, a, out_a);
  std::vector<float> scratch(in.size());
  m.block_forward(whole.params()[1], out_a, mb, b, scratch);  // b used for another input in between
  m.block_forward(whole.params()[1], in, mb, b, out_b);
  EXPECT_TRUE(same_bits(out_a, out_b));
  for (auto field : {&BlockSaved::attn_norm_mean, &BlockSaved::attn_norm_rstd, &BlockSaved::attn_norm_out,
                     &BlockSaved::q, &BlockSaved::k, &BlockSaved::v, &BlockSaved::probs, &BlockSaved::attn_out,
                     &BlockSaved::mid, &BlockSaved::mlp_norm_mean, &BlockSaved::mlp_norm_rstd,
                     &BlockSaved::mlp_norm_out, &BlockSaved::hidden_pre, &BlockSaved::hidden}) {
    EXPECT_TRUE(same_bits(a.*field, b.*field));
  }
  std::vector<float> d_out(in.size(), 0.25f);
  std::vector<float> d_in_a(in.size());
  std::vector<float> d_in_b(in.size());
  std::vector<float> d_params_a(whole.params()[1].size(), 0.0f);
  std::vector<float> d_params_b(d_params_a.size(), 0.0f);
  m.block_backward(whole.params()[1], in, a, d_out, d_in_a, d_params_a);
  m.block_backward(whole.params()[1], in, b, d_out, d_in_b, d_params_b);
  EXPECT_TRUE(same_bits(d_in_a, d_in_b));
  EXPECT_TRUE(same_bits(d_params_a, d_params_b));
}

// Parameter gradients add up over micro-steps: a second backward pass
// adds the same again. Not bit-exact 2x: sgemm with beta = 1 folds the
// buffer's old value into its blocked sums, and the token embedding gets
// the head's and the lookup's shares in turn, so rounding differs in the
// last bits of sums that cancel. Allowed: 1e-5 of the layer's largest
// gradient; "written, not added" would be off by 100% of each.
TEST(GptModel, ParameterGradientsAccumulate) {
  const core::Workload w(testing::small_spec(), 8);
  testing::WholeModel whole(w, 8);
  const TokenBatch batch = random_batch(9);
  whole.forward(batch);
  whole.backward(batch, 1.0f);
  const std::vector<std::vector<float>> once = whole.grads();
  whole.backward(batch, 1.0f);
  for (size_t l = 0; l < once.size(); ++l) {
    float largest = 0.0f;
    for (float g : once[l]) largest = std::max(largest, std::abs(g));
    for (size_t i = 0; i < once[l].size(); ++i) {
      ASSERT_NEAR(whole.grads()[l][i], 2.0f * once[l][i], 1e-5 * largest) << l << ", " << i;
    }
  }
}

TEST(GptModel, SameSeedSameParametersAndLossToTheBit) {
  const core::Workload w(testing::small_spec(), 8);
  testing::WholeModel a(w, 11);
  testing::WholeModel b(w, 11);
  testing::WholeModel c(w, 12);
  const TokenBatch batch = random_batch(13);
  for (size_t l = 0; l < a.params().size(); ++l) EXPECT_TRUE(same_bits(a.params()[l], b.params()[l]));
  const float la = a.forward(batch);
  EXPECT_EQ(la, b.forward(batch));
  EXPECT_NE(la, c.forward(batch));
  // At init every logit is near 0: the loss is near ln(vocab) = ln 32 = 3.466.
  EXPECT_NEAR(la, std::log(32.0), 0.05);
}

// GPT-2 init: token embedding std 0.02, residual projections 0.02 /
// sqrt(2 * layers) = 0.01 for 2 blocks, norms 1 and 0.
TEST(GptModel, InitFollowsGpt2) {
  const core::Workload w(core::ModelSpec{.name = "init", .d_model = 64, .layers = 2, .heads = 4, .kv_heads = 4,
                                         .head_dim = 16, .ffn = 256, .vocab = 256, .max_positions = 16},
                         16);
  const GptModel m = testing::must_create(w);
  std::vector<float> block(static_cast<size_t>(m.layer_param_count(1)));
  m.init_parameters(1, block, 1);
  const std::vector<TensorSlot> slots = layer_slots(core::LayerKind::kBlock, m.shape());
  auto stddev = [&](const char* leaf) {
    for (const TensorSlot& s : slots) {
      if (s.leaf != leaf) continue;
      double sum = 0.0;
      for (int64_t i = 0; i < s.elements(); ++i) sum += std::pow(block[static_cast<size_t>(s.offset + i)], 2);
      return std::sqrt(sum / static_cast<double>(s.elements()));
    }
    return -1.0;
  };
  EXPECT_NEAR(stddev("attn.q_proj.weight"), 0.02, 0.001);  // 4096 samples: ~1% standard error
  EXPECT_NEAR(stddev("mlp.down_proj.weight"), 0.01, 0.0005);
  EXPECT_EQ(stddev("attn.q_proj.bias"), 0.0);
  EXPECT_EQ(block[static_cast<size_t>(offset_of(slots, "mlp_norm.weight"))], 1.0f);
  std::vector<float> again(block.size());
  m.init_parameters(1, again, 1);
  EXPECT_TRUE(same_bits(block, again));
  m.init_parameters(2, again, 1);
  EXPECT_FALSE(same_bits(block, again));  // each layer has its own stream
}

TEST(GptModel, WrongSizesAndTokensThrow) {
  const core::Workload w(testing::small_spec(), 8);
  const GptModel m = testing::must_create(w);
  std::vector<float> params(static_cast<size_t>(m.layer_param_count(0)));
  std::vector<float> out(16 * 16);
  std::vector<int32_t> tokens(16, 0);
  EXPECT_THROW(m.embedding_forward(params, tokens, {.batch = 2, .seq = 9}, out), std::invalid_argument);
  EXPECT_THROW(m.embedding_forward(std::span(params).first(10), tokens, {.batch = 2, .seq = 8}, out),
               std::invalid_argument);
  tokens[3] = 32;
  EXPECT_THROW(m.embedding_forward(params, tokens, {.batch = 2, .seq = 8}, out), std::out_of_range);
  EXPECT_THROW((void)m.layer_param_count(4), std::out_of_range);
}

}  // namespace
}  // namespace stowage::executor::model
