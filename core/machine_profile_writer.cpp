#include "core/machine_profile_writer.h"

#include <cstdio>

#include "core/calibration_reader.h"

namespace stowage::core {
namespace {

// Full precision in base units, which the readers take as plain numbers.
std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string bytes(Bytes b) { return std::to_string(b.count()) + " B"; }

void line(std::string& out, const char* key, const std::string& value) {
  out += "  " + std::string(key) + ": " + value + "\n";
}

void write_gpu(std::string& out, const GpuSpec& g) {
  out += "gpu:\n";
  line(out, "label", yaml_quoted(g.label));
  line(out, "source", yaml_quoted(g.source));
  line(out, "memory", bytes(g.memory));
  line(out, "memory_bandwidth", number(g.memory_bandwidth.value()));
  line(out, "fp16_rate", number(g.fp16_rate.value()));
  if (g.bf16_rate) line(out, "bf16_rate", number(g.bf16_rate->value()));
  line(out, "fp32_rate", number(g.fp32_rate.value()));
  line(out, "pcie_generation", std::to_string(g.pcie_generation));
  line(out, "pcie_lanes", std::to_string(g.pcie_lanes));
  if (g.gpu_link_bandwidth) line(out, "gpu_link_bandwidth", number(g.gpu_link_bandwidth->value()));
  if (!g.device_names.empty()) {
    std::string names;
    for (const std::string& name : g.device_names) names += (names.empty() ? "" : ", ") + yaml_quoted(name);
    line(out, "device_names", "[" + names + "]");
  }
}

void write_host(std::string& out, const HostSpec& h) {
  out += "host:\n";
  line(out, "label", yaml_quoted(h.label));
  line(out, "source", yaml_quoted(h.source));
  line(out, "cpu_cores", std::to_string(h.cpu_cores));
  line(out, "sockets", std::to_string(h.sockets));
  line(out, "dram", bytes(h.dram));
  line(out, "dram_bandwidth", number(h.dram_bandwidth.value()));
  line(out, "pcie_lanes", std::to_string(h.pcie_lanes));
  line(out, "pcie_generation", std::to_string(h.pcie_generation));
}

void write_nvme(std::string& out, const NvmeSpec& n) {
  out += "nvme:\n";
  line(out, "label", yaml_quoted(n.label));
  line(out, "source", yaml_quoted(n.source));
  line(out, "capacity", bytes(n.capacity));
  line(out, "sequential_read", number(n.sequential_read.value()));
  line(out, "sequential_write", number(n.sequential_write.value()));
  if (n.sustained_write) line(out, "sustained_write", number(n.sustained_write->value()));
  line(out, "endurance", bytes(n.endurance));
  line(out, "pcie_generation", std::to_string(n.pcie_generation));
  line(out, "pcie_lanes", std::to_string(n.pcie_lanes));
}

}  // namespace

std::string yaml_quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string write_machine_profile(const MachineSpec& m) {
  std::string out = "format: stowage/machine/v1\n";
  out += "label: " + yaml_quoted(m.label) + "\n";
  out += "source: " + yaml_quoted(m.source) + "\n";
  write_gpu(out, m.gpu);
  out += "gpu_count: " + std::to_string(m.gpu_count) + "\n";
  write_host(out, m.host);
  if (m.nvme_count > 0) write_nvme(out, m.nvme);
  out += "nvme_count: " + std::to_string(m.nvme_count) + "\n";
  out += "calibration:\n" + calibration_yaml(m.calibration);
  return out;
}

}  // namespace stowage::core
