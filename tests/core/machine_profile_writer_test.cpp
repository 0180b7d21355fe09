#include "core/machine_profile_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/calibration_reader.h"
#include "tests/core/test_profiles.h"

namespace stowage::core {
namespace {

using testing::bundled;
using testing::must;

void expect_same(const MachineSpec& a, const MachineSpec& b) {
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.gpu_count, b.gpu_count);
  EXPECT_EQ(a.nvme_count, b.nvme_count);
  EXPECT_EQ(a.gpu.label, b.gpu.label);
  EXPECT_EQ(a.gpu.memory, b.gpu.memory);
  EXPECT_EQ(a.gpu.memory_bandwidth.value(), b.gpu.memory_bandwidth.value());
  EXPECT_EQ(a.gpu.fp16_rate.value(), b.gpu.fp16_rate.value());
  EXPECT_EQ(a.gpu.bf16_rate.has_value(), b.gpu.bf16_rate.has_value());
  if (a.gpu.bf16_rate && b.gpu.bf16_rate) {
    EXPECT_EQ(a.gpu.bf16_rate->value(), b.gpu.bf16_rate->value());
  }
  EXPECT_EQ(a.gpu.fp32_rate.value(), b.gpu.fp32_rate.value());
  EXPECT_EQ(a.gpu.pcie_generation, b.gpu.pcie_generation);
  EXPECT_EQ(a.gpu.pcie_lanes, b.gpu.pcie_lanes);
  EXPECT_EQ(a.gpu.gpu_link_bandwidth.has_value(), b.gpu.gpu_link_bandwidth.has_value());
  EXPECT_EQ(a.gpu.device_names, b.gpu.device_names);
  EXPECT_EQ(a.host.cpu_cores, b.host.cpu_cores);
  EXPECT_EQ(a.host.sockets, b.host.sockets);
  EXPECT_EQ(a.host.dram, b.host.dram);
  EXPECT_EQ(a.host.dram_bandwidth.value(), b.host.dram_bandwidth.value());
  EXPECT_EQ(a.host.pcie_lanes, b.host.pcie_lanes);
  EXPECT_EQ(a.host.pcie_generation, b.host.pcie_generation);
  if (a.nvme_count > 0) {
    EXPECT_EQ(a.nvme.capacity, b.nvme.capacity);
    EXPECT_EQ(a.nvme.sequential_read.value(), b.nvme.sequential_read.value());
    EXPECT_EQ(a.nvme.sequential_write.value(), b.nvme.sequential_write.value());
    EXPECT_EQ(a.nvme.sustained_write.has_value(), b.nvme.sustained_write.has_value());
    EXPECT_EQ(a.nvme.endurance, b.nvme.endurance);
  }
  EXPECT_EQ(calibration_yaml(a.calibration), calibration_yaml(b.calibration));
}

// Every bundled machine, written and read back through the catalog (as a
// plan's machine path is read), is the same machine; a label with quotes
// and a backslash survives.
TEST(MachineProfileWriter, EveryBundledMachineReadsBackTheSame) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("stowage-machine-writer-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const ProfileCatalog catalog = bundled();
  for (const std::string& name : catalog.names(ProfileKind::kMachine)) {
    SCOPED_TRACE(name);
    MachineSpec m = must(catalog.machine(name));
    m.label += " \"changed\" \\ with: a colon";
    m.host.dram = Bytes(int64_t{512} << 30);
    m.gpu.device_names.push_back("A \"quoted\" name, with a comma");
    const std::filesystem::path path = dir / (name + ".machine.yaml");
    std::ofstream(path) << write_machine_profile(m);
    auto back = catalog.machine(path.string());
    ASSERT_TRUE(back.has_value()) << to_string(back.error());
    expect_same(m, *back);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stowage::core
