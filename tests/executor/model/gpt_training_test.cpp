// The model learns: a few hundred thousand parameters trained with the
// executor's own CPU Adam on generated text get the training and held-out
// loss clearly below the unigram entropy of the bytes, the loss of the best
// model that ignores context. And the same seeds give the same losses, bit
// for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "executor/cpu_adam.h"
#include "executor/model/byte_corpus.h"
#include "executor/model/synthetic_text.h"
#include "tests/executor/model/whole_model.h"

namespace stowage::executor::model {
namespace {

// d_model 64, 2 blocks of 4 heads, ffn 256, bytes as tokens: 118,528
// parameters, ~0.4 GFLOP a step at 8 x 64 tokens (6 N per token plus the
// head): a few seconds for the whole run on one core.
core::ModelSpec byte_model() {
  return {.name = "byte-test", .d_model = 64, .layers = 2, .heads = 4, .kv_heads = 4, .head_dim = 16, .ffn = 256,
          .vocab = 256, .max_positions = 64};
}

constexpr int64_t kBatch = 8;
constexpr int64_t kSeq = 64;

const ByteCorpus& corpus() {
  static const ByteCorpus c = [] {
    core::Result<ByteCorpus> r =
        ByteCorpus::from_text(synthetic_text({.seed = 1, .bytes = 1 << 20}), "synthetic", {.seq = kSeq});
    if (!r) throw std::runtime_error(core::to_string(r.error()));
    return std::move(*r);
  }();
  return c;
}

// Trains `steps` steps from init seed 1 with AdamW (lr 3e-3, no decay);
// returns the training loss of each step.
std::vector<float> train(testing::WholeModel& whole, int steps) {
  std::vector<std::vector<float>> m;
  std::vector<std::vector<float>> v;
  std::vector<std::vector<uint16_t>> param16;
  for (const auto& p : whole.params()) {
    m.emplace_back(p.size(), 0.0f);
    v.emplace_back(p.size(), 0.0f);
    param16.emplace_back(p.size());
  }
  const AdamHyper hyper{.config = {.learning_rate = 3e-3}};
  std::vector<float> losses;
  for (int step = 1; step <= steps; ++step) {
    const TokenBatch batch = corpus().sample(CorpusPart::kTrain, 1, step, kBatch, kSeq);
    whole.zero_grads();
    losses.push_back(whole.forward(batch));
    whole.backward(batch, 1.0f);
    for (size_t l = 0; l < whole.params().size(); ++l) {
      adam_step(whole.params()[l], whole.grads()[l], m[l], v[l], param16[l], core::Precision::kBf16, hyper, step,
                1.0f, {});
    }
  }
  return losses;
}

TEST(GptTraining, LossFallsWellBelowTheUnigramEntropy) {
  const core::Workload w(byte_model(), kSeq);
  testing::WholeModel whole(w, 1);
  const std::vector<float> losses = train(whole, 150);
  double last = 0.0;
  for (size_t i = losses.size() - 10; i < losses.size(); ++i) last += losses[i] / 10.0;
  double held_out = 0.0;
  for (int i = 0; i < 4; ++i) held_out += whole.forward(corpus().sample(CorpusPart::kHeldOut, 2, i, kBatch, kSeq)) / 4.0;
  const double entropy = corpus().train_unigram_entropy();
  RecordProperty("unigram_entropy_nats", std::to_string(entropy));
  RecordProperty("first_loss", std::to_string(losses.front()));
  RecordProperty("last10_train_loss", std::to_string(last));
  RecordProperty("held_out_loss", std::to_string(held_out));
  // At init the loss is ln 256 = 5.545 (uniform over bytes).
  EXPECT_NEAR(losses.front(), std::log(256.0), 0.05);
  EXPECT_LT(last, entropy - 0.5) << "unigram entropy " << entropy;
  EXPECT_LT(held_out, entropy - 0.5) << "unigram entropy " << entropy;
}

TEST(GptTraining, SameSeedsSameLossesBitForBit) {
  const core::Workload w(byte_model(), kSeq);
  testing::WholeModel a(w, 1);
  testing::WholeModel b(w, 1);
  const std::vector<float> la = train(a, 5);
  const std::vector<float> lb = train(b, 5);
  ASSERT_EQ(la.size(), lb.size());
  for (size_t i = 0; i < la.size(); ++i) EXPECT_EQ(la[i], lb[i]) << "step " << i + 1;
  EXPECT_LT(la.back(), la.front());
}

}  // namespace
}  // namespace stowage::executor::model
