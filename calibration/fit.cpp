#include "calibration/fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "calibration/trace_metrics.h"

namespace stowage::calibration {
namespace {

using core::Lane;

struct Points {
  std::vector<double> x, y;
};

double seconds(const core::OpSpan& s) { return static_cast<double>(s.end - s.start) * 1e-9; }

// Layer passes only: the device optimizer and the gradient check have fits of their own.
bool is_compute(core::OpKind k) {
  return k == core::OpKind::kForward || k == core::OpKind::kBackward || k == core::OpKind::kRecompute;
}

// The points of one lane: x the op's work as `work_of` says, y its duration.
template <class WorkOf>
Points points_of(const std::vector<MeasuredRun>& runs, Lane lane, WorkOf work_of) {
  Points p;
  for (const MeasuredRun& r : runs) {
    for (const core::Op& op : r.schedule->ops) {
      if (op.lane != lane) continue;
      const double work = work_of(op);
      if (work <= 0) continue;
      p.x.push_back(work);
      p.y.push_back(seconds(r.timeline->spans[static_cast<size_t>(op.id)]));
    }
  }
  return p;
}

std::string note(const char* what, int ops, double rms) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s (%d ops, rms residual %.3g ms)", what, ops, rms * 1e3);
  return buf;
}

void fit_compute(const std::vector<MeasuredRun>& runs, const core::MachineSpec& m, FitReport& r) {
  const Points p = points_of(runs, Lane::kGpuCompute,
                             [](const core::Op& op) { return is_compute(op.kind) ? op.flops.count() : 0.0; });
  if (p.x.size() < 2) return;
  const LineFit f = least_squares(p.x, p.y);
  if (f.slope <= 0) return;
  // Fitted on the bf16 rate; for the CPU backend fp16 and bf16 are the same
  // fp32 kernels, and on a GPU the two rates are equal where both exist.
  const double peak = m.gpu.bf16_rate ? m.gpu.bf16_rate->value() : m.gpu.fp16_rate.value();
  r.params.matmul_efficiency = std::clamp(1.0 / (f.slope * peak), 1e-4, 4.0);
  r.params.compute_overhead = core::Seconds(std::max(0.0, f.intercept));
  r.notes.push_back(note("gpu.compute: matmul_efficiency, compute_overhead", f.ops, f.rms_residual));
}

void fit_pcie(const std::vector<MeasuredRun>& runs, FitReport& r) {
  std::vector<double> latencies;
  for (Lane lane : {Lane::kPcieH2d, Lane::kPcieD2h}) {
    const Points p = points_of(runs, lane, [](const core::Op& op) { return op.bytes.as_double(); });
    if (p.x.size() < 2) continue;
    const LineFit f = least_squares(p.x, p.y);
    if (f.slope <= 0) continue;
    (lane == Lane::kPcieH2d ? r.params.h2d_rate : r.params.d2h_rate) = core::BytesPerSecond(1.0 / f.slope);
    latencies.push_back(std::max(0.0, f.intercept));
    r.notes.push_back(note(lane == Lane::kPcieH2d ? "pcie.h2d: h2d_rate" : "pcie.d2h: d2h_rate", f.ops, f.rms_residual));
  }
  if (!latencies.empty()) {
    double sum = 0;
    for (double l : latencies) sum += l;
    r.params.pcie_latency = core::Seconds(sum / static_cast<double>(latencies.size()));
  }
}

void fit_optimizer(const std::vector<MeasuredRun>& runs, const core::MachineSpec& m, FitReport& r) {
  const Points p = points_of(runs, Lane::kCpuOptim, [](const core::Op& op) {
    return op.kind == core::OpKind::kOptimizer ? static_cast<double>(op.params) : 0.0;
  });
  if (p.x.empty()) return;
  // The optimizer model has no fixed cost per op, so the line goes through
  // the origin with the slope that makes the lane's total time right:
  // sum(duration) / sum(params), the weighted least-squares slope when each
  // op's error grows with its size.
  double sx = 0, sy = 0;
  for (size_t i = 0; i < p.x.size(); ++i) {
    sx += p.x[i];
    sy += p.y[i];
  }
  LineFit f{.intercept = 0, .slope = sy / sx, .ops = static_cast<int>(p.x.size()), .rms_residual = 0};
  double ss = 0;
  for (size_t i = 0; i < p.x.size(); ++i) ss += (p.y[i] - f.slope * p.x[i]) * (p.y[i] - f.slope * p.x[i]);
  f.rms_residual = std::sqrt(ss / static_cast<double>(p.x.size()));
  if (f.slope <= 0) return;
  // The model spreads an optimizer op over the cores it may use; the fitted
  // rate per parameter is the whole op's.
  const double cores = r.params.optimizer_threads > 0
                           ? std::min<double>(r.params.optimizer_threads, m.host.cpu_cores)
                           : std::max(1, m.host.cpu_cores);
  r.params.cpu_core_rate = core::FlopsPerSecond(r.params.adam_flops_per_param / f.slope / cores);
  r.notes.push_back(note("cpu.optim: cpu_core_rate", f.ops, f.rms_residual));
}

// busy(read ∪ write) = (R / read_rate + W / write_rate) / efficiency.
void fit_nvme(const std::vector<MeasuredRun>& runs, const core::MachineSpec& m, FitReport& r) {
  if (m.nvme_count <= 0) return;
  double device_seconds = 0, busy = 0;
  int ops = 0;
  const core::NvmeSpec& n = m.nvme;
  const double write_rate = n.sustained_write ? n.sustained_write->value() : n.sequential_write.value();
  for (const MeasuredRun& run : runs) {
    std::vector<std::pair<core::SimTime, core::SimTime>> spans;
    for (const core::Op& op : run.schedule->ops) {
      if (op.lane != Lane::kNvmeRead && op.lane != Lane::kNvmeWrite) continue;
      const core::OpSpan& s = run.timeline->spans[static_cast<size_t>(op.id)];
      spans.emplace_back(s.start, s.end);
      const double rate = op.lane == Lane::kNvmeRead ? n.sequential_read.value() : write_rate;
      device_seconds += op.bytes.as_double() / (rate * m.nvme_count);
      ++ops;
    }
    busy += static_cast<double>(union_length(std::move(spans))) * 1e-9;
  }
  if (ops == 0 || busy <= 0 || device_seconds <= 0) return;
  r.params.nvme_efficiency = std::clamp(device_seconds / busy, 1e-4, 4.0);
  r.notes.push_back(note("nvme.read, nvme.write: nvme_efficiency (on busy time)", ops, 0));
}

// Gradient checks on either lane: bytes scanned over time, summed.
void fit_grad_check(const std::vector<MeasuredRun>& runs, FitReport& r) {
  double bytes = 0, secs = 0;
  int ops = 0;
  for (const MeasuredRun& run : runs) {
    for (const core::Op& op : run.schedule->ops) {
      if (op.kind != core::OpKind::kGradCheck || op.bytes.count() <= 0) continue;
      bytes += op.bytes.as_double();
      secs += seconds(run.timeline->spans[static_cast<size_t>(op.id)]);
      ++ops;
    }
  }
  if (ops == 0 || secs <= 0) return;
  r.params.grad_check_rate = core::BytesPerSecond(bytes / secs);
  r.notes.push_back(note("grad_check: grad_check_rate", ops, 0));
}

// The optimizer on the device lane (all on the device): the HBM roofline's
// memory term, bytes / (memory_bandwidth x hbm_efficiency), through the
// origin. The fitted efficiency also prices the memory term of the
// forward and backward ops, which on the CPU backend stays below their
// compute term.
void fit_device_optimizer(const std::vector<MeasuredRun>& runs, const core::MachineSpec& m, FitReport& r) {
  double bytes = 0, secs = 0;
  int ops = 0;
  for (const MeasuredRun& run : runs) {
    for (const core::Op& op : run.schedule->ops) {
      if (op.lane != Lane::kGpuCompute || op.kind != core::OpKind::kOptimizer) continue;
      bytes += op.bytes.as_double();
      secs += std::max(0.0, seconds(run.timeline->spans[static_cast<size_t>(op.id)]) - r.params.compute_overhead.value());
      ++ops;
    }
  }
  if (ops == 0 || secs <= 0 || bytes <= 0) return;
  r.params.hbm_efficiency = std::clamp(bytes / secs / m.gpu.memory_bandwidth.value(), 1e-4, 4.0);
  r.notes.push_back(note("gpu.compute optimizer: hbm_efficiency", ops, 0));
}

}  // namespace

LineFit least_squares(const std::vector<double>& x, const std::vector<double>& y) {
  LineFit f;
  const size_t n = std::min(x.size(), y.size());
  f.ops = static_cast<int>(n);
  if (n == 0) return f;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  // Spread below 1e-9 of the mean: all ops the same size, no line to fit.
  if (sxx <= 1e-18 * mx * mx * static_cast<double>(n) || mx <= 0) {
    f.slope = mx > 0 ? my / mx : 0;
    f.intercept = 0;
  } else {
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
    if (f.intercept < 0) {  // a negative fixed cost means none: refit through the origin
      double sxy0 = 0, sxx0 = 0;
      for (size_t i = 0; i < n; ++i) {
        sxy0 += x[i] * y[i];
        sxx0 += x[i] * x[i];
      }
      f.slope = sxy0 / sxx0;
      f.intercept = 0;
    }
  }
  double ss = 0;
  for (size_t i = 0; i < n; ++i) {
    const double e = y[i] - (f.intercept + f.slope * x[i]);
    ss += e * e;
  }
  f.rms_residual = std::sqrt(ss / static_cast<double>(n));
  return f;
}

FitReport fit_cost_parameters(const std::vector<MeasuredRun>& runs, const core::MachineSpec& machine,
                              const core::CostParameters& start) {
  FitReport r{.params = start, .notes = {}};
  fit_device_optimizer(runs, machine, r);  // first: it takes the fixed cost per op as given
  fit_compute(runs, machine, r);
  fit_pcie(runs, r);
  fit_optimizer(runs, machine, r);
  fit_nvme(runs, machine, r);
  fit_grad_check(runs, r);
  return r;
}

}  // namespace stowage::calibration
