// Analytic gradients of the Llama's new kernels (RMSNorm, SwiGLU, RoPE with
// grouped-query attention) and of every Llama layer kind against the
// five-point stencil of finite_difference.h, over EVERY element of a small
// shape: d_model 16, 4 query heads sharing 2 kv heads of head_dim 4, ffn 32,
// vocab 32, 2 sequences of 8 tokens, 2 blocks. Tolerances are the GPT's
// (gpt_model_gradient_test.cpp): |analytic - numeric| <= 1e-2 |numeric| +
// floor, with step 3e-2 and floor 3e-4 for the block, whose loss sum(out *
// r) is ~20 and noisy in fp32, and step 1e-2, floor 1e-4 for the rest.
#include <gtest/gtest.h>

#include <vector>

#include "executor/model/causal_attention.h"
#include "executor/model/llama_model.h"
#include "executor/model/rms_norm.h"
#include "executor/model/rotary.h"
#include "executor/model/swiglu.h"
#include "tests/executor/model/finite_difference.h"
#include "tests/executor/model/llama_whole_model.h"

namespace stowage::executor::model {
namespace {

using testing::all;
using testing::check_gradient;
using testing::dot;
using testing::normals;
using testing::random_tokens;
using testing::roughen;

const MicroBatch kBatch{.batch = 2, .seq = 8};

TEST(LlamaGradient, RmsNormMatchesFiniteDifferences) {
  constexpr int64_t kRows = 4, kD = 16;
  std::vector<float> x = normals(kRows * kD, 1, 1.0);
  std::vector<float> w = normals(kD, 2, 1.0);
  const std::vector<float> r = normals(x.size(), 3, 1.0);
  std::vector<float> y(x.size()), rstd(kRows);
  auto loss = [&] {
    rms_norm_forward(x.data(), w.data(), y.data(), rstd.data(), kRows, kD);
    return dot(y, r);
  };
  loss();
  std::vector<float> dx(x.size(), 0.0f), dw(w.size(), 0.0f);
  rms_norm_backward(x.data(), w.data(), rstd.data(), r.data(), dx.data(), dw.data(), kRows, kD);
  check_gradient(x, dx, loss, all(x.size()), 1e-2f, 1e-4, "rmsnorm input");
  check_gradient(w, dw, loss, all(w.size()), 1e-2f, 1e-4, "rmsnorm weight");
}

TEST(LlamaGradient, SwigluMatchesFiniteDifferences) {
  constexpr int64_t kN = 64;
  std::vector<float> gate = normals(kN, 4, 2.0);  // well into silu's curved range
  std::vector<float> up = normals(kN, 5, 1.0);
  const std::vector<float> r = normals(kN, 6, 1.0);
  std::vector<float> h(kN);
  auto loss = [&] {
    swiglu_forward(gate.data(), up.data(), h.data(), kN);
    return dot(h, r);
  };
  std::vector<float> d_gate(kN), d_up(kN);
  swiglu_backward(gate.data(), up.data(), r.data(), d_gate.data(), d_up.data(), kN);
  check_gradient(gate, d_gate, loss, all(kN), 1e-2f, 1e-4, "swiglu gate");
  check_gradient(up, d_up, loss, all(kN), 1e-2f, 1e-4, "swiglu up");
}

// Attention of rotated queries and keys, 4 query heads over 2 kv heads: the
// composition the block runs, with dq and dk turned back through RoPE.
TEST(LlamaGradient, RopeAttentionWithGroupedQueryHeadsMatchesFiniteDifferences) {
  const AttentionShape as{.batch = 2, .seq = 8, .heads = 4, .head_dim = 4, .kv_heads = 2};
  const int64_t n = as.batch * as.seq;
  const RotaryTable rope(as.head_dim, as.seq, 10000.0);
  std::vector<float> q = normals(static_cast<size_t>(n * as.width()), 7, 1.5);
  std::vector<float> k = normals(static_cast<size_t>(n * as.kv_width()), 8, 1.5);
  std::vector<float> v = normals(k.size(), 9, 1.0);
  const std::vector<float> r = normals(q.size(), 10, 1.0);
  std::vector<float> qr(q.size()), kr(k.size()), y(q.size());
  std::vector<float> probs(static_cast<size_t>(as.batch * as.heads * as.seq * as.seq));
  auto loss = [&] {
    qr = q;
    kr = k;
    rope.rotate(qr.data(), as.batch, as.seq, as.heads);
    rope.rotate(kr.data(), as.batch, as.seq, as.kv_heads);
    causal_attention_forward(qr.data(), kr.data(), v.data(), probs.data(), y.data(), as);
    return dot(y, r);
  };
  loss();
  std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
  causal_attention_backward(qr.data(), kr.data(), v.data(), probs.data(), r.data(), dq.data(), dk.data(),
                            dv.data(), as);
  rope.rotate_back(dq.data(), as.batch, as.seq, as.heads);
  rope.rotate_back(dk.data(), as.batch, as.seq, as.kv_heads);
  check_gradient(q, dq, loss, all(q.size()), 1e-2f, 1e-4, "rope attention q");
  check_gradient(k, dk, loss, all(k.size()), 1e-2f, 1e-4, "rope attention k (summed over the group)");
  check_gradient(v, dv, loss, all(v.size()), 1e-2f, 1e-4, "rope attention v (summed over the group)");
}

TEST(LlamaGradient, EmbeddingMatchesFiniteDifferences) {
  const core::Workload w(testing::small_llama_spec(), 8);
  const LlamaModel m = testing::must_create_llama(w);
  std::vector<float> params = normals(static_cast<size_t>(m.layer_param_count(0)), 11, 1.0);
  const std::vector<int32_t> tokens = random_tokens(16, 12, 32);
  const std::vector<float> r = normals(16 * 16, 13, 1.0);
  std::vector<float> out(r.size());
  auto loss = [&] {
    m.embedding_forward(params, tokens, kBatch, out);
    return dot(out, r);
  };
  std::vector<float> d_params(params.size(), 0.0f);
  m.embedding_backward(tokens, kBatch, r, d_params);
  check_gradient(params, d_params, loss, all(params.size()), 1e-2f, 2e-4, "embedding params");
}

TEST(LlamaGradient, BlockMatchesFiniteDifferencesForEveryParameterAndInput) {
  const core::Workload w(testing::small_llama_spec(), 8);
  const LlamaModel m = testing::must_create_llama(w);
  std::vector<float> params(static_cast<size_t>(m.layer_param_count(1)));
  m.init_parameters(1, params, 14);
  roughen(params, 15);
  std::vector<float> in = normals(16 * 16, 16, 1.0);
  const std::vector<float> r = normals(in.size(), 17, 1.0);
  std::vector<float> out(in.size());
  LlamaBlockSaved saved;
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

TEST(LlamaGradient, FinalLayerWithItsUntiedHeadMatchesFiniteDifferences) {
  const core::Workload w(testing::small_llama_spec(), 8);
  const LlamaModel m = testing::must_create_llama(w);
  const int last = m.layer_count() - 1;
  std::vector<float> params(static_cast<size_t>(m.layer_param_count(last)));
  m.init_parameters(last, params, 18);
  roughen(params, 19);
  std::vector<float> in = normals(16 * 16, 20, 1.0);
  const std::vector<int32_t> targets = random_tokens(16, 21, 32);
  LlamaFinalSaved saved;
  auto loss = [&] { return static_cast<double>(m.final_forward(params, in, targets, kBatch, saved)); };
  loss();
  std::vector<float> d_in(in.size());
  std::vector<float> d_params(params.size(), 0.0f);
  m.final_backward(params, in, targets, saved, 1.0f, d_in, d_params);
  check_gradient(params, d_params, loss, all(params.size()), 1e-2f, 1e-4, "final norm and head");
  check_gradient(in, d_in, loss, all(in.size()), 1e-2f, 1e-4, "final input");
}

TEST(LlamaGradient, WholeModelMatchesFiniteDifferences) {
  const core::Workload w(testing::small_llama_spec(), 8);
  testing::LlamaWholeModel whole(w, 22);
  for (size_t l = 0; l < whole.params().size(); ++l) roughen(whole.params()[l], 30 + l);
  const TokenBatch batch{
      .batch = 2, .seq = 8, .inputs = random_tokens(16, 23, 32), .targets = random_tokens(16, 24, 32)};
  auto loss = [&] { return static_cast<double>(whole.forward(batch)); };
  loss();
  whole.backward(batch, 1.0f);
  for (size_t l = 0; l < whole.params().size(); ++l) {
    // Every 5th element: each tensor of each layer is sampled.
    std::vector<size_t> sample;
    for (size_t i = l % 5; i < whole.params()[l].size(); i += 5) sample.push_back(i);
    const std::string what = "layer " + std::to_string(l);
    check_gradient(whole.params()[l], whole.grads()[l], loss, sample, 1e-2f, 1e-4, what.c_str());
  }
}

}  // namespace
}  // namespace stowage::executor::model
