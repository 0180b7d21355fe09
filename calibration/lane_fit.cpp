#include "calibration/lane_fit.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "calibration/lane_compare.h"
#include "sim/simulator.h"

namespace stowage::calibration {
namespace {

using core::Lane;

constexpr int kRounds = 6;
// The same bounds as fit.cpp's: a fitted efficiency stays physical enough
// that one bad trace cannot make the model absurd.
constexpr double kMinEfficiency = 1e-4;
constexpr double kMaxEfficiency = 4.0;

double scaled(double value, double factor) {
  return std::clamp(value * factor, kMinEfficiency, kMaxEfficiency);
}

// The lanes fitted together, and what each scales.
enum class Group { kCompute, kPcie, kOptimizer, kNvme, kComm };
constexpr std::array<Group, 5> kGroups = {Group::kCompute, Group::kPcie, Group::kOptimizer, Group::kNvme,
                                          Group::kComm};

std::vector<Lane> lanes_of(Group g) {
  switch (g) {
    case Group::kCompute:
      return {Lane::kGpuCompute};
    case Group::kPcie:
      return {Lane::kPcieH2d, Lane::kPcieD2h};
    case Group::kOptimizer:
      return {Lane::kCpuOptim};
    case Group::kNvme:
      return {Lane::kNvmeRead, Lane::kNvmeWrite};
    case Group::kComm:
      return {Lane::kGpuComm};
  }
  return {};
}

const char* fields_of(Group g) {
  switch (g) {
    case Group::kCompute:
      return "gpu.compute: matmul_efficiency, hbm_efficiency, compute_overhead";
    case Group::kPcie:
      return "pcie: pcie_pinned_efficiency, pcie_pageable_efficiency";
    case Group::kOptimizer:
      return "cpu.optim: cpu_core_rate, dram_efficiency";
    case Group::kNvme:
      return "nvme: nvme_efficiency (and nvme_read_rate, nvme_write_rate where set)";
    case Group::kComm:
      return "gpu.comm: comm_efficiency";
  }
  return "";
}

// Faster by `f` (> 1: the lane ran faster than predicted).
void speed_up(core::CostParameters& p, Group g, double f) {
  switch (g) {
    case Group::kCompute:
      p.matmul_efficiency = scaled(p.matmul_efficiency, f);
      p.hbm_efficiency = scaled(p.hbm_efficiency, f);
      p.compute_overhead = core::Seconds(p.compute_overhead.value() / f);
      break;
    case Group::kPcie:
      p.pcie_pinned_efficiency = scaled(p.pcie_pinned_efficiency, f);
      p.pcie_pageable_efficiency = scaled(p.pcie_pageable_efficiency, f);
      for (std::optional<core::BytesPerSecond>* r :
           {&p.h2d_rate, &p.d2h_rate, &p.h2d_rate_beside_compute, &p.d2h_rate_beside_compute}) {
        if (*r) *r = core::BytesPerSecond((*r)->value() * f);
      }
      break;
    case Group::kOptimizer:
      p.cpu_core_rate = core::FlopsPerSecond(p.cpu_core_rate.value() * f);
      p.dram_efficiency = scaled(p.dram_efficiency, f);
      break;
    case Group::kNvme:
      p.nvme_efficiency = scaled(p.nvme_efficiency, f);
      if (p.nvme_read_rate) p.nvme_read_rate = core::BytesPerSecond(p.nvme_read_rate->value() * f);
      if (p.nvme_write_rate) p.nvme_write_rate = core::BytesPerSecond(p.nvme_write_rate->value() * f);
      break;
    case Group::kComm:
      p.comm_efficiency = scaled(p.comm_efficiency, f);
      break;
  }
}

double busy(const TraceMetrics& m, Group g) {
  double total = 0;
  for (Lane lane : lanes_of(g)) total += busy_per_step(m, lane);
  return total;
}

TraceMetrics simulated(const core::Schedule& s, const core::MachineSpec& m, const core::CostParameters& p) {
  return trace_metrics(s, sim::simulate(s, m, {.params = p}).timeline);
}

}  // namespace

FitReport fit_lanes(const core::Schedule& schedule, const core::MachineSpec& machine,
                    const core::CostParameters& start, const TraceMetrics& measured) {
  FitReport r{.params = start};
  const TraceMetrics before = simulated(schedule, machine, start);
  std::array<bool, kGroups.size()> fitted{};
  for (int round = 0; round < kRounds; ++round) {
    const TraceMetrics now = round == 0 ? before : simulated(schedule, machine, r.params);
    for (size_t i = 0; i < kGroups.size(); ++i) {
      const double predicted = busy(now, kGroups[i]), seen = busy(measured, kGroups[i]);
      if (predicted <= 0 || seen <= 0) continue;
      speed_up(r.params, kGroups[i], predicted / seen);
      fitted[i] = true;
    }
  }
  // What no lane shows (the framework's own time between operators) is
  // still in the measured step: spread over the compute ops as overhead,
  // so the calibrated step matches, at the cost of gpu.compute's busy time.
  int compute_ops = 0;
  for (const core::Op& op : schedule.ops) compute_ops += op.lane == Lane::kGpuCompute;
  const double per_step_ops = static_cast<double>(compute_ops) / std::max(1, schedule.steps);
  if (fitted[0] && per_step_ops > 0 && measured.steady_step_time() > 0) {
    for (int round = 0; round < kRounds; ++round) {
      const TraceMetrics now = simulated(schedule, machine, r.params);
      const double missing = static_cast<double>(measured.steady_step_time() - now.steady_step_time());
      const double added = std::max(-r.params.compute_overhead.value(), missing * 1e-9 / per_step_ops);
      r.params.compute_overhead = core::Seconds(r.params.compute_overhead.value() + added);
    }
  }
  const TraceMetrics after = simulated(schedule, machine, r.params);
  for (size_t i = 0; i < kGroups.size(); ++i) {
    if (!fitted[i]) continue;
    char line[300];
    std::snprintf(line, sizeof line,
                  "%s (busy per step: measured %.4g ms, predicted %.4g ms before, %.4g ms after)",
                  fields_of(kGroups[i]), busy(measured, kGroups[i]) * 1e-6, busy(before, kGroups[i]) * 1e-6,
                  busy(after, kGroups[i]) * 1e-6);
    r.notes.push_back(line);
  }
  if (fitted[0]) {
    char line[300];
    std::snprintf(line, sizeof line,
                  "step: compute_overhead %.4g ms per compute op, for the time no lane shows (steady step: "
                  "measured %.4g ms, predicted %.4g ms before, %.4g ms after)",
                  r.params.compute_overhead.value() * 1e3,
                  static_cast<double>(measured.steady_step_time()) * 1e-6,
                  static_cast<double>(before.steady_step_time()) * 1e-6,
                  static_cast<double>(after.steady_step_time()) * 1e-6);
    r.notes.push_back(line);
  }
  return r;
}

}  // namespace stowage::calibration
