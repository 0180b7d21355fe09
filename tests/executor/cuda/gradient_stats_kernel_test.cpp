// The gradient-stats kernel against CpuBackend::gradient_stats
// (SquareSum::add_*_bits): integer sums, so the same finite flag and the
// same norm to the bit, in whatever order the GPU adds.
#include "executor/cuda/gradient_stats_kernel.h"

#include <gtest/gtest.h>

#include <vector>

#include "executor/square_sum.h"
#include "tests/executor/cuda/cuda_test_support.h"

namespace stowage::executor::cuda {
namespace {

using core::Precision;

// Finite values only: the exponent's top bit cleared (bf16 also its next,
// keeping squares below saturation), so the norm is a number to compare.
std::vector<uint16_t> finite_bits(int64_t n, Precision p, uint32_t seed) {
  std::vector<uint16_t> bits = random_bits(n, seed);
  for (uint16_t& x : bits) x = static_cast<uint16_t>(x & (p == Precision::kBf16 ? 0x9fffu : 0xbfffu));
  return bits;
}

void expect_cpu_verdict(const std::vector<uint16_t>& bits, Precision p) {
  SquareSum cpu;
  const bool cpu_finite = p == Precision::kBf16 ? cpu.add_bf16_bits(bits) : cpu.add_fp16_bits(bits);
  DeviceArray<uint16_t> grad(bits);
  DeviceArray<SquareSumBins> bins(std::vector<SquareSumBins>(1));
  launch_square_sum_bins(grad.get(), static_cast<int64_t>(bits.size()), p, bins.get(), nullptr);
  SquareSum gpu;
  const bool gpu_finite = gpu.add_bins(bins.to_host()[0], p);
  EXPECT_EQ(gpu_finite, cpu_finite);
  EXPECT_EQ(gpu.value(), cpu.value());  // bit-equal doubles, infinity where saturated
}

TEST(GradientStatsKernel, FiniteGradientsGiveTheCpuNormToTheBit) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const Precision p : {Precision::kBf16, Precision::kFp16}) {
    for (const int64_t n : kOddSizes) {
      SCOPED_TRACE(testing::Message() << "n " << n);
      expect_cpu_verdict(finite_bits(n, p, 7), p);
    }
  }
}

TEST(GradientStatsKernel, AnyPatternGivesTheCpuVerdict) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const Precision p : {Precision::kBf16, Precision::kFp16}) {
    for (const int64_t n : kOddSizes) {
      SCOPED_TRACE(testing::Message() << "n " << n);
      expect_cpu_verdict(random_bits(n, 8), p);  // NaNs and infinities among them for n > 7, typically
    }
  }
}

}  // namespace
}  // namespace stowage::executor::cuda
