// Analytic gradients of every layer kind against central differences, over
// EVERY parameter and input element of a small shape (d_model 16, 2 heads,
// ffn 64, vocab 32, 2 sequences of 8 tokens), and of the whole model with
// its tied head on a sample of parameters per layer.
//
// Numeric gradients use the five-point stencil
//   (8 (f(x+h) - f(x-h)) - (f(x+2h) - f(x-2h))) / 12h,
// whose truncation error is O(h^4) instead of central differences' O(h^2).
// That matters because fp32 forward passes make the loss noisy: for the
// block, whose test loss sum(out * r) is ~20, by ~3e-6 absolute (measured:
// the exactly-zero gradient of k_proj's bias, to which softmax is blind,
// comes out of central differences as 3e-4 at h 1e-2 and 1.5e-3 at h 1e-3),
// while at h 3e-2 central differences are off by up to 8% where attention
// saturates. The stencil at h 3e-2 for the block (1e-2 for the rest, whose
// losses are of order 1) keeps both effects near 1e-4. The check is
// |analytic - numeric| <= 1e-2 * |numeric| + floor, floor 3e-4 for the
// block (its gradients reach 5), 2e-4 for the embedding, 1e-4 for the mean
// losses; the worst element measured uses about half of that. A transposed weight, a missing residual or a
// dropped 1/n gives errors of order 1.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <span>
#include <vector>

#include "executor/model/gpt_model.h"
#include "executor/model/rng.h"
#include "tests/executor/model/finite_difference.h"
#include "tests/executor/model/whole_model.h"

namespace stowage::executor::model {
namespace {

using testing::all;
using testing::check_gradient;
using testing::dot;
using testing::normals;
using testing::random_tokens;
using testing::roughen;

const MicroBatch kBatch{.batch = 2, .seq = 8};

TEST(GptModelGradient, EmbeddingMatchesFiniteDifferences) {
  const core::Workload w(testing::small_spec(), 8);
  const GptModel m = testing::must_create(w);
  std::vector<float> params = normals(static_cast<size_t>(m.layer_param_count(0)), 1, 1.0);
  const std::vector<int32_t> tokens = random_tokens(16, 2, 32);
  const std::vector<float> r = normals(static_cast<size_t>(16 * 16), 3, 1.0);
  std::vector<float> out(r.size());
  auto loss = [&] {
    m.embedding_forward(params, tokens, kBatch, out);
    return dot(out, r);
  };
  std::vector<float> d_params(params.size(), 0.0f);
  m.embedding_backward(tokens, kBatch, r, d_params);
  check_gradient(params, d_params, loss, all(params.size()), 1e-2f, 2e-4, "embedding params");
}

TEST(GptModelGradient, BlockMatchesFiniteDifferencesForEveryParameterAndInput) {
  const core::Workload w(testing::small_spec(), 8);
  const GptModel m = testing::must_create(w);
  std::vector<float> params(static_cast<size_t>(m.layer_param_count(1)));
  m.init_parameters(1, params, 7);
  roughen(params, 8);
  std::vector<float> in = normals(16 * 16, 9, 1.0);
  const std::vector<float> r = normals(in.size(), 10, 1.0);
  std::vector<float> out(in.size());
  BlockSaved saved;
  auto loss = [&] {
    m.block_forward(params, in, kBatch, saved, out);
    return dot(out, r);
  };
  loss();
  std::vector<float> d_in(in.size());
  std::vector<float> d_params(params.size(), 0.0f);
  m.block_backward(params, in, saved, r, d_in, d_params);
  check_gradient(params, d_params, loss, all(params.size()), 3e-2f, 3e-4, "block params");
  check_gradient(in, d_in, loss, all(in.size()), 3e-2f, 3e-4, "block input");
}

TEST(GptModelGradient, FinalLayerMatchesFiniteDifferencesIncludingTheTiedHead) {
  const core::Workload w(testing::small_spec(), 8);
  const GptModel m = testing::must_create(w);
  const int last = m.layer_count() - 1;
  std::vector<float> params(static_cast<size_t>(m.layer_param_count(last)));
  m.init_parameters(last, params, 11);
  roughen(params, 12);
  std::vector<float> head = normals(32 * 16, 13, 0.5);  // token embedding [vocab, d]
  std::vector<float> in = normals(16 * 16, 14, 1.0);
  const std::vector<int32_t> targets = random_tokens(16, 15, 32);
  FinalSaved saved;
  auto loss = [&] { return static_cast<double>(m.final_forward(params, head, in, targets, kBatch, saved)); };
  loss();
  std::vector<float> d_in(in.size());
  std::vector<float> d_params(params.size(), 0.0f);
  std::vector<float> d_head(head.size(), 0.0f);
  m.final_backward(params, head, in, targets, saved, 1.0f, d_in, d_params, d_head);
  check_gradient(params, d_params, loss, all(params.size()), 1e-2f, 1e-4, "final norm params");
  check_gradient(head, d_head, loss, all(head.size()), 1e-2f, 1e-4, "tied head");
  check_gradient(in, d_in, loss, all(in.size()), 1e-2f, 1e-4, "final input");
}

TEST(GptModelGradient, WholeModelWithTiedEmbeddingMatchesFiniteDifferences) {
  const core::Workload w(testing::small_spec(), 8);
  testing::WholeModel whole(w, 21);
  for (size_t l = 0; l < whole.params().size(); ++l) roughen(whole.params()[l], 30 + l);
  const TokenBatch batch{
      .batch = 2, .seq = 8, .inputs = random_tokens(16, 22, 32), .targets = random_tokens(16, 23, 32)};
  auto loss = [&] { return static_cast<double>(whole.forward(batch)); };
  loss();
  whole.backward(batch, 1.0f);
  for (size_t l = 0; l < whole.params().size(); ++l) {
    // Every 7th element: each tensor of each layer is sampled.
    std::vector<size_t> sample;
    for (size_t i = l % 7; i < whole.params()[l].size(); i += 7) sample.push_back(i);
    const std::string what = "layer " + std::to_string(l);
    check_gradient(whole.params()[l], whole.grads()[l], loss, sample, 1e-2f, 1e-4, what.c_str());
  }
}

// A power-of-two loss scale multiplies every product by an exact power of
// two, so the scaled gradients are the unscaled ones times 8, bit for bit.
TEST(GptModelGradient, LossScaleScalesEveryGradientExactly) {
  const core::Workload w(testing::small_spec(), 8);
  testing::WholeModel whole(w, 41);
  const TokenBatch batch{
      .batch = 2, .seq = 8, .inputs = random_tokens(16, 42, 32), .targets = random_tokens(16, 43, 32)};
  whole.forward(batch);
  whole.backward(batch, 1.0f);
  const std::vector<std::vector<float>> unscaled = whole.grads();
  whole.zero_grads();
  whole.backward(batch, 8.0f);
  for (size_t l = 0; l < unscaled.size(); ++l) {
    for (size_t i = 0; i < unscaled[l].size(); ++i)
      ASSERT_EQ(whole.grads()[l][i], 8.0f * unscaled[l][i]) << l << "," << i;
  }
}

}  // namespace
}  // namespace stowage::executor::model
