#include "planner/machine_change.h"

namespace stowage::planner {

core::MachineSpec apply(const core::MachineSpec& machine, const MachineChange& c, const core::NvmeSpec& spare_drive) {
  core::MachineSpec m = machine;
  if (c.add_nvme > 0) {
    if (m.nvme_count == 0) m.nvme = spare_drive;
    m.nvme_count += c.add_nvme;
  }
  if (c.gpu) m.gpu = *c.gpu;  // before the link: --gpu with --pcie runs the new GPU at that generation
  if (c.pcie_generation) {
    m.gpu.pcie_generation = *c.pcie_generation;
    m.host.pcie_generation = *c.pcie_generation;
  }
  if (c.ram) m.host.dram = *c.ram;
  m.name += " (changed)";
  return m;
}

std::string describe(const MachineChange& c) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (c.add_nvme > 0) add("add " + std::to_string(c.add_nvme) + " NVMe drive" + (c.add_nvme > 1 ? "s" : ""));
  if (c.pcie_generation) add("PCIe Gen" + std::to_string(*c.pcie_generation));
  if (c.ram) add(core::format_bytes(*c.ram, core::Prefix::kBinary) + " RAM");
  if (c.gpu) add("GPU " + c.gpu->name);
  return s.empty() ? "no change" : s;
}

}  // namespace stowage::planner
