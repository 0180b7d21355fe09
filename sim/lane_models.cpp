#include "sim/lane_models.h"

#include <algorithm>

namespace stowage::sim {

Capacities capacities_for(const ModelContext& c) {
  const core::GpuSpec& gpu = c.machine.gpu;
  const core::HostSpec& host = c.machine.host;
  // The link runs at the lower generation of the GPU and the host.
  const int generation = std::min(gpu.pcie_generation, host.pcie_generation);
  const double efficiency = c.pinned ? c.params.pcie_pinned_efficiency : c.params.pcie_pageable_efficiency;
  const double link = core::pcie_bandwidth_per_direction(generation, gpu.pcie_lanes).value() * efficiency;
  // A measured rate per direction (calibration) replaces the formula.
  const core::CostParameters& p = c.params;
  Capacities cap{};
  cap[static_cast<size_t>(Resource::kPcieH2d)] = p.h2d_rate ? p.h2d_rate->value() : link;
  cap[static_cast<size_t>(Resource::kPcieD2h)] = p.d2h_rate ? p.d2h_rate->value() : link;
  cap[static_cast<size_t>(Resource::kDram)] = host.dram_bandwidth.value() * c.params.dram_efficiency / c.ranks;
  cap[static_cast<size_t>(Resource::kNvme)] = 1.0;  // device-seconds per second
  const double cores = std::max(1.0, static_cast<double>(host.cpu_cores) / c.ranks);
  const double optimizer_cores = p.optimizer_threads > 0 ? std::min<double>(p.optimizer_threads, cores) : cores;
  cap[static_cast<size_t>(Resource::kCpu)] = p.cpu_core_rate.value() * optimizer_cores;
  return cap;
}

std::optional<Demand> measured_grad_check(const core::Op& op, const ModelContext& c) {
  if (op.kind != core::OpKind::kGradCheck || !c.params.grad_check_rate) return std::nullopt;
  const core::Seconds t(op.bytes.as_double() / c.params.grad_check_rate->value());
  return Demand{.fixed = std::max<core::SimTime>(1, to_sim_time(t))};
}

Demand demand_of(const core::Op& op, const ModelContext& c) {
  if (std::optional<Demand> check = measured_grad_check(op, c)) return *check;
  switch (op.lane) {
    case core::Lane::kGpuCompute: return gpu_compute_demand(op, c);
    case core::Lane::kPcieH2d:
    case core::Lane::kPcieD2h: return pcie_demand(op, c);
    case core::Lane::kNvmeRead:
    case core::Lane::kNvmeWrite: return nvme_demand(op, c);
    case core::Lane::kCpuOptim: return cpu_optimizer_demand(op, c);
    case core::Lane::kGpuComm: return collective_demand(op, c);
  }
  return {.fixed = 1};
}

}  // namespace stowage::sim
