#include "sim/lane_models.h"

#include <algorithm>
#include <limits>

namespace stowage::sim {

namespace {

// On a machine whose device is a program on the host, every flow's work is
// counted in seconds of running alone (its own bottleneck at full rate), so
// that fair sharing splits time evenly between lanes whatever their units,
// as the OS scheduler splits the cores; an op on one of the lanes' threads
// also takes one thread-second per second of kHostThreads.
Demand on_host_threads(const Demand& d, const Capacities& cap, bool uses_a_thread) {
  const auto threads = static_cast<size_t>(Resource::kHostThreads);
  if (d.work <= 0) {  // a fixed duration: that many seconds of one thread
    if (!uses_a_thread) return d;
    Demand out{.work = std::max(1e-9, static_cast<double>(d.fixed) * 1e-9), .latency = 0, .max_rate = 1, .queue = d.queue};
    out.per_unit[threads] = 1;
    return out;
  }
  // The rate the op reaches alone, bottlenecked by its own resources.
  const double alone = alone_rate(d, cap);
  Demand out{.work = d.work / alone, .latency = d.latency, .max_rate = 1, .queue = d.queue};
  for (int r = 0; r < kResourceCount; ++r) out.per_unit[static_cast<size_t>(r)] = d.per_unit[static_cast<size_t>(r)] * alone;
  out.per_unit[threads] = uses_a_thread ? 1 : 0;
  return out;
}

Demand lane_demand(const core::Op& op, const ModelContext& c) {
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

}  // namespace

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
  // Device-seconds per second: each direction at most its own rate, both
  // together at most nvme_duplex of the drive.
  cap[static_cast<size_t>(Resource::kNvmeReads)] = 1.0;
  cap[static_cast<size_t>(Resource::kNvmeWrites)] = 1.0;
  cap[static_cast<size_t>(Resource::kNvme)] = p.nvme_duplex;
  const double cores = std::max(1.0, static_cast<double>(host.cpu_cores) / c.ranks);
  const double optimizer_cores = p.optimizer_threads > 0 ? std::min<double>(p.optimizer_threads, cores) : cores;
  cap[static_cast<size_t>(Resource::kCpu)] = p.cpu_core_rate.value() * optimizer_cores;
  if (p.host_lane_cores) cap[static_cast<size_t>(Resource::kHostThreads)] = *p.host_lane_cores / c.ranks;
  return cap;
}

bool runs_on_a_host_thread(core::Lane lane) {
  // The NVMe lanes' threads mostly wait on the drive; the copies' threads
  // are woken for short bursts (lane_models.h); a collective has no CPU
  // backend.
  return lane == core::Lane::kGpuCompute || lane == core::Lane::kCpuOptim;
}

std::optional<Demand> measured_grad_check(const core::Op& op, const ModelContext& c) {
  if (op.kind != core::OpKind::kGradCheck || !c.params.grad_check_rate) return std::nullopt;
  const core::Seconds t(op.bytes.as_double() / c.params.grad_check_rate->value());
  return Demand{.fixed = std::max<core::SimTime>(1, to_sim_time(t))};
}

Demand demand_of(const core::Op& op, const ModelContext& c, const Capacities& capacities) {
  const Demand alone = lane_demand(op, c);
  if (!c.params.host_lane_cores) return alone;
  Demand d = on_host_threads(alone, capacities, runs_on_a_host_thread(op.lane));
  const bool nvme = op.lane == core::Lane::kNvmeRead || op.lane == core::Lane::kNvmeWrite;
  d.crowds = op.lane == core::Lane::kGpuCompute ? kCrowdCompute : nvme ? kCrowdNvme : 0;
  // The limits are in seconds of running alone, as the flow's work: the
  // rate beside the crowd over the rate alone.
  std::optional<core::BytesPerSecond> beside;
  if (op.lane == core::Lane::kPcieH2d) beside = c.params.h2d_rate_beside_compute;
  if (op.lane == core::Lane::kPcieD2h) beside = c.params.d2h_rate_beside_compute;
  if (beside && alone.work > 0) {
    d.crowded_by = kCrowdCompute;
    d.crowded_max_rate = std::min(1.0, beside->value() / alone_rate(alone, capacities));
  }
  if (core::is_layer_pass(op.kind) && c.params.compute_share_beside_nvme) {
    d.crowded_by = kCrowdNvme;
    d.crowded_max_rate = std::min(1.0, *c.params.compute_share_beside_nvme);
  }
  return d;
}

}  // namespace stowage::sim
