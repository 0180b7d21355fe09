// The FLOPs core::Workload counts for a model are exactly the matrix-product
// FLOPs the executor's model computes (issue 17 item 2), for the tiny GPT
// and the tiny Llama: a whole forward is the sum of the layers'
// forward_flops_per_token times the tokens, and a backward twice that.
// (The interpreter checks the same per compute op in every run.)
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/workload.h"
#include "executor/model/matmul.h"
#include "tests/core/test_profiles.h"
#include "tests/executor/model/finite_difference.h"
#include "tests/executor/model/llama_whole_model.h"
#include "tests/executor/model/whole_model.h"

namespace stowage::executor::model {
namespace {

using core::testing::bundled;
using core::testing::must;

struct Counted {
  double workload_forward = 0;  // FLOPs
  int64_t forward = 0;
  int64_t backward = 0;
};

// Two sequences of `seq` tokens through the whole model and back.
template <typename Whole>
Counted count(const core::Workload& workload, int64_t seq) {
  Whole whole(workload, 5);
  const int64_t vocab = workload.model().vocab;
  const TokenBatch b{.batch = 2,
                     .seq = seq,
                     .inputs = testing::random_tokens(static_cast<size_t>(2 * seq), 1, vocab),
                     .targets = testing::random_tokens(static_cast<size_t>(2 * seq), 2, vocab)};
  Counted c;
  for (const core::Layer& l : workload.layers()) c.workload_forward += l.forward_flops_per_token.count();
  c.workload_forward *= static_cast<double>(2 * seq);
  const int64_t start = matmul_flops_on_this_thread();
  whole.forward(b);
  c.forward = matmul_flops_on_this_thread() - start;
  whole.backward(b, 1.0f);
  c.backward = matmul_flops_on_this_thread() - start - c.forward;
  return c;
}

// Forward exactly the workload's FLOPs for two sequences of 64 tokens,
// backward exactly twice that.
template <typename Whole>
void expect_exact(const std::string& model) {
  const int64_t seq = 64;
  const core::Workload w(must(bundled().model(model)), seq);
  const Counted c = count<Whole>(w, seq);
  EXPECT_GT(c.forward, 0);
  EXPECT_EQ(static_cast<double>(c.forward), c.workload_forward) << model;
  EXPECT_EQ(static_cast<double>(c.backward), 2 * c.workload_forward) << model;
}

TEST(ModelFlops, TheTinyLlamaComputesExactlyTheWorkloadsFlops) {
  expect_exact<testing::LlamaWholeModel>("tiny-llama");
}

TEST(ModelFlops, TheTinyGptComputesExactlyTheWorkloadsFlops) {
  expect_exact<testing::WholeModel>("tiny-gpt");
}

// The count itself: a product of [3, 4] by [4, 5] is 3·5·4 multiply-adds.
TEST(ModelFlops, AProductCountsTwoFlopsPerMultiplyAdd) {
  const std::vector<float> a(12, 1.0f), b(20, 1.0f);
  std::vector<float> c(15);
  const int64_t start = matmul_flops_on_this_thread();
  matmul(Transpose::kNo, Transpose::kNo, 3, 5, 4, 1.0f, a.data(), 4, b.data(), 5, 0.0f, c.data(), 5);
  EXPECT_EQ(matmul_flops_on_this_thread() - start, 2 * 3 * 5 * 4);
  EXPECT_EQ(c[0], 4.0f);
}

}  // namespace
}  // namespace stowage::executor::model
