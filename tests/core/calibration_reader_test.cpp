#include "core/calibration_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/profile_reader.h"
#include "tests/core/test_profiles.h"

namespace stowage::core {
namespace {

using testing::bundled;
using testing::must;

const char* kMachine = R"(format: stowage/machine/v1
label: test
source: test
gpu: rtx-4090
gpu_count: 1
host: desktop-ddr5-128gb
nvme: samsung-990-pro-2tb
nvme_count: 1
)";

TEST(CalibrationReader, AMachineWithoutASectionHasTheCompiledDefaults) {
  const MachineReferences r = must(read_machine_profile(kMachine, "m.yaml", "m"));
  const CostParameters defaults;
  EXPECT_EQ(r.calibration.matmul_efficiency, defaults.matmul_efficiency);
  EXPECT_EQ(r.calibration.cpu_core_rate.value(), defaults.cpu_core_rate.value());
  EXPECT_FALSE(r.calibration.h2d_rate.has_value());
}

TEST(CalibrationReader, TheSectionSetsWhatItGivesAndKeepsTheRest) {
  const std::string text = std::string(kMachine) +
                           "calibration:\n  matmul_efficiency: 0.42\n  h2d_rate: 3 GB/s\n  pcie_latency: 2 us\n"
                           "  optimizer_threads: 1\n";
  const MachineReferences r = must(read_machine_profile(text, "m.yaml", "m"));
  EXPECT_DOUBLE_EQ(r.calibration.matmul_efficiency, 0.42);
  ASSERT_TRUE(r.calibration.h2d_rate.has_value());
  EXPECT_DOUBLE_EQ(r.calibration.h2d_rate->value(), 3e9);
  EXPECT_NEAR(r.calibration.pcie_latency.value(), 2e-6, 1e-15);
  EXPECT_EQ(r.calibration.optimizer_threads, 1);
  EXPECT_DOUBLE_EQ(r.calibration.hbm_efficiency, CostParameters{}.hbm_efficiency);
  EXPECT_FALSE(r.calibration.d2h_rate.has_value());
}

TEST(CalibrationReader, AnUnknownKeyIsAnErrorAtItsLine) {
  const std::string text = std::string(kMachine) + "calibration:\n  matmul_eficiency: 0.5\n";
  const auto r = read_machine_profile(text, "m.yaml", "m");
  ASSERT_FALSE(r.has_value());
  const std::string all = to_string(r.error());
  EXPECT_NE(all.find("m.yaml:10:"), std::string::npos) << all;
  EXPECT_NE(all.find("matmul_efficiency"), std::string::npos) << all;  // the nearest key suggested
}

TEST(CalibrationReader, AComputeRateCurveIsReadPointByPoint) {
  const std::string text = std::string(kMachine) +
                           "calibration:\n  compute_rate_by_flops:\n    - {flops: 1e9, rate: 50e9}\n"
                           "    - {flops: 4e9, rate: 80 TFLOP/s}\n";
  const CostParameters p = must(read_machine_profile(text, "m.yaml", "m")).calibration;
  ASSERT_EQ(p.compute_rate_by_flops.size(), 2u);
  EXPECT_EQ(p.compute_rate_by_flops[0].flops, 1e9);
  EXPECT_DOUBLE_EQ(p.compute_rate_by_flops[0].rate.value(), 50e9);
  EXPECT_DOUBLE_EQ(p.compute_rate_by_flops[1].rate.value(), 80e12);
}

TEST(CalibrationReader, ACurveOutOfOrderIsAnErrorAtThePointThatBreaksIt) {
  const std::string text = std::string(kMachine) +
                           "calibration:\n  compute_rate_by_flops:\n    - {flops: 4e9, rate: 50e9}\n"
                           "    - {flops: 1e9, rate: 80e9}\n";
  const auto r = read_machine_profile(text, "m.yaml", "m");
  ASSERT_FALSE(r.has_value());
  const std::string all = to_string(r.error());
  EXPECT_NE(all.find("m.yaml:12:"), std::string::npos) << all;
  EXPECT_NE(all.find("compute_rate_by_flops[1].flops"), std::string::npos) << all;
  EXPECT_NE(all.find("increasing order of flops"), std::string::npos) << all;
}

TEST(CalibrationReader, ACurvePointWithoutARateIsAnError) {
  for (const char* point : {"{flops: 1e9}", "{flops: 1e9, rate: -3}", "{flops: 1e9, rate: 5e9, speed: 1}", "7"}) {
    const std::string text =
        std::string(kMachine) + "calibration:\n  compute_rate_by_flops:\n    - " + point + "\n";
    EXPECT_FALSE(read_machine_profile(text, "m.yaml", "m").has_value()) << point;
  }
}

TEST(CalibrationReader, AnEfficiencyOutOfRangeIsAnError) {
  const std::string text = std::string(kMachine) + "calibration:\n  nvme_efficiency: 40\n";
  EXPECT_FALSE(read_machine_profile(text, "m.yaml", "m").has_value());
}

// Both directions together at more than twice one's rate, or at less than
// one's (which would slow a direction alone too): not the model's drive.
TEST(CalibrationReader, ADuplexOutsideOneToTwoIsAnError) {
  for (const char* value : {"2.5", "0.9", "-1"}) {
    const std::string text = std::string(kMachine) + "calibration:\n  nvme_duplex: " + value + "\n";
    const auto r = read_machine_profile(text, "m.yaml", "m");
    ASSERT_FALSE(r.has_value()) << value;
    EXPECT_NE(core::to_string(r.error()).find("nvme_duplex"), std::string::npos) << core::to_string(r.error());
  }
}

// A share of a rate alone above 1 would speed a pass up beside I/O; 0 or
// below would stop it: not a share.
TEST(CalibrationReader, AComputeShareBesideNvmeOutsideZeroToOneIsAnError) {
  for (const char* value : {"1.5", "0", "-0.5"}) {
    const std::string text = std::string(kMachine) + "calibration:\n  compute_share_beside_nvme: " + value + "\n";
    const auto r = read_machine_profile(text, "m.yaml", "m");
    ASSERT_FALSE(r.has_value()) << value;
    EXPECT_NE(core::to_string(r.error()).find("compute_share_beside_nvme"), std::string::npos) << core::to_string(r.error());
  }
}

TEST(CalibrationReader, WhatIsWrittenReadsBackToTheSameValues) {
  CostParameters p;
  p.matmul_efficiency = 0.123456789012345;
  p.compute_overhead = Seconds(3.25e-6);
  p.h2d_rate = BytesPerSecond(5.5e9);
  p.d2h_rate = BytesPerSecond(4.25e9);
  p.h2d_latency = Seconds(12.5e-6);
  p.d2h_latency = Seconds(350e-6);
  p.h2d_rate_beside_compute = BytesPerSecond(5.25e9);
  p.d2h_rate_beside_compute = BytesPerSecond(3.75e9);
  p.compute_share_beside_nvme = 0.8125;
  p.cpu_core_rate = FlopsPerSecond(1.75e9);
  p.optimizer_threads = 3;
  p.nvme_latency = Seconds(87e-6);
  p.grad_check_rate = BytesPerSecond(0.75e9);
  p.host_lane_cores = 1.4375;
  p.nvme_duplex = 1.625;
  p.nvme_read_rate = BytesPerSecond(1.25e9);
  p.nvme_write_rate = BytesPerSecond(0.875e9);
  p.compute_rate_by_flops = {{.flops = 1.75e9, .rate = FlopsPerSecond(7.125e10)},
                             {.flops = 3.5e9, .rate = FlopsPerSecond(8.375e10)}};
  const std::string text = std::string(kMachine) + "calibration:\n" + calibration_yaml(p);
  const CostParameters q = must(read_machine_profile(text, "m.yaml", "m")).calibration;
  EXPECT_DOUBLE_EQ(q.matmul_efficiency, p.matmul_efficiency);
  EXPECT_NEAR(q.compute_overhead.value(), p.compute_overhead.value(), 1e-15);
  EXPECT_DOUBLE_EQ(q.h2d_rate->value(), p.h2d_rate->value());
  EXPECT_DOUBLE_EQ(q.d2h_rate->value(), p.d2h_rate->value());
  ASSERT_TRUE(q.h2d_latency && q.d2h_latency && q.h2d_rate_beside_compute && q.d2h_rate_beside_compute);
  EXPECT_NEAR(q.h2d_latency->value(), 12.5e-6, 1e-15);
  EXPECT_NEAR(q.d2h_latency->value(), 350e-6, 1e-15);
  EXPECT_DOUBLE_EQ(q.h2d_rate_beside_compute->value(), 5.25e9);
  EXPECT_DOUBLE_EQ(q.d2h_rate_beside_compute->value(), 3.75e9);
  ASSERT_TRUE(q.compute_share_beside_nvme.has_value());
  EXPECT_DOUBLE_EQ(*q.compute_share_beside_nvme, 0.8125);
  EXPECT_DOUBLE_EQ(q.cpu_core_rate.value(), p.cpu_core_rate.value());
  EXPECT_EQ(q.optimizer_threads, 3);
  EXPECT_NEAR(q.nvme_latency.value(), p.nvme_latency.value(), 1e-15);
  EXPECT_DOUBLE_EQ(q.grad_check_rate->value(), 0.75e9);
  ASSERT_TRUE(q.host_lane_cores.has_value());
  EXPECT_DOUBLE_EQ(*q.host_lane_cores, 1.4375);
  EXPECT_DOUBLE_EQ(q.nvme_duplex, 1.625);
  EXPECT_DOUBLE_EQ(q.nvme_read_rate->value(), 1.25e9);
  EXPECT_DOUBLE_EQ(q.nvme_write_rate->value(), 0.875e9);
  EXPECT_EQ(q.compute_rate_by_flops, p.compute_rate_by_flops);
  EXPECT_FALSE(must(read_machine_profile(std::string(kMachine), "m.yaml", "m")).calibration.host_lane_cores)
      << "unset unless given: a real GPU's lanes do not share the host's cores";
}

TEST(CalibrationReader, AMachineMayGiveItsPartsInline) {
  const std::string text = R"(format: stowage/machine/v1
label: inline
source: test
gpu:
  label: a device
  source: measured
  memory: 8 GiB
  memory_bandwidth: 10 GB/s
  fp16_rate: 30 GFLOP/s
  fp32_rate: 30 GFLOP/s
  pcie_generation: 4
  pcie_lanes: 16
gpu_count: 1
host: desktop-ddr5-128gb
nvme_count: 0
calibration:
  matmul_efficiency: 1
)";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "stowage_calibration_reader_test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "inline.yaml";
  std::ofstream(file) << text;
  const MachineSpec m = must(bundled().machine(file.string()));
  EXPECT_EQ(m.gpu.label, "a device");
  EXPECT_DOUBLE_EQ(m.gpu.fp16_rate.value(), 30e9);
  EXPECT_EQ(m.host.name, "desktop-ddr5-128gb");
  EXPECT_DOUBLE_EQ(m.calibration.matmul_efficiency, 1);
  std::filesystem::remove_all(dir);
}

TEST(CalibrationReader, AnInlinePartIsCheckedLikeItsProfile) {
  const std::string text = R"(format: stowage/machine/v1
label: inline
source: test
gpu:
  label: a device
  source: measured
  memory: 8 GiB
gpu_count: 1
host: desktop-ddr5-128gb
nvme_count: 0
)";
  const auto r = read_machine_profile(text, "m.yaml", "m");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(to_string(r.error()).find("fp16_rate"), std::string::npos) << to_string(r.error());
}

}  // namespace
}  // namespace stowage::core
