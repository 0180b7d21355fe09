#include "core/calibration_reader.h"

#include <cstdio>
#include <optional>
#include <vector>

namespace stowage::core {
namespace {

// Efficiencies above 1 are allowed up to 4: a measured "device" (the CPU
// backend) can beat a nominal peak written into its profile.
constexpr Bounds<double> kEfficiency{1e-4, 4};
// A share of a rate alone that something beside slows it to.
constexpr Bounds<double> kShare{0.01, 1};
constexpr Bounds<Seconds> kOverhead{Seconds(0), Seconds(10)};
constexpr Bounds<BytesPerSecond> kRate{BytesPerSecond(1e6), BytesPerSecond(10e12)};
constexpr Bounds<FlopsPerSecond> kCoreRate{FlopsPerSecond(1e6), FlopsPerSecond(1e15)};

constexpr Bounds<double> kCurveFlops{1, 1e21};
constexpr Bounds<FlopsPerSecond> kCurveRate{FlopsPerSecond(1e6), FlopsPerSecond(100e15)};

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// compute_rate_by_flops: a list of {flops, rate}, in increasing order of
// flops. Kept only when every point is right, so that a bad point never
// leaves a curve with a hole where compute_rate would interpolate across it.
void read_rate_curve(YamlMap& c, std::vector<RatePoint>& curve) {
  std::optional<std::vector<YamlMap>> points = c.list_of_maps("compute_rate_by_flops", Need::kOptional);
  if (!points) return;
  std::vector<RatePoint> read;
  bool all_read = true;
  for (YamlMap& point : *points) {
    if (!point.is_map()) {
      all_read = false;
      continue;
    }
    const std::optional<double> flops = point.number("flops", Need::kRequired, kCurveFlops);
    const std::optional<FlopsPerSecond> rate = point.flops_rate("rate", Need::kRequired, kCurveRate);
    point.finish();
    if (!flops || !rate) {
      all_read = false;
    } else if (!read.empty() && *flops <= read.back().flops) {
      point.report("flops", "is " + number(*flops) + ", not more than the point before it (" +
                                number(read.back().flops) + ")",
                   "points in increasing order of flops");
      all_read = false;
    } else {
      read.push_back({.flops = *flops, .rate = *rate});
    }
  }
  if (all_read) curve = std::move(read);
}

}  // namespace

void read_calibration(YamlMap& c, CostParameters& p) {
  assign(p.matmul_efficiency, c.number("matmul_efficiency", Need::kOptional, kEfficiency));
  assign(p.hbm_efficiency, c.number("hbm_efficiency", Need::kOptional, kEfficiency));
  assign(p.compute_overhead, c.duration("compute_overhead", Need::kOptional, kOverhead));
  read_rate_curve(c, p.compute_rate_by_flops);
  assign(p.pcie_pinned_efficiency, c.number("pcie_pinned_efficiency", Need::kOptional, kEfficiency));
  assign(p.pcie_pageable_efficiency, c.number("pcie_pageable_efficiency", Need::kOptional, kEfficiency));
  assign(p.pcie_latency, c.duration("pcie_latency", Need::kOptional, kOverhead));
  if (auto r = c.bandwidth("h2d_rate", Need::kOptional, kRate)) p.h2d_rate = *r;
  if (auto r = c.bandwidth("d2h_rate", Need::kOptional, kRate)) p.d2h_rate = *r;
  if (auto l = c.duration("h2d_latency", Need::kOptional, kOverhead)) p.h2d_latency = *l;
  if (auto l = c.duration("d2h_latency", Need::kOptional, kOverhead)) p.d2h_latency = *l;
  if (auto r = c.bandwidth("h2d_rate_beside_compute", Need::kOptional, kRate)) p.h2d_rate_beside_compute = *r;
  if (auto r = c.bandwidth("d2h_rate_beside_compute", Need::kOptional, kRate)) p.d2h_rate_beside_compute = *r;
  if (auto s = c.number("compute_share_beside_nvme", Need::kOptional, kShare)) p.compute_share_beside_nvme = *s;
  assign(p.nvme_efficiency, c.number("nvme_efficiency", Need::kOptional, kEfficiency));
  assign(p.nvme_latency, c.duration("nvme_latency", Need::kOptional, kOverhead));
  if (auto r = c.bandwidth("nvme_read_rate", Need::kOptional, kRate)) p.nvme_read_rate = *r;
  if (auto r = c.bandwidth("nvme_write_rate", Need::kOptional, kRate)) p.nvme_write_rate = *r;
  assign(p.nvme_duplex, c.number("nvme_duplex", Need::kOptional, {kMinNvmeDuplex, kMaxNvmeDuplex}));
  assign(p.dram_efficiency, c.number("dram_efficiency", Need::kOptional, kEfficiency));
  assign(p.adam_flops_per_param, c.number("adam_flops_per_param", Need::kOptional, {1, 1000}));
  assign(p.cpu_core_rate, c.flops_rate("cpu_core_rate", Need::kOptional, kCoreRate));
  assign(p.optimizer_threads, c.integer("optimizer_threads", Need::kOptional, {0, 4096}));
  if (auto r = c.bandwidth("grad_check_rate", Need::kOptional, kRate)) p.grad_check_rate = *r;
  if (auto r = c.number("host_lane_cores", Need::kOptional, {0.5, 4096})) p.host_lane_cores = *r;
  assign(p.comm_latency, c.duration("comm_latency", Need::kOptional, kOverhead));
  assign(p.comm_efficiency, c.number("comm_efficiency", Need::kOptional, kEfficiency));
  c.finish();
}

std::string calibration_yaml(const CostParameters& p) {
  std::string out;
  auto line = [&out](const char* key, const std::string& value) { out += "  " + std::string(key) + ": " + value + "\n"; };
  auto ns = [](Seconds s) { return number(s.value() * 1e9) + " ns"; };
  line("matmul_efficiency", number(p.matmul_efficiency));
  line("hbm_efficiency", number(p.hbm_efficiency));
  line("compute_overhead", ns(p.compute_overhead));
  if (!p.compute_rate_by_flops.empty()) {
    out += "  compute_rate_by_flops:\n";
    for (const RatePoint& point : p.compute_rate_by_flops)
      out += "    - {flops: " + number(point.flops) + ", rate: " + number(point.rate.value()) + "}\n";
  }
  line("pcie_pinned_efficiency", number(p.pcie_pinned_efficiency));
  line("pcie_pageable_efficiency", number(p.pcie_pageable_efficiency));
  line("pcie_latency", ns(p.pcie_latency));
  if (p.h2d_rate) line("h2d_rate", number(p.h2d_rate->value()));
  if (p.d2h_rate) line("d2h_rate", number(p.d2h_rate->value()));
  if (p.h2d_latency) line("h2d_latency", ns(*p.h2d_latency));
  if (p.d2h_latency) line("d2h_latency", ns(*p.d2h_latency));
  if (p.h2d_rate_beside_compute) line("h2d_rate_beside_compute", number(p.h2d_rate_beside_compute->value()));
  if (p.d2h_rate_beside_compute) line("d2h_rate_beside_compute", number(p.d2h_rate_beside_compute->value()));
  if (p.compute_share_beside_nvme) line("compute_share_beside_nvme", number(*p.compute_share_beside_nvme));
  line("nvme_efficiency", number(p.nvme_efficiency));
  line("nvme_latency", ns(p.nvme_latency));
  if (p.nvme_read_rate) line("nvme_read_rate", number(p.nvme_read_rate->value()));
  if (p.nvme_write_rate) line("nvme_write_rate", number(p.nvme_write_rate->value()));
  line("nvme_duplex", number(p.nvme_duplex));
  line("dram_efficiency", number(p.dram_efficiency));
  line("adam_flops_per_param", number(p.adam_flops_per_param));
  line("cpu_core_rate", number(p.cpu_core_rate.value()));
  line("optimizer_threads", std::to_string(p.optimizer_threads));
  if (p.grad_check_rate) line("grad_check_rate", number(p.grad_check_rate->value()));
  if (p.host_lane_cores) line("host_lane_cores", number(*p.host_lane_cores));
  line("comm_latency", ns(p.comm_latency));
  line("comm_efficiency", number(p.comm_efficiency));
  return out;
}

}  // namespace stowage::core
