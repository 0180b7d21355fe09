// The device probe (device_probe.h) on small sizes: it names the device,
// and measures every copy size, the HBM copy and every GEMM shape it is
// given, each at a positive, finite rate. Runs on a GPU (label gpu) and on
// the emulated device (bf16 matrices included), where the rates say
// nothing of a GPU but every call and its error checks run.
#include "executor/cuda/device_probe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "executor/cuda/cuda_device.h"
#include "tests/executor/cuda/cuda_test_support.h"

namespace stowage::executor::cuda {
namespace {

bool positive_and_finite(double x) {
  return x > 0 && std::isfinite(x);
}

TEST(DeviceProbe, MeasuresEverySizeAndShapeItIsGiven) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  const GpuProbeSizes sizes{.copy_bytes = {int64_t{1} << 20, int64_t{3} << 20},
                            .hbm_copy_bytes = int64_t{2} << 20,
                            .gemms = {{64, 64, 64}, {96, 32, 48}},
                            .reps = 2};
  const GpuRates rates = measure_gpu(sizes);
  EXPECT_EQ(rates.device, device_name(0));
  EXPECT_FALSE(rates.device.empty());
  ASSERT_EQ(rates.pinned.size(), 2u);
  for (size_t i = 0; i < rates.pinned.size(); ++i) {
    EXPECT_EQ(rates.pinned[i].bytes, sizes.copy_bytes[i]);
    EXPECT_TRUE(positive_and_finite(rates.pinned[i].h2d)) << rates.pinned[i].h2d;
    EXPECT_TRUE(positive_and_finite(rates.pinned[i].d2h)) << rates.pinned[i].d2h;
  }
  EXPECT_TRUE(positive_and_finite(rates.hbm_copy)) << rates.hbm_copy;
  ASSERT_EQ(rates.gemms.size(), 2u);
  EXPECT_EQ(rates.gemms[1].shape.m, 96);
  EXPECT_EQ(rates.gemms[1].shape.k, 48);
  for (const GemmRate& g : rates.gemms) EXPECT_TRUE(positive_and_finite(g.flops_per_s)) << g.flops_per_s;
}

// --quick measures less, and still the copies the calibration reads
// (probe/gpu_calibration.h: pinned, 16 MiB and more).
TEST(DeviceProbe, QuickSizesAreSmallerAndKeepTheCopiesTheCalibrationReads) {
  const GpuProbeSizes quick = gpu_probe_sizes(true), full = gpu_probe_sizes(false);
  EXPECT_LT(quick.hbm_copy_bytes, full.hbm_copy_bytes);
  EXPECT_LE(quick.gemms.size(), full.gemms.size());
  for (const int64_t bytes : quick.copy_bytes)
    EXPECT_GE(bytes, int64_t{16} << 20);  // what the calibration reads
}

}  // namespace
}  // namespace stowage::executor::cuda
