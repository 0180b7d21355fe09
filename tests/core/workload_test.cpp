#include "core/workload.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/core/test_profiles.h"

namespace stowage::core {
namespace {

using testing::bundled;
using testing::must;

// Closed-form parameter counts per family, written independently of the
// tensor-by-tensor expansion (formulas from ../shared/reference B8):
//   GPT-2:  Vd + Pd + L(12d^2 + 13d) + 2d
//   BLOOM:  Vd + 2d + L(12d^2 + 13d) + 2d
//   OPT:    Vd + (P+2)d + L(4(d^2+d) + 2df + f + d + 4d) + 2d
//   Llama:  2Vd + L(d*h*dh + 2d*kv*dh + h*dh*d + 3df*E + E*d[MoE] + 2d) + d
int64_t closed_form_params(const ModelSpec& m) {
  const int64_t d = m.d_model, L = m.layers, f = m.ffn, V = m.vocab;
  const int64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  if (m.norm == NormKind::kRmsNorm) {
    const int64_t router = m.experts > 1 ? m.experts * d : 0;
    const int64_t block = d * q + 2 * d * kv + q * d + 3 * d * f * m.experts + router + 2 * d;
    return (m.tied_embeddings ? 1 : 2) * V * d + L * block + d;
  }
  if (m.mlp == MlpKind::kRelu) {  // OPT
    const int64_t block = 4 * (d * d + d) + 2 * d * f + f + d + 4 * d;
    return V * d + (m.max_positions + m.position_offset) * d + L * block + 2 * d;
  }
  const int64_t block = 4 * d * d + 4 * d + 2 * d * f + f + d + 4 * d;  // = 12d^2+13d when f = 4d
  const int64_t positions = m.position == PositionKind::kLearned ? m.max_positions * d : 0;
  const int64_t embed_norm = m.embedding_norm ? 2 * d : 0;
  return V * d + positions + embed_norm + L * block + 2 * d;
}

TEST(Workload, EveryBundledModelMatchesItsClosedFormCount) {
  const ProfileCatalog catalog = bundled();
  const std::vector<std::string> names = catalog.names(ProfileKind::kModel);
  ASSERT_GE(names.size(), 20u);
  for (const std::string& name : names) {
    const ModelSpec m = must(catalog.model(name));
    const Workload w(m, 2048);
    EXPECT_EQ(w.total_params(), closed_form_params(m)) << name;
  }
}

TEST(Workload, EveryBundledModelIsWithinHalfAPercentOfItsOfficialCount) {
  const ProfileCatalog catalog = bundled();
  int checked = 0;
  for (const std::string& name : catalog.names(ProfileKind::kModel)) {
    const ModelSpec m = must(catalog.model(name));
    if (!m.official_params) continue;  // the tiny test models have none
    const double ours = static_cast<double>(Workload(m, 2048).total_params());
    const double official = static_cast<double>(*m.official_params);
    EXPECT_LE(std::abs(ours - official) / official, 0.005) << name << ": ours " << ours << " official " << official;
    ++checked;
  }
  EXPECT_GE(checked, 21);
}

// GPT-2 and BLOOM have exact published counts; ours must equal them.
TEST(Workload, Gpt2AndBloomCountsAreExact) {
  const ProfileCatalog catalog = bundled();
  EXPECT_EQ(Workload(must(catalog.model("gpt2")), 1024).total_params(), 124'439'808);
  EXPECT_EQ(Workload(must(catalog.model("gpt2-medium")), 1024).total_params(), 354'823'168);
  EXPECT_EQ(Workload(must(catalog.model("gpt2-large")), 1024).total_params(), 774'030'080);
  EXPECT_EQ(Workload(must(catalog.model("gpt2-xl")), 1024).total_params(), 1'557'611'200);
  EXPECT_EQ(Workload(must(catalog.model("bloom-176b")), 2048).total_params(), 176'247'271'424);
}

// Mixtral: 46.7B total, 12.9B active (2 of 8 experts). Active =
// total - 6 idle experts x 32 layers x 3 x 4096 x 14336 = 46,702,792,704 -
// 33,822,867,456 = 12,879,925,248.
TEST(Workload, MixtralActiveParamsCountTwoOfEightExperts) {
  const Workload w(must(bundled().model("mixtral-8x7b")), 4096);
  EXPECT_EQ(w.total_params(), 46'702'792'704);
  EXPECT_EQ(w.active_params(), 12'879'925'248);
  EXPECT_DOUBLE_EQ(w.model_flops_per_token().count(), 6.0 * 12'879'925'248);
}

// A hand-made model small enough to work every figure out by hand:
// d=8, 1 layer, 2 heads (dh=4), ffn 16, vocab 10, 4 learned positions,
// LayerNorm, GELU, biases, tied.
ModelSpec toy() {
  return {.name = "toy", .d_model = 8, .layers = 1, .heads = 2, .kv_heads = 2, .head_dim = 4, .ffn = 16,
          .vocab = 10, .max_positions = 4};
}

TEST(Workload, ToyModelExpandsIntoNamedTensors) {
  const Workload w(toy(), 4);
  ASSERT_EQ(w.layers().size(), 3u);  // embedding, layers.0, final
  const Layer& block = w.layers()[1];
  EXPECT_EQ(block.name, "layers.0");
  // attn_norm w,b; q,k,v,o w,b; mlp_norm w,b; up w,b; down w,b = 16 tensors.
  ASSERT_EQ(block.params.size(), 16u);
  EXPECT_EQ(block.params[2].name, "layers.0.attn.q_proj.weight");
  EXPECT_EQ(block.params[2].shape, (std::vector<int64_t>{8, 8}));
  // 12d^2 + 13d with f = 2d: 4*64+4*8 + 2*8*16+16+8 + 4*8 = 288+280+32 = 600.
  EXPECT_EQ(block.param_count(), 600);
  // Embedding 10*8 + 4*8 = 112; final norm 16 (tied head): total 728.
  EXPECT_EQ(w.total_params(), 728);
}

TEST(Workload, ToyModelFlopsPerToken) {
  const Workload w(toy(), 4);
  // Block matrices: 4*64 + 2*128 = 512 weights -> 1024 FLOPs; attention
  // 4 * s * h * dh = 4*4*2*4 = 128. LM head: 2*10*8 = 160. Total 1312.
  EXPECT_DOUBLE_EQ(w.forward_flops_per_token().count(), 1312.0);
  EXPECT_DOUBLE_EQ(w.backward_flops_per_token().count(), 2624.0);
}

TEST(Workload, ToyModelActivationBytes) {
  const Workload w(toy(), 4);
  // Block per token: attention 2d+2d + 2(q + 2kv) + 2q + 4h = 16+16+48+16+8 = 104;
  // MLP 2d+2d + 2*2*f = 32+64 = 96. Total 200 B.
  EXPECT_EQ(w.layers()[1].activation_bytes_per_token, Bytes(200));
  // Final: 4d + 6V = 32 + 60 = 92 B per token.
  EXPECT_EQ(w.layers()[2].activation_bytes_per_token, Bytes(92));
  // 3 tokens, no checkpointing: 3 * (200 + 92) = 876.
  EXPECT_EQ(w.activation_bytes(3, false), Bytes(876));
  // Checkpointing keeps the block input (2d = 16) and recomputes one block:
  // 3 * (16 + 92 + 200) = 924; with one layer it saves nothing, as expected.
  EXPECT_EQ(w.activation_bytes(3, true), Bytes(924));
}

// Llama-2-13B (d 5120, f 13824, 40 heads, V 32000), per token:
// block = 16d + 4h + 6f = 81,920 + 160 + 82,944 = 165,024 B;
// final = 4d + 6V = 20,480 + 192,000 = 212,480 B.
// Without checkpointing: 40 x 165,024 + 212,480 = 6,813,440 B/token.
// With: 40 x 2d + one block + final = 409,600 + 165,024 + 212,480 = 787,104.
TEST(Workload, CheckpointingKeepsOnlyBlockInputsOnLlama2_13b) {
  const Workload w(must(bundled().model("llama-2-13b")), 4096);
  EXPECT_EQ(w.activation_bytes(4096, false), Bytes(int64_t{6'813'440} * 4096));
  EXPECT_EQ(w.activation_bytes(4096, true), Bytes(int64_t{787'104} * 4096));
}

TEST(Workload, TensorsCarryClassAndDtype) {
  const Workload w(toy(), 4);
  const std::vector<Tensor> tensors = w.tensors_of(w.layers()[1], Precision::kBf16);
  // 16 weights x 5 classes + one activation aggregate.
  ASSERT_EQ(tensors.size(), 81u);
  EXPECT_EQ(tensors.front().tensor_class, TensorClass::kParam16);
  EXPECT_EQ(tensors.front().dtype, DType::kBf16);
  EXPECT_EQ(tensors[16 * 2].tensor_class, TensorClass::kMaster32);
  EXPECT_EQ(tensors[16 * 2].dtype, DType::kFp32);
  EXPECT_EQ(tensors.back().tensor_class, TensorClass::kActivation);
}

// Hugging Face holds a Mixtral layer's 8 experts as one module
// (MixtralExperts), which DeepSpeed's estimator gathers at once: 8 x 3 x
// 14336 x 4096 = 1,409,286,144 parameters, far above the embedding's
// 32000 x 4096 = 131,072,000 (the figure before experts were one module).
TEST(Workload, LargestModuleIsALayersExpertsForMixtral) {
  const Workload w(must(bundled().model("mixtral-8x7b")), 4096);
  EXPECT_EQ(w.largest_module_params(), int64_t{8} * 3 * 14336 * 4096);
}

TEST(Workload, LargestModuleIsTheEmbeddingForLlama2) {
  const Workload w(must(bundled().model("llama-2-13b")), 4096);
  EXPECT_EQ(w.largest_module_params(), 32000 * 5120);  // embed_tokens (= lm_head)
  // A block: 4 * 5120^2 + 3 * 5120 * 13824 + 2 * 5120 = 104,857,600 +
  // 212,336,640 + 10,240 = 317,204,480.
  EXPECT_EQ(w.largest_layer_params(), 317'204'480);
}

}  // namespace
}  // namespace stowage::core
