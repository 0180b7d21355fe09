#include "probe/profile_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "core/profile_catalog.h"
#include "core/trace_origin.h"

namespace stowage::probe {
namespace {

Measurements example() {
  Measurements m;
  m.cores = 2;
  m.dram_bytes = int64_t{24} << 30;
  m.dram_adam_pattern = {{.threads = 1, .rate = 9e9}, {.threads = 2, .rate = 12e9}};
  m.memcpy_pageable = {{.bytes = 4 << 20, .rate = 6e9}, {.bytes = 64 << 20, .rate = 5e9}};
  m.memcpy_locked = {{.bytes = 4 << 20, .rate = 7e9}, {.bytes = 64 << 20, .rate = 5.5e9}};
  m.locked = true;
  m.small_copy_seconds = 1e-6;
  m.adam_params = {{.threads = 1, .rate = 200e6}, {.threads = 2, .rate = 350e6}};
  m.grad_check_bytes_per_s = 1.5e9;
  m.gemm = {{.rows = 1024, .in = 256, .out = 1024, .rate = 40e9}, {.rows = 512, .in = 768, .out = 768, .rate = 50e9}};
  m.small_gemm_seconds = 2e-6;
  // Out of order, two of equal FLOPs: sorted, and those two merged.
  m.block_ops = {{.what = "backward", .flops = 4e9, .rate = 60e9},
                 {.what = "forward", .flops = 2e9, .rate = 30e9},
                 {.what = "forward, another shape", .flops = 2e9, .rate = 40e9}};
  m.disk_dir = "/tmp";
  m.disk_capacity = 100'000'000'000;
  m.disk = {{.block = 1 << 20, .depth = 1, .read = 0.5e9, .write = 0.4e9},
            {.block = 1 << 20, .depth = 8, .read = 1.5e9, .write = 1.0e9}};
  m.disk_request_seconds = 90e-6;
  // Beside each other, reads at 1.2 of their 1.5 GB/s and writes at 0.5 of
  // their 1.0: 0.8 + 0.5 of the drive.
  m.disk_mixed = DiskRate{.block = 1 << 20, .depth = 8, .read = 1.2e9, .write = 0.5e9};
  m.seconds = 30;
  return m;
}

// `yaml` read back as a machine profile from a file in a folder of its own
// (`folder`, under the temporary directory, removed again), as a command
// reads a profile it is given by path.
core::Result<core::MachineSpec> loaded(const std::string& yaml, const std::string& folder) {
  const auto dir = std::filesystem::temp_directory_path() / folder;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "m.yaml") << yaml;
  core::Result<core::MachineSpec> m = core::ProfileCatalog(STOWAGE_PROFILES_DIR).machine((dir / "m.yaml").string());
  std::filesystem::remove_all(dir);
  return m;
}

// What the writer writes loads as a machine profile, with the measured
// rates where the simulator looks for them.
TEST(ProfileWriter, WritesAMachineProfileThatLoads) {
  const std::string yaml = machine_profile_yaml(example(), {.name = "test", .device_memory = int64_t{2} << 30});
  const core::Result<core::MachineSpec> m = loaded(yaml, "stowage_profile_writer_test");
  ASSERT_TRUE(m.has_value()) << core::to_string(m.error()) << "\n" << yaml;
  EXPECT_EQ(m->gpu.memory.count(), int64_t{2} << 30);
  EXPECT_DOUBLE_EQ(m->gpu.fp16_rate.value(), 50e9);  // the median of two: the upper one
  EXPECT_DOUBLE_EQ(m->host.dram_bandwidth.value(), 12e9);
  EXPECT_EQ(m->host.cpu_cores, 2);
  EXPECT_EQ(m->nvme_count, 1);
  EXPECT_DOUBLE_EQ(m->nvme.sequential_read.value(), 1.5e9);  // 1 MiB at depth 8, the executor's default
  EXPECT_DOUBLE_EQ(m->calibration.h2d_rate->value(), 5.5e9);
  EXPECT_EQ(m->calibration.optimizer_threads, 1);
  // 200 M params/s x 12 FLOP per param, on one thread.
  EXPECT_DOUBLE_EQ(m->calibration.cpu_core_rate.value(), 2.4e9);
  EXPECT_NEAR(m->calibration.nvme_latency.value(), 90e-6, 1e-12);
  EXPECT_NEAR(m->calibration.nvme_duplex, 1.3, 1e-9);
  // The gradient check as measured, not the roofline an unmeasured machine gets.
  ASSERT_TRUE(m->calibration.grad_check_rate.has_value());
  EXPECT_DOUBLE_EQ(m->calibration.grad_check_rate->value(), 1.5e9);
  // The device's optimizer is CPU Adam at the optimizer's one thread: 28 B
  // a parameter at 200 M params/s, not the 5.5 GB/s of the largest copy.
  EXPECT_DOUBLE_EQ(m->gpu.memory_bandwidth.value(), 28 * 200e6);
  // The GPT block ops' rates by their FLOPs: the compute rate curve.
  const std::vector<core::RatePoint> curve{{.flops = 2e9, .rate = core::FlopsPerSecond(35e9)},
                                           {.flops = 4e9, .rate = core::FlopsPerSecond(60e9)}};
  EXPECT_EQ(m->calibration.compute_rate_by_flops, curve);
  EXPECT_NE(yaml.find("GPT block"), std::string::npos) << yaml;
  // Its device is the CPU backend's, by the name a run on it records, so a
  // comparison knows such a run is of this profile (core/trace_origin.h).
  EXPECT_EQ(m->gpu.device_names, std::vector<std::string>{std::string(core::kCpuBackendDeviceName)});
}

// With --gpu the device is that GPU's bundled profile, by name: nothing of
// the CPU backend's device (its products, copies, gradient check, lanes on
// host cores) is in the calibration, while the host, its CPU Adam and the
// disk are as measured, and the host's PCIe link is the GPU's.
TEST(ProfileWriter, AGpuProfileNamesTheGpuAndKeepsTheHostsMeasurements) {
  const core::ProfileCatalog catalog(STOWAGE_PROFILES_DIR);
  Measurements measured = example();
  measured.gemm.clear();  // ProbeOptions::cpu_device off: not measured
  measured.block_ops.clear();
  const std::string yaml =
      machine_profile_yaml(measured, {.name = "test", .optimizer_threads = 2, .gpu = *catalog.gpu("h200")});
  EXPECT_NE(yaml.find("\ngpu: h200\n"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("sgemm"), std::string::npos) << yaml;
  const core::Result<core::MachineSpec> m = loaded(yaml, "stowage_profile_writer_gpu_test");
  ASSERT_TRUE(m.has_value()) << core::to_string(m.error()) << "\n" << yaml;
  EXPECT_EQ(m->gpu.name, "h200");
  EXPECT_EQ(m->gpu.memory, catalog.gpu("h200")->memory);
  EXPECT_EQ(m->gpu.device_names, std::vector<std::string>{"NVIDIA H200"});  // what a CUDA run there records
  EXPECT_EQ(m->host.pcie_generation, 5);
  EXPECT_DOUBLE_EQ(m->host.dram_bandwidth.value(), 12e9);
  EXPECT_DOUBLE_EQ(m->nvme.sequential_read.value(), 1.5e9);
  const core::CostParameters defaults;
  const core::CostParameters& c = m->calibration;
  EXPECT_EQ(c.matmul_efficiency, defaults.matmul_efficiency);
  EXPECT_EQ(c.hbm_efficiency, defaults.hbm_efficiency);
  EXPECT_TRUE(c.compute_rate_by_flops.empty());
  EXPECT_FALSE(c.h2d_rate.has_value());
  EXPECT_FALSE(c.d2h_rate.has_value());
  EXPECT_FALSE(c.grad_check_rate.has_value());
  EXPECT_FALSE(c.host_lane_cores.has_value());
  EXPECT_EQ(c.pcie_latency, defaults.pcie_latency);
  // The host's: CPU Adam at two threads (350 M params/s x 12 FLOP / 2), the drive.
  EXPECT_EQ(c.optimizer_threads, 2);
  EXPECT_DOUBLE_EQ(c.cpu_core_rate.value(), 350e6 * 12 / 2);
  EXPECT_NEAR(c.nvme_duplex, 1.3, 1e-9);
  EXPECT_NEAR(c.nvme_latency.value(), 90e-6, 1e-12);
  // The CPU backend's profile of the same host agrees on all of that.
  const core::CostParameters cpu = measured_calibration(example(), {.name = "test", .optimizer_threads = 2});
  EXPECT_EQ(cpu.cpu_core_rate.value(), c.cpu_core_rate.value());
  EXPECT_EQ(cpu.nvme_duplex, c.nvme_duplex);
  EXPECT_TRUE(cpu.host_lane_cores.has_value());
}

// --gpu auto measured the GPU: its calibration is the measured one
// (gpu_calibration.h), the measurements are listed, and the source says
// which device was measured.
TEST(ProfileWriter, AMeasuredGpuCalibratesItsProfile) {
  const core::ProfileCatalog catalog(STOWAGE_PROFILES_DIR);
  Measurements measured = example();
  measured.gpu = GpuMeasurements{.device = "NVIDIA H200",
                                 .pinned = {{.bytes = int64_t{16} << 20, .h2d = 50e9, .d2h = 52e9},
                                            {.bytes = int64_t{256} << 20, .h2d = 55e9, .d2h = 54e9}},
                                 .hbm_copy = 4200e9,
                                 .gemm_type = "bf16",
                                 .gemms = {800e12, 900e12}};
  const std::string yaml = machine_profile_yaml(measured, {.name = "test", .gpu = *catalog.gpu("h200")});
  EXPECT_NE(yaml.find("--gpu auto, on the GPU the driver names 'NVIDIA H200': "), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("#   NVIDIA H200 (executor/cuda/device_probe.h), pinned copies h2d / d2h: 16 MiB 50 "
                      "GB/s / 52 GB/s;"),
            std::string::npos)
      << yaml;
  const core::Result<core::MachineSpec> m = loaded(yaml, "stowage_profile_writer_measured_gpu_test");
  ASSERT_TRUE(m.has_value()) << core::to_string(m.error()) << "\n" << yaml;
  EXPECT_DOUBLE_EQ(m->calibration.h2d_rate->value(), 52.5e9);  // the median of two: their mean
  EXPECT_DOUBLE_EQ(m->calibration.d2h_rate->value(), 53e9);
  EXPECT_NEAR(m->calibration.hbm_efficiency, 4200.0 / 4800, 1e-12);
  EXPECT_NEAR(m->calibration.matmul_efficiency, 850.0 / 989, 1e-12);
  EXPECT_FALSE(m->calibration.host_lane_cores.has_value());
}

// With two optimizer threads the device's Adam runs at the two-thread rate.
TEST(ProfileWriter, TheDevicesMemoryRateIsCpuAdamsAtTheOptimizersThreads) {
  const std::string yaml =
      machine_profile_yaml(example(), {.name = "test", .device_memory = int64_t{2} << 30, .optimizer_threads = 2});
  const core::Result<core::MachineSpec> m = loaded(yaml, "stowage_profile_writer_threads_test");
  ASSERT_TRUE(m.has_value()) << core::to_string(m.error());
  EXPECT_DOUBLE_EQ(m->gpu.memory_bandwidth.value(), 28 * 350e6);
}

TEST(ProfileWriter, WithoutADiskTheMachineHasNone) {
  Measurements m = example();
  m.disk_dir.reset();
  m.disk.clear();
  const std::string yaml = machine_profile_yaml(m, {.name = "test"});
  EXPECT_NE(yaml.find("nvme_count: 0"), std::string::npos);
  EXPECT_EQ(yaml.find("\nnvme:"), std::string::npos);
}

// The mixed run is measured against the rate the profile prices writes at:
// where a long write slowed once the drive's cache filled, the sustained
// rate, so that writes beside reads are not counted as slowed by it.
TEST(ProfileWriter, TheDuplexIsMeasuredAgainstTheSustainedWrite) {
  Measurements m = example();
  m.disk_write_after_cache = 0.5e9;
  EXPECT_NEAR(measured_calibration(m, {.name = "t"}).nvme_duplex, 0.8 + 1.0, 1e-9);
  m.disk_mixed.reset();
  EXPECT_EQ(measured_calibration(m, {.name = "t"}).nvme_duplex, core::CostParameters{}.nvme_duplex);
}

// The store probe is reported beside the sweep, and the drive stays the
// sweep's entry nearest the executor's default (the store's rates predicted
// the executor's NVMe steps worse: profile_writer.cpp).
TEST(ProfileWriter, TheStoresRatesAreReportedAndTheDriveIsTheSweeps) {
  Measurements m = example();
  m.store = {{.block = 1 << 20, .depth = 8, .callers = 2, .read = 2e9, .write = 1.6e9,
              .mixed_read = 1.8e9, .mixed_write = 0.8e9}};
  const std::string yaml = machine_profile_yaml(m, {.name = "test", .device_memory = int64_t{2} << 30});
  EXPECT_NE(yaml.find("the executor's store (io_uring), 1024 KiB x8, 2 region(s) at a time per direction: 2 GB/s "
                      "read, 1.6 GB/s written alone; 1.8 GB/s read beside 0.8 GB/s written"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("sequential_read: 1.5e+09"), std::string::npos) << yaml;
  EXPECT_NEAR(measured_calibration(m, {.name = "t"}).nvme_duplex, 1.3, 1e-9);
}

}  // namespace
}  // namespace stowage::probe
