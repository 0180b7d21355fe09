// The Adam kernel against its CPU twin, CpuBackend's optimizer step (the
// 16-bit gradient widened, then executor::adam_step). Both run
// adam_update_one with correctly rounded fma, sqrt and division, and
// adam_update.h leaves no product a compiler could fuse, so the expected
// tolerance is zero: the same bits, for every dtype, after several steps.
#include "executor/cuda/adam_kernel.h"

#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <vector>

#include "executor/cpu_adam.h"
#include "executor/model/half_convert.h"
#include "tests/executor/cuda/cuda_test_support.h"

namespace stowage::executor::cuda {
namespace {

using core::OptimizerKind;
using core::Precision;

struct Case {
  OptimizerKind optimizer;
  Precision precision;
  float grad_scale;  // fp16 gradients carry a loss scale, bf16 ones do not
};
constexpr Case kCases[] = {{OptimizerKind::kAdamW, Precision::kBf16, 1.0f},
                           {OptimizerKind::kAdam, Precision::kBf16, 1.0f},
                           {OptimizerKind::kAdamW, Precision::kFp16, 1024.0f},
                           {OptimizerKind::kAdam, Precision::kFp16, 1024.0f}};

AdamHyper hyper_for(OptimizerKind optimizer) {
  return {.config = {.learning_rate = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.01},
          .optimizer = optimizer};
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// `steps` steps of fp32-moment Adam on n parameters that start `offset`
// elements into their arrays, on the CPU and on the GPU; the arrays must
// end bit for bit the same (the elements before the offset untouched on
// both). Seeds: the master weights' and, plus the step, the gradients'.
void expect_fp32_steps_match(const Case& c, int64_t n, int64_t offset, int steps, uint32_t master_seed,
                             uint32_t grad_seed) {
  const auto size = static_cast<size_t>(n + offset);
  std::vector<float> master = random_floats(n + offset, -1, 1, master_seed);
  std::vector<float> m(size, 0.0f), v(size, 0.0f);
  std::vector<uint16_t> param16(size);
  DeviceArray<float> d_master(master), d_m(m), d_v(v);
  DeviceArray<uint16_t> d_param16(param16);
  const AdamHyper hyper = hyper_for(c.optimizer);
  const auto from_offset = [offset](auto& vector) {
    return std::span(vector).subspan(static_cast<size_t>(offset));
  };
  for (int64_t step = 1; step <= steps; ++step) {
    std::vector<float> grad =
        random_floats(n + offset, -c.grad_scale, c.grad_scale, grad_seed + static_cast<uint32_t>(step));
    std::vector<uint16_t> grad16(grad.size());
    model::to_half(c.precision, grad, grad16);
    model::from_half(c.precision, grad16, grad);  // what CpuBackend::optimizer_step hands adam_step
    DeviceArray<uint16_t> d_grad16(grad16);
    adam_step(from_offset(master), from_offset(grad), from_offset(m), from_offset(v), from_offset(param16),
              c.precision, hyper, step, c.grad_scale, {});
    launch_adam({.master = d_master.get() + offset,
                 .m = d_m.get() + offset,
                 .v = d_v.get() + offset,
                 .grad16 = d_grad16.get() + offset,
                 .param16 = d_param16.get() + offset,
                 .n = n},
                adam_step_constants(hyper.config, step, c.grad_scale), c.optimizer, c.precision, nullptr);
    STOWAGE_CUDA(cudaDeviceSynchronize());
  }
  EXPECT_TRUE(same_bits(d_master.to_host(), master));
  EXPECT_TRUE(same_bits(d_m.to_host(), m));
  EXPECT_TRUE(same_bits(d_v.to_host(), v));
  EXPECT_TRUE(same_bits(d_param16.to_host(), param16));
}

TEST(AdamKernel, Fp32MomentsGiveTheCpuStepsBits) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const Case& c : kCases) {
    for (const int64_t n : kOddSizes) {
      SCOPED_TRACE(testing::Message() << "n " << n << " fp16 " << (c.precision == Precision::kFp16));
      expect_fp32_steps_match(c, n, 0, 3, 1, 10);
    }
  }
}

TEST(AdamKernel, Bf16MomentsGiveTheCpuStepsBits) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const Case& c : kCases) {
    for (const int64_t n : kOddSizes) {
      SCOPED_TRACE(testing::Message() << "n " << n);
      std::vector<float> master = random_floats(n, -1, 1, 2);
      std::vector<uint16_t> m(static_cast<size_t>(n), 0), v(static_cast<size_t>(n), 0);
      std::vector<uint16_t> param16(static_cast<size_t>(n));
      DeviceArray<float> d_master(master);
      DeviceArray<uint16_t> d_m(m), d_v(v), d_param16(param16);
      const AdamHyper hyper = hyper_for(c.optimizer);
      for (int64_t step = 1; step <= 3; ++step) {
        std::vector<float> grad =
            random_floats(n, -c.grad_scale, c.grad_scale, static_cast<uint32_t>(step + 20));
        std::vector<uint16_t> grad16(grad.size());
        model::to_half(c.precision, grad, grad16);
        model::from_half(c.precision, grad16, grad);
        DeviceArray<uint16_t> d_grad16(grad16);
        adam_step_bf16_moments(master, grad, m, v, param16, c.precision, hyper, step, c.grad_scale, {});
        launch_adam(AdamPartitionOf<uint16_t>{.master = d_master.get(),
                                              .m = d_m.get(),
                                              .v = d_v.get(),
                                              .grad16 = d_grad16.get(),
                                              .param16 = d_param16.get(),
                                              .n = n},
                    adam_step_constants(hyper.config, step, c.grad_scale), c.optimizer, c.precision, nullptr);
        STOWAGE_CUDA(cudaDeviceSynchronize());
      }
      EXPECT_TRUE(same_bits(d_master.to_host(), master));
      EXPECT_TRUE(same_bits(d_m.to_host(), m));
      EXPECT_TRUE(same_bits(d_v.to_host(), v));
      EXPECT_TRUE(same_bits(d_param16.to_host(), param16));
    }
  }
}

// A partition one element into its arrays (an arena carving at an odd
// offset) is not aligned for the kernel's four-element loads: it takes the
// element-by-element path, with the same bits as the CPU.
TEST(AdamKernel, APartitionAtAnOddOffsetGivesTheCpuStepsBitsToo) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  expect_fp32_steps_match(kCases[0], kOddSizes[2], 1, 2, 3, 30);
}

}  // namespace
}  // namespace stowage::executor::cuda
