// The Llama's layers hold exactly the parameters core::Workload lists for
// the tiny-llama profile; grouped-query attention is multi-head attention
// with repeated kv heads; RoPE makes attention scores depend on relative
// positions only; recompute gives the same bits; non-Llama models are
// refused with their reasons.
#include "executor/model/llama_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "executor/model/causal_attention.h"
#include "executor/model/rotary.h"
#include "tests/core/test_profiles.h"
#include "tests/executor/model/finite_difference.h"
#include "tests/executor/model/llama_whole_model.h"

namespace stowage::executor::model {
namespace {

using core::testing::bundled;
using core::testing::must;
using testing::normals;
using testing::random_tokens;

TEST(LlamaModel, TinyLlamaLayersMatchTheWorkload) {
  const core::Workload w(must(bundled().model("tiny-llama")), 256);
  const LlamaModel m = testing::must_create_llama(w);
  ASSERT_EQ(m.layer_count(), static_cast<int>(w.layers().size()));
  for (int l = 0; l < m.layer_count(); ++l) {
    EXPECT_EQ(m.layer_param_count(l), w.layers()[static_cast<size_t>(l)].param_count()) << "layer " << l;
    EXPECT_EQ(m.layer_kind(l), w.layers()[static_cast<size_t>(l)].kind) << "layer " << l;
  }
  // d 192, 6 heads and 2 kv heads of 32, ffn 512, vocab 256:
  // embedding 256*192; block 2*192 (norms) + 2*192^2 (q, o) + 2*64*192 (k, v)
  // + 3*512*192 (gate, up, down) = 393600; final 192 + 256*192 (lm_head).
  EXPECT_EQ(m.layer_param_count(0), 49152);
  EXPECT_EQ(m.layer_param_count(1), 393600);
  EXPECT_EQ(m.layer_param_count(5), 49344);
  EXPECT_EQ(m.shape().kv_heads, 2);
  EXPECT_EQ(m.shape().rope_theta, 10000.0);
}

// Query head h reads kv head h / 2 with 4 heads over 2 kv heads, so the
// grouped result equals plain attention on k and v with each kv head
// copied next to itself.
TEST(LlamaModel, GroupedQueryAttentionIsMultiHeadAttentionWithRepeatedKvHeads) {
  const AttentionShape gqa{.batch = 1, .seq = 5, .heads = 4, .head_dim = 3, .kv_heads = 2};
  const AttentionShape mha{.batch = 1, .seq = 5, .heads = 4, .head_dim = 3, .kv_heads = 4};
  const std::vector<float> q = normals(5 * 12, 1, 1.0), k = normals(5 * 6, 2, 1.0),
                           v = normals(5 * 6, 3, 1.0);
  std::vector<float> k4(5 * 12), v4(5 * 12);
  for (int t = 0; t < 5; ++t) {
    for (int h = 0; h < 4; ++h) {
      for (int c = 0; c < 3; ++c) {
        k4[static_cast<size_t>(t * 12 + h * 3 + c)] = k[static_cast<size_t>(t * 6 + (h / 2) * 3 + c)];
        v4[static_cast<size_t>(t * 12 + h * 3 + c)] = v[static_cast<size_t>(t * 6 + (h / 2) * 3 + c)];
      }
    }
  }
  std::vector<float> p(4 * 25), y(5 * 12), p4(4 * 25), y4(5 * 12);
  causal_attention_forward(q.data(), k.data(), v.data(), p.data(), y.data(), gqa);
  causal_attention_forward(q.data(), k4.data(), v4.data(), p4.data(), y4.data(), mha);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], y4[i]) << i;
}

// RoFormer §3.4.2: <R(m) q, R(n) k> depends on m - n only. The same q and k
// placed at positions (3, 1) and (6, 4) give the same score up to float
// rounding of the angles (~1e-6 relative).
TEST(LlamaModel, RotaryScoresDependOnRelativePositionOnly) {
  const RotaryTable rope(8, 8, 10000.0);
  const std::vector<float> q = normals(8, 4, 1.0), k = normals(8, 5, 1.0);
  auto score = [&](int64_t m, int64_t n) {
    std::vector<float> qs(64, 0.0f), ks(64, 0.0f);  // one sequence of 8 tokens, one head
    std::copy(q.begin(), q.end(), qs.begin() + m * 8);
    std::copy(k.begin(), k.end(), ks.begin() + n * 8);
    rope.rotate(qs.data(), 1, 8, 1);
    rope.rotate(ks.data(), 1, 8, 1);
    double s = 0;
    for (int i = 0; i < 8; ++i)
      s += static_cast<double>(qs[static_cast<size_t>(m * 8 + i)]) * ks[static_cast<size_t>(n * 8 + i)];
    return s;
  };
  EXPECT_NEAR(score(3, 1), score(6, 4), 1e-5);
  EXPECT_GT(std::abs(score(3, 1) - score(3, 2)), 1e-3);  // and it does depend on the distance
}

TEST(LlamaModel, ForwardAgainRebuildsTheSavedStateBitForBit) {
  const core::Workload w(testing::small_llama_spec(), 8);
  const LlamaModel m = testing::must_create_llama(w);
  std::vector<float> params(static_cast<size_t>(m.layer_param_count(1)));
  m.init_parameters(1, params, 6);
  const std::vector<float> in = normals(16 * 16, 7, 1.0);
  std::vector<float> out1(in.size()), out2(in.size());
  LlamaBlockSaved a, b;
  m.block_forward(params, in, {.batch = 2, .seq = 8}, a, out1);
  m.block_forward(params, in, {.batch = 2, .seq = 8}, b, out2);
  EXPECT_EQ(out1, out2);
  EXPECT_TRUE(std::ranges::equal(a.probs, b.probs));
  EXPECT_TRUE(std::ranges::equal(a.hidden, b.hidden));
}

TEST(LlamaModel, AnUntrainedModelPredictsNearlyUniformly) {
  const core::Workload w(testing::small_llama_spec(), 8);
  testing::LlamaWholeModel whole(w, 8);
  const TokenBatch batch{
      .batch = 2, .seq = 8, .inputs = random_tokens(16, 9, 32), .targets = random_tokens(16, 10, 32)};
  // The final RMSNorm gives rows of unit RMS, so a N(0, 0.02) head gives
  // logits of std 0.02 * sqrt(16) = 0.08: the loss is ln(32) = 3.466 nats
  // give or take a few hundredths (measured 3.449).
  EXPECT_NEAR(whole.forward(batch), std::log(32.0), 0.05);
}

TEST(LlamaModel, GptStyleModelsAreRefusedWithEveryReason) {
  const core::Result<LlamaModel> m =
      LlamaModel::create(core::Workload(must(bundled().model("tiny-gpt")), 16));
  ASSERT_FALSE(m);
  const std::string text = core::to_string(m.error());
  for (const char* reason :
       {"norm layernorm", "mlp gelu", "position learned", "biases true", "tied_embeddings true"}) {
    EXPECT_NE(text.find(reason), std::string::npos) << reason << " missing from:\n" << text;
  }
  EXPECT_NE(text.find("the executor trains Llama-style models"), std::string::npos);
}

TEST(LlamaModel, MixtralIsRefusedForItsExperts) {
  const core::Result<LlamaModel> m =
      LlamaModel::create(core::Workload(must(bundled().model("mixtral-8x7b")), 16));
  ASSERT_FALSE(m);
  EXPECT_NE(core::to_string(m.error()).find("mixture of experts (8 experts)"), std::string::npos);
}

}  // namespace
}  // namespace stowage::executor::model
