// The 16-bit kernels against model/half_convert (the CPU backend's widen,
// narrow and accumulate): integer bit work and one IEEE addition, so the
// tolerance is zero, NaN payloads included.
#include "executor/cuda/half_kernels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "executor/model/half_convert.h"
#include "tests/executor/cuda/cuda_test_support.h"

namespace stowage::executor::cuda {
namespace {

using core::Precision;
constexpr Precision kPrecisions[] = {Precision::kBf16, Precision::kFp16};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Floats of every kind: random bit patterns (NaNs with payloads,
// infinities, subnormals, values that overflow fp16 or tie in rounding).
std::vector<float> float_patterns(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> out(static_cast<size_t>(n));
  for (float& x : out) {
    const uint32_t bits = static_cast<uint32_t>(rng());
    std::memcpy(&x, &bits, sizeof x);
  }
  return out;
}

TEST(HalfKernels, WidenEveryPatternAsTheCpuDoes) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  for (const Precision p : kPrecisions) {
    std::vector<float> cpu(all.size());
    model::from_half(p, all, cpu);
    DeviceArray<uint16_t> src(all);
    DeviceArray<float> dst(std::vector<float>(all.size()));
    launch_widen(src.get(), dst.get(), static_cast<int64_t>(all.size()), p, nullptr);
    EXPECT_TRUE(same_bits(dst.to_host(), cpu));
  }
}

TEST(HalfKernels, NarrowAsTheCpuDoes) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const Precision p : kPrecisions) {
    for (const int64_t n : kOddSizes) {
      const std::vector<float> in = float_patterns(n, 3);
      std::vector<uint16_t> cpu(in.size());
      model::to_half(p, in, cpu);
      DeviceArray<float> src(in);
      DeviceArray<uint16_t> dst(std::vector<uint16_t>(in.size()));
      launch_narrow(src.get(), dst.get(), n, p, nullptr);
      EXPECT_TRUE(same_bits(dst.to_host(), cpu)) << "n " << n;
    }
  }
}

TEST(HalfKernels, AccumulateAsTheCpuDoes) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const Precision p : kPrecisions) {
    for (const int64_t n : kOddSizes) {
      std::vector<uint16_t> acc = random_bits(n, 4);
      const std::vector<uint16_t> add = random_bits(n, 5);
      DeviceArray<uint16_t> d_acc(acc), d_add(add);
      model::accumulate_half(p, acc, add);
      launch_accumulate(d_acc.get(), d_add.get(), n, p, nullptr);
      EXPECT_TRUE(same_bits(d_acc.to_host(), acc)) << "n " << n;
    }
  }
}

TEST(HalfKernels, ZeroClearsEveryByte) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const int64_t n : kOddSizes) {
    DeviceArray<uint16_t> buffer(random_bits(n, 6));
    zero_async(buffer.get(), n * 2, nullptr);
    EXPECT_EQ(buffer.to_host(), std::vector<uint16_t>(static_cast<size_t>(n), 0)) << "n " << n;
  }
}

}  // namespace
}  // namespace stowage::executor::cuda
