// What both decoders share (decoder_layers.h, next_token_head.h), checked
// on each: their layers are the workload's for every bundled model they
// accept, and sum to the tensors their own layouts place; every call checks
// its micro-batch, token ids and layer index; a BLAS thread count below one
// is refused as a diagnostic. And the head's loss and gradients on a case
// worked by hand.
#include "executor/model/decoder_layers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <stdexcept>
#include <vector>

#include "executor/model/gpt_model.h"
#include "executor/model/llama_model.h"
#include "executor/model/next_token_head.h"
#include "tests/core/test_profiles.h"
#include "tests/executor/model/finite_difference.h"
#include "tests/executor/model/llama_whole_model.h"
#include "tests/executor/model/whole_model.h"

namespace stowage::executor::model {
namespace {

using core::testing::bundled;
using testing::normals;

// What the typed tests need of each model beyond DecoderLayers.
template <class Model>
struct Decoder;
template <>
struct Decoder<GptModel> {
  static core::ModelSpec small() { return testing::small_spec(); }
  static std::vector<TensorSlot> slots(const GptModel& m, core::LayerKind kind) {
    return layer_slots(kind, m.shape());
  }
  static float final_forward(const GptModel& m, std::span<const float> params,
                             std::span<const float> embedding, std::span<const float> in,
                             std::span<const int32_t> targets, MicroBatch mb) {
    FinalSaved saved;
    return m.final_forward(params, m.token_embedding(embedding), in, targets, mb, saved);
  }
};
template <>
struct Decoder<LlamaModel> {
  static core::ModelSpec small() { return testing::small_llama_spec(); }
  static std::vector<TensorSlot> slots(const LlamaModel& m, core::LayerKind kind) {
    return llama_layer_slots(kind, m.shape());
  }
  static float final_forward(const LlamaModel& m, std::span<const float> params, std::span<const float>,
                             std::span<const float> in, std::span<const int32_t> targets, MicroBatch mb) {
    LlamaFinalSaved saved;
    return m.final_forward(params, in, targets, mb, saved);
  }
};

template <class Model>
class DecoderLayersTest : public ::testing::Test {};
using Decoders = ::testing::Types<GptModel, LlamaModel>;
TYPED_TEST_SUITE(DecoderLayersTest, Decoders);

TYPED_TEST(DecoderLayersTest, LayersAreTheWorkloadsForEveryBundledModelTheyAccept) {
  int accepted = 0;
  for (const std::string& name : bundled().names(core::ProfileKind::kModel)) {
    const core::Workload w(core::testing::must(bundled().model(name)), 8);
    core::Result<TypeParam> m = TypeParam::create(w);
    if (!m) continue;
    ++accepted;
    ASSERT_EQ(m->layer_count(), static_cast<int>(w.layers().size())) << name;
    for (int l = 0; l < m->layer_count(); ++l) {
      const core::Layer& layer = w.layers()[static_cast<size_t>(l)];
      EXPECT_EQ(m->layer_kind(l), layer.kind) << name << " layer " << l;
      EXPECT_EQ(m->layer_param_count(l), layer.param_count()) << name << " layer " << l;
      const std::vector<TensorSlot> slots = Decoder<TypeParam>::slots(*m, layer.kind);
      EXPECT_EQ(slots.back().offset + slots.back().elements(), layer.param_count()) << name << " layer " << l;
    }
  }
  // tiny-gpt and the GPT-2s; tiny-llama and the Llamas and Mistral.
  EXPECT_GE(accepted, 2);
}

TYPED_TEST(DecoderLayersTest, EveryCallChecksItsMicroBatchTokensAndLayer) {
  const core::Workload w(Decoder<TypeParam>::small(), 8);
  const TypeParam m = core::testing::must(TypeParam::create(w));
  const int last = m.layer_count() - 1;
  EXPECT_THROW((void)m.layer_param_count(-1), std::out_of_range);
  EXPECT_THROW((void)m.layer_kind(last + 1), std::out_of_range);

  std::vector<float> embedding(static_cast<size_t>(m.layer_param_count(0)));
  std::vector<float> out(16 * 16);
  std::vector<int32_t> tokens(16, 0);
  const MicroBatch mb{.batch = 2, .seq = 8};
  EXPECT_NO_THROW(m.embedding_forward(embedding, tokens, mb, out));
  EXPECT_THROW(m.embedding_forward(embedding, tokens, {.batch = 2, .seq = 9}, out), std::invalid_argument);
  EXPECT_THROW(m.embedding_forward(embedding, tokens, {.batch = 0, .seq = 8}, out), std::invalid_argument);
  EXPECT_THROW(m.embedding_forward(embedding, std::span(tokens).first(15), mb, out), std::invalid_argument);
  tokens[5] = 32;  // = vocab
  EXPECT_THROW(m.embedding_forward(embedding, tokens, mb, out), std::out_of_range);
  tokens[5] = -1;
  EXPECT_THROW(m.embedding_backward(tokens, mb, out, embedding), std::out_of_range);

  std::vector<float> final_params(static_cast<size_t>(m.layer_param_count(last)), 1.0f);
  std::vector<int32_t> targets(16, 31);
  EXPECT_NO_THROW((void)Decoder<TypeParam>::final_forward(m, final_params, embedding, out, targets, mb));
  targets[0] = 32;
  EXPECT_THROW((void)Decoder<TypeParam>::final_forward(m, final_params, embedding, out, targets, mb),
               std::out_of_range);
}

TYPED_TEST(DecoderLayersTest, BlasThreadsBelowOneAreRefused) {
  const core::Workload w(Decoder<TypeParam>::small(), 8);
  core::Result<TypeParam> m = TypeParam::create(w, {.blas_threads = 0});
  ASSERT_FALSE(m);
  EXPECT_EQ(core::to_string(m.error()), "blas_threads 0 (at least 1)");
  EXPECT_TRUE(TypeParam::create(w, {.blas_threads = 1}));
}

// A zero head makes every logit 0: the softmax is uniform, the loss is
// ln(vocab) and nothing flows back to the normed input. The head's
// gradient row v is sum_t (1/vocab - [target_t = v]) normed_t, times
// loss_scale / tokens.
TEST(NextTokenHead, UniformLogitsGiveLnVocabAndTheHandWorkedGradient) {
  const HeadShape s{.tokens = 3, .d_model = 2, .vocab = 4};
  const std::vector<float> normed = {1.0f, 2.0f, -1.0f, 0.5f, 0.0f, 3.0f};
  const std::vector<float> head(8, 0.0f);
  const std::vector<int32_t> targets = {0, 2, 2};
  std::vector<float> probs(12);
  EXPECT_NEAR(next_token_head_forward(normed.data(), head.data(), targets.data(), probs.data(), s),
              std::log(4.0), 1e-6);
  for (float p : probs) EXPECT_FLOAT_EQ(p, 0.25f);
  std::vector<float> d_normed(6, 0.0f);
  std::vector<float> d_head(8, 1.0f);  // added to
  next_token_head_backward(normed.data(), head.data(), targets.data(), probs.data(), 6.0f, d_normed.data(),
                           d_head.data(), s);
  for (float d : d_normed) EXPECT_EQ(d, 0.0f);
  // loss_scale / tokens = 2; sum of normed rows = (0, 5.5).
  const std::vector<float> want = {1 + 2 * (0.25f * 0.0f - 1.0f),
                                   1 + 2 * (0.25f * 5.5f - 2.0f),  // v 0: token 0's row
                                   1 + 2 * (0.25f * 0.0f),
                                   1 + 2 * (0.25f * 5.5f),  // v 1: no token
                                   1 + 2 * (0.25f * 0.0f - (-1.0f + 0.0f)),
                                   1 + 2 * (0.25f * 5.5f - 3.5f),  // v 2: tokens 1 and 2
                                   1 + 2 * (0.25f * 0.0f),
                                   1 + 2 * (0.25f * 5.5f)};  // v 3
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(d_head[i], want[i], 1e-6) << i;
}

}  // namespace
}  // namespace stowage::executor::model
