// The GPU calibration (gpu_calibration.h) of what cuda_probe recorded on
// the H200 on 2026-12-04 (bench/gpu/results/2026-12-04-run2/probe.txt),
// against the figures of profiles/gpus/h200.yaml: the numbers
// bench/gpu/probe_calibration.py gives of the same output
// (tests/bench/torch_peer_test.py), so the command and the bench script
// calibrate a GPU alike. And what it refuses.
#include "probe/gpu_calibration.h"

#include <gtest/gtest.h>

#include "core/profile_catalog.h"

namespace stowage::probe {
namespace {

constexpr int64_t kKiB = 1024;

// The recorded run's pinned rows (the pageable ones are not read), HBM copy
// and bf16 GEMMs, in base units.
GpuMeasurements recorded_h200() {
  return {.device = "NVIDIA H200",
          .pinned = {{.bytes = 64 * kKiB, .h2d = 15.33e9, .d2h = 22.49e9},
                     {.bytes = 1024 * kKiB, .h2d = 44.75e9, .d2h = 50.26e9},
                     {.bytes = 16384 * kKiB, .h2d = 54.93e9, .d2h = 55.17e9},
                     {.bytes = 262144 * kKiB, .h2d = 55.54e9, .d2h = 55.36e9},
                     {.bytes = 1048576 * kKiB, .h2d = 55.56e9, .d2h = 55.42e9}},
          .hbm_copy = 4276e9,
          .gemm_type = "bf16",
          .gemms = {868.0e12, 892.9e12, 903.6e12, 736.8e12, 805.3e12, 866.9e12}};
}

core::GpuSpec h200() {
  return *core::ProfileCatalog(STOWAGE_PROFILES_DIR).gpu("h200");
}

TEST(GpuCalibration, TheH200sRecordedProbeGivesWhatTheBenchScriptGives) {
  core::CostParameters p;
  ASSERT_EQ(apply_gpu_calibration(recorded_h200(), h200(), p), "");
  // The median of the copies of 16 MiB and more: 54.93, 55.54, 55.56 up and
  // 55.17, 55.36, 55.42 down (probe_calibration.py: "55.5 GB/s", "55.4 GB/s").
  EXPECT_DOUBLE_EQ(p.h2d_rate->value(), 55.54e9);
  EXPECT_DOUBLE_EQ(p.d2h_rate->value(), 55.36e9);
  EXPECT_DOUBLE_EQ(p.hbm_efficiency, 4276.0 / 4800);  // round(.., 3) = 0.891 there
  // The median of six GEMMs, 867.45 TFLOP/s, of the profile's 989.
  EXPECT_DOUBLE_EQ(p.matmul_efficiency, 867.45e12 / 989e12);  // 0.877 there
}

TEST(GpuCalibration, MissingMeasurementsChangeNothingAndSayWhat) {
  const core::CostParameters defaults;
  GpuMeasurements small = recorded_h200();
  small.pinned.resize(2);  // nothing of 16 MiB or more
  core::CostParameters p;
  EXPECT_EQ(apply_gpu_calibration(small, h200(), p), "no pinned copy of 16 MiB or more was measured");
  EXPECT_FALSE(p.h2d_rate.has_value());
  EXPECT_EQ(p.matmul_efficiency, defaults.matmul_efficiency);
  GpuMeasurements no_gemm = recorded_h200();
  no_gemm.gemms.clear();
  EXPECT_EQ(apply_gpu_calibration(no_gemm, h200(), p), "no GEMM was measured");
  core::GpuSpec no_bf16 = h200();
  no_bf16.bf16_rate.reset();
  EXPECT_EQ(apply_gpu_calibration(recorded_h200(), no_bf16, p), "h200's profile gives no bf16 rate");
  EXPECT_EQ(p.hbm_efficiency, defaults.hbm_efficiency);
  // fp16 GEMMs (a GPU without bf16) are held to the fp16 rate.
  GpuMeasurements fp16 = recorded_h200();
  fp16.gemm_type = "fp16";
  ASSERT_EQ(apply_gpu_calibration(fp16, no_bf16, p), "");
  EXPECT_DOUBLE_EQ(p.matmul_efficiency, 867.45e12 / no_bf16.fp16_rate.value());
}

}  // namespace
}  // namespace stowage::probe
