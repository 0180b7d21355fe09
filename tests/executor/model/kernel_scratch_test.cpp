// The models' backward kernels take their temporaries from the installed
// region (model/kernel_scratch.h), and what each model declares for them
// (backward_scratch_floats, which lowering declares for the op) is exactly
// the most they hold at once: a region one float smaller is refused, and
// the whole of the declared one is used.
#include "executor/model/kernel_scratch.h"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <vector>

#include "executor/model/gpt_model.h"
#include "executor/model/llama_model.h"
#include "executor/model/saved_storage.h"
#include "tests/executor/model/finite_difference.h"
#include "tests/executor/model/llama_whole_model.h"
#include "tests/executor/model/whole_model.h"

namespace stowage::executor::model {
namespace {

using testing::normals;
using testing::random_tokens;

const MicroBatch kBatch{.batch = 2, .seq = 8};

// Runs `backward` in a region of `floats`; returns its high-water mark.
size_t high_water(int64_t floats, const std::function<void()>& backward) {
  std::vector<float> region(static_cast<size_t>(floats));
  const ScratchRegion scratch(region);
  backward();
  return scratch.high_water();
}

void expect_exact(int64_t declared, const std::function<void()>& backward, const char* what) {
  EXPECT_EQ(high_water(declared, backward), static_cast<size_t>(declared)) << what;
  EXPECT_THROW(high_water(declared - 1, backward), std::length_error) << what;
}

TEST(KernelScratch, TheGptDeclaresExactlyWhatItsBackwardKernelsHold) {
  const core::Workload w(testing::small_spec(), 8);
  const GptModel m = testing::must_create(w);
  std::vector<float> params(static_cast<size_t>(m.layer_param_count(1)));
  m.init_parameters(1, params, 7);
  const std::vector<float> in = normals(16 * 16, 9, 1.0);
  std::vector<float> out(in.size()), d_in(in.size()), d_params(params.size());
  BlockSaved saved;
  m.block_forward(params, in, kBatch, saved, out);
  expect_exact(m.backward_scratch_floats(core::LayerKind::kBlock, kBatch),
               [&] { m.block_backward(params, in, saved, out, d_in, d_params); }, "block");

  const int last = m.layer_count() - 1;
  std::vector<float> final_params(static_cast<size_t>(m.layer_param_count(last)));
  m.init_parameters(last, final_params, 11);
  const std::vector<float> head = normals(32 * 16, 13, 0.5);
  const std::vector<int32_t> targets = random_tokens(16, 15, 32);
  FinalSaved final_saved;
  m.final_forward(final_params, head, in, targets, kBatch, final_saved);
  std::vector<float> d_final(final_params.size()), d_head(head.size());
  expect_exact(m.backward_scratch_floats(core::LayerKind::kFinal, kBatch),
               [&] { m.final_backward(final_params, head, in, targets, final_saved, 1.0f, d_in, d_final, d_head); },
               "final");
}

TEST(KernelScratch, TheLlamaDeclaresExactlyWhatItsBackwardKernelsHold) {
  const core::Workload w(testing::small_llama_spec(), 8);
  const LlamaModel m = testing::must_create_llama(w);
  std::vector<float> params(static_cast<size_t>(m.layer_param_count(1)));
  m.init_parameters(1, params, 14);
  const std::vector<float> in = normals(16 * 16, 16, 1.0);
  std::vector<float> out(in.size()), d_in(in.size()), d_params(params.size());
  LlamaBlockSaved saved;
  m.block_forward(params, in, kBatch, saved, out);
  expect_exact(m.backward_scratch_floats(core::LayerKind::kBlock, kBatch),
               [&] { m.block_backward(params, in, saved, out, d_in, d_params); }, "block");

  const int last = m.layer_count() - 1;
  std::vector<float> final_params(static_cast<size_t>(m.layer_param_count(last)));
  m.init_parameters(last, final_params, 18);
  const std::vector<int32_t> targets = random_tokens(16, 21, 32);
  LlamaFinalSaved final_saved;
  m.final_forward(final_params, in, targets, kBatch, final_saved);
  std::vector<float> d_final(final_params.size());
  expect_exact(m.backward_scratch_floats(core::LayerKind::kFinal, kBatch),
               [&] { m.final_backward(final_params, in, targets, final_saved, 1.0f, d_in, d_final); }, "final");
}

TEST(KernelScratch, WithoutARegionTemporariesAreTheirOwn) {
  const Temporary a(4);
  std::vector<float> region(2);
  {
    const ScratchRegion scratch(region);
    Temporary b(2);
    EXPECT_EQ(b.data(), region.data());
    EXPECT_EQ(scratch.high_water(), 2u);
  }
  Temporary c(3);  // the region is gone: its own again
  EXPECT_EQ(c.size(), 3u);
  EXPECT_NE(c.data(), region.data());
}

// Computing for the executor, saved state must go where the caller said.
TEST(KernelScratch, SavedStateInMemoryOfItsOwnWhileARegionIsInstalledIsABug) {
  std::vector<float> region(4);
  const ScratchRegion scratch(region);
  SavedStorage storage;
  std::span<float> view;
  EXPECT_THROW(storage.lay_out({{&view, 2}}), std::logic_error);
}

}  // namespace
}  // namespace stowage::executor::model
