#include "calibration/fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

#include "calibration/compare.h"
#include "calibration/beside_fit.h"
#include "calibration/trace_metrics.h"
#include "core/compute_rate.h"
#include "sim/engine.h"
#include "sim/lane_models.h"
#include "sim/simulator.h"

namespace stowage::calibration {
namespace {

using core::Lane;

struct Points {
  std::vector<double> x, y;
};

double seconds(const core::OpSpan& s) { return static_cast<double>(s.end - s.start) * 1e-9; }

// Each op's duration as the cost model prices it: as measured, or, where
// the device's lanes share the host's cores (host_lane_cores), as it would
// have run alone (the inverse of the even sharing sim/lane_models.cpp
// models).
//
// Only the steady state is fitted: the first step of a run of several pays
// for first touches of its buffers, caches and the thread pool, which the
// steps after it (those the steady-state step time is the median of) do not.
struct Durations {
  std::vector<std::vector<double>> of_run;  // [run][op id] seconds
  std::vector<int> warm_up_step;            // [run] the step left out, or -1
  [[nodiscard]] double of(size_t run, core::OpId op) const { return of_run[run][static_cast<size_t>(op)]; }
  [[nodiscard]] bool fitted(size_t run, const core::Op& op) const { return op.step != warm_up_step[run]; }
};

// The points of one lane: x the op's work as `work_of` says, y its duration.
template <class WorkOf>
Points points_of(const std::vector<MeasuredRun>& runs, const Durations& d, Lane lane, WorkOf work_of) {
  Points p;
  for (size_t k = 0; k < runs.size(); ++k) {
    for (const core::Op& op : runs[k].schedule->ops) {
      if (op.lane != lane || !d.fitted(k, op)) continue;
      const double work = work_of(op);
      if (work <= 0) continue;
      p.x.push_back(work);
      p.y.push_back(d.of(k, op.id));
    }
  }
  return p;
}

std::string note(const char* what, int ops, double rms) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s (%d ops, rms residual %.3g ms)", what, ops, rms * 1e3);
  return buf;
}

// For a fit judged by bytes moved rather than time (the NVMe lanes, whose
// ops share the drive): how far the bytes the model moves in each op's
// measured span are from its bytes, as the median factor and the ops off
// by more than 2x. Not an rms: a few small ops with long spans (on the tiny
// NVMe run, 5 % of them, up to 1600x) would stand for all.
std::string note_in_bytes(const char* what, int ops, std::vector<double> log_errors) {
  for (double& e : log_errors) e = std::abs(e);
  std::ranges::sort(log_errors);
  const double median = log_errors.empty() ? 0 : log_errors[log_errors.size() / 2];
  const auto far = std::ranges::count_if(log_errors, [](double e) { return e > std::log(2.0); });
  char buf[320];
  std::snprintf(
      buf, sizeof buf,
      "%s (%d ops; the bytes the model moves in each op's measured span: median %.3g%% off, %lld ops "
      "off by more than 2x)",
      what, ops, (std::exp(median) - 1) * 100, static_cast<long long>(far));
  return buf;
}

// The fitted ops of run `k` that `chosen` picks, with, for each, the parts
// of its span that the ops `crowd` picks overlapped (none where the lanes
// do not share the host: the crowds slow nothing there), in seconds from
// the op's start (beside_fit.h).
struct Crowded {
  std::vector<const core::Op*> ops;
  std::vector<Interval> spans;
  std::vector<std::vector<Interval>> beside;
};

template <class Chosen, class Crowd>
Crowded crowded_ops(const std::vector<MeasuredRun>& runs, const Durations& d, size_t k, bool on_host, Chosen chosen,
                    Crowd crowd) {
  Crowded c;
  std::vector<Interval> crowds;
  const std::vector<core::OpSpan>& spans = runs[k].timeline->spans;
  for (const core::Op& op : runs[k].schedule->ops) {
    const core::OpSpan& s = spans[static_cast<size_t>(op.id)];
    const Interval at{static_cast<double>(s.start) * 1e-9, static_cast<double>(s.end) * 1e-9};
    if (on_host && crowd(op)) crowds.push_back(at);
    if (!chosen(op) || !d.fitted(k, op)) continue;
    c.ops.push_back(&op);
    c.spans.push_back(at);
  }
  c.beside = overlaps(c.spans, std::move(crowds));
  return c;
}

// The layer passes' efficiency (their seconds at efficiency 1, the FLOPs
// at the rate the model gives their size, core/compute_rate.h, flow at
// rate = efficiency), fixed cost per op (only without a measured rate
// curve) and, where the lanes share the host (host_lane_cores), share of
// their rate beside NVMe I/O (beside_fit.h), from each pass's overlap with
// the drive's reads and writes. The bf16 rate; for the CPU backend fp16
// and bf16 are the same fp32 kernels, and on a GPU the two rates are equal
// where both exist.
void fit_compute(const std::vector<MeasuredRun>& runs, const Durations& d, const core::MachineSpec& m,
                 FitReport& r) {
  const core::FlopsPerSecond peak = m.gpu.bf16_rate ? *m.gpu.bf16_rate : m.gpu.fp16_rate;
  const std::vector<core::RatePoint>& curve = r.params.compute_rate_by_flops;
  std::vector<BesidePoint> points;
  for (size_t k = 0; k < runs.size(); ++k) {
    Crowded c = crowded_ops(
        runs, d, k, r.params.host_lane_cores.has_value(),
        [](const core::Op& op) { return op.lane == Lane::kGpuCompute && core::is_layer_pass(op.kind) && op.flops.count() > 0; },
        [](const core::Op& op) { return op.lane == Lane::kNvmeRead || op.lane == Lane::kNvmeWrite; });
    for (size_t i = 0; i < c.ops.size(); ++i) {
      // The duration as it would have run alone (Durations), and the I/O
      // beside it on that clock: the measured span scaled to it.
      const double measured = c.spans[i].end - c.spans[i].start, alone = d.of(k, c.ops[i]->id);
      const double scale = measured > 0 ? alone / measured : 1;
      for (Interval& b : c.beside[i]) b.start *= scale, b.end *= scale;
      const double flops = c.ops[i]->flops.count();
      const double work = flops / core::compute_rate(curve, peak, flops).value();
      points.push_back({.work = work, .seconds = alone, .beside = std::move(c.beside[i])});
    }
  }
  // A measured rate curve (stowage profile times each op shape whole)
  // already carries each size's fixed cost: a second one fitted across the
  // few sizes a model has is noise between them (issue 14's replays of
  // fifteen runs: 0 to 3.2 ms per pass, the all-on-device hold-out priced
  // up to 8 % slow; through the origin, placements within 5 % went from
  // 82 to 90 of 105). Without a curve (a datasheet peak), one is fitted.
  const std::optional<BesideFit> f = fit_beside(points, /*fixed_cost=*/curve.empty());
  if (!f) return;
  r.params.matmul_efficiency = std::clamp(f->rate, 1e-4, 4.0);
  r.params.compute_overhead = core::Seconds(f->latency);
  r.params.compute_share_beside_nvme.reset();
  if (f->beside_rate) r.params.compute_share_beside_nvme = std::clamp(*f->beside_rate / f->rate, 0.01, 1.0);
  r.notes.push_back(note(f->beside_rate ? "gpu.compute: matmul_efficiency, compute_share_beside_nvme, compute_overhead"
                                        : "gpu.compute: matmul_efficiency, compute_overhead",
                         f->ops, f->rms_residual));
}

// Each direction's rate, fixed cost and, where the device's lanes share
// the host (host_lane_cores), rate beside compute (beside_fit.h): each
// copy's share overlapped by a compute op is read off its run's timeline.
void fit_pcie(const std::vector<MeasuredRun>& runs, const Durations& d, FitReport& r) {
  const bool on_host = r.params.host_lane_cores.has_value();
  std::vector<double> latencies;
  for (Lane lane : {Lane::kPcieH2d, Lane::kPcieD2h}) {
    std::vector<BesidePoint> points;
    for (size_t k = 0; k < runs.size(); ++k) {
      Crowded c = crowded_ops(
          runs, d, k, on_host, [&](const core::Op& op) { return op.lane == lane && op.bytes.count() > 0; },
          [](const core::Op& op) { return op.lane == Lane::kGpuCompute; });
      for (size_t i = 0; i < c.ops.size(); ++i) {
        points.push_back({.work = c.ops[i]->bytes.as_double(), .seconds = d.of(k, c.ops[i]->id), .beside = std::move(c.beside[i])});
      }
    }
    const std::optional<BesideFit> f = fit_beside(points);
    if (!f) continue;
    const bool h2d = lane == Lane::kPcieH2d;
    (h2d ? r.params.h2d_rate : r.params.d2h_rate) = core::BytesPerSecond(f->rate);
    (h2d ? r.params.h2d_latency : r.params.d2h_latency) = core::Seconds(f->latency);
    std::optional<core::BytesPerSecond>& beside_rate = h2d ? r.params.h2d_rate_beside_compute : r.params.d2h_rate_beside_compute;
    beside_rate.reset();
    if (f->beside_rate) beside_rate = core::BytesPerSecond(*f->beside_rate);
    latencies.push_back(f->latency);
    r.notes.push_back(note(h2d ? (f->beside_rate ? "pcie.h2d: h2d_rate, h2d_rate_beside_compute, h2d_latency" : "pcie.h2d: h2d_rate, h2d_latency")
                               : (f->beside_rate ? "pcie.d2h: d2h_rate, d2h_rate_beside_compute, d2h_latency" : "pcie.d2h: d2h_rate, d2h_latency"),
                           f->ops, f->rms_residual));
  }
  // The shared fixed cost: what a direction the traces have no copies of
  // (and so no latency of its own) takes.
  if (!latencies.empty()) {
    double sum = 0;
    for (double l : latencies) sum += l;
    r.params.pcie_latency = core::Seconds(sum / static_cast<double>(latencies.size()));
  }
}

void fit_optimizer(const std::vector<MeasuredRun>& runs, const Durations& d, const core::MachineSpec& m,
                   FitReport& r) {
  const Points p = points_of(runs, d, Lane::kCpuOptim, [](const core::Op& op) {
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

// The flowing spans of the NVMe ops and of the ops that share host memory
// with them (the copies and the CPU optimizer: the engine shares DRAM among
// them all), each less the latency the model adds after its work, and
// which of them ran at each moment.
struct NvmeSpans {
  struct Piece {
    double seconds = 0;
    std::vector<size_t> running;  // indices into ops
  };
  std::vector<const core::Op*> ops;
  std::vector<bool> nvme;    // [op] an NVMe op, fitted; the others only share
  std::vector<bool> fitted;  // [op] an NVMe op whose bytes are fitted (see nvme_spans)
  std::vector<Piece> pieces;
  bool overlapped = false;  // reads and writes ran at once somewhere
};

bool is_nvme(const core::Op& op) { return op.lane == Lane::kNvmeRead || op.lane == Lane::kNvmeWrite; }

// Only the steady state's NVMe ops are fitted: not the warm-up step's, whose
// reads into host pages touched for the first time take the page faults
// (with huge pages, compaction too), and not those that ran beside a
// warm-up op, whose share of the drive and of DRAM is unknown. Where that
// leaves none (a run of two steps), the steady step's are; where there are
// none, every one.
NvmeSpans nvme_spans(const std::vector<MeasuredRun>& runs, const Durations& d, const sim::ModelContext& c) {
  NvmeSpans out;
  std::vector<bool> warm_up;
  const sim::Capacities capacities = sim::capacities_for(c);
  for (size_t r = 0; r < runs.size(); ++r) {
    const MeasuredRun& run = runs[r];
    std::vector<std::pair<core::SimTime, std::ptrdiff_t>> edges;  // +(i+1) starts op i, -(i+1) ends it
    for (const core::Op& op : run.schedule->ops) {
      const sim::Demand demand = sim::demand_of(op, c, capacities);
      const bool shares_dram = demand.fixed == 0 && demand.work > 0 && demand.per_unit[static_cast<size_t>(sim::Resource::kDram)] > 0;
      if (!is_nvme(op) && !shares_dram) continue;
      const core::OpSpan& s = run.timeline->spans[static_cast<size_t>(op.id)];
      if (s.end <= s.start) continue;
      const core::SimTime end = std::max(s.start + 1, s.end - demand.latency);
      const auto i = static_cast<std::ptrdiff_t>(out.ops.size());
      out.ops.push_back(&op);
      out.nvme.push_back(is_nvme(op));
      warm_up.push_back(!d.fitted(r, op));
      edges.emplace_back(s.start, i + 1);
      edges.emplace_back(end, -(i + 1));
    }
    std::sort(edges.begin(), edges.end());
    std::vector<size_t> running;
    for (size_t k = 0; k < edges.size();) {
      const core::SimTime at = edges[k].first;
      for (; k < edges.size() && edges[k].first == at; ++k) {
        const auto i = static_cast<size_t>(std::abs(edges[k].second) - 1);
        if (edges[k].second > 0) {
          running.push_back(i);
        } else {
          running.erase(std::find(running.begin(), running.end(), i));
        }
      }
      if (k == edges.size() || running.empty()) continue;
      bool reads = false, writes = false;
      for (size_t i : running) {
        if (out.nvme[i]) (out.ops[i]->lane == Lane::kNvmeRead ? reads : writes) = true;
      }
      out.overlapped = out.overlapped || (reads && writes);
      out.pieces.push_back({static_cast<double>(edges[k].first - at) * 1e-9, running});
    }
  }
  std::vector<bool> steady(out.ops.size()), steady_step(out.ops.size());
  for (size_t i = 0; i < out.ops.size(); ++i) steady[i] = steady_step[i] = out.nvme[i] && !warm_up[i];
  for (const NvmeSpans::Piece& piece : out.pieces) {
    if (std::none_of(piece.running.begin(), piece.running.end(), [&](size_t i) { return warm_up[i]; })) continue;
    for (size_t i : piece.running) steady[i] = false;
  }
  auto any = [](const std::vector<bool>& v) { return std::find(v.begin(), v.end(), true) != v.end(); };
  out.fitted = any(steady) ? steady : any(steady_step) ? steady_step : out.nvme;
  return out;
}

// What the NVMe fit sets: each direction's rate per drive, and the duplex.
struct DriveFit {
  std::array<double, 2> rate{};  // B/s per drive: reads, writes (0: no ops of that direction)
  std::vector<double> errors;    // each op's log(bytes the model moves in its span / its bytes)

  // What the duplex search minimises: the errors' sum of squares.
  [[nodiscard]] double misfit() const {
    double sum = 0;
    for (double e : errors) sum += e * e;
    return sum;
  }
};

size_t direction_of(const core::Op& op) { return op.lane == Lane::kNvmeRead ? 0 : 1; }

// For a duplex: the rates per direction under which the NVMe model, sharing
// the drive as the engine does (sim::fair_rates: each direction's ops one
// at a time in the order they started, the pieces' running lists being in
// that order; in the units the simulation prices them in, so, where the
// device's lanes share the host's cores, in seconds of running alone) among
// the ops that ran at each moment, moves each direction's bytes in its
// ops' measured spans. A
// fixed point: each round scales a direction's rate by its bytes over what
// the model moved (exact for a direction running alone; beside the other
// direction the share depends on both rates, so a few rounds).
DriveFit nvme_fit_at(const NvmeSpans& spans, const core::MachineSpec& m, const core::CostParameters& start,
                     int ranks, double duplex) {
  core::CostParameters p = start;
  p.nvme_duplex = duplex;
  const sim::ModelContext c{.machine = m, .params = p, .ranks = ranks};  // sees the rates each round sets in p
  std::array<double, 2> bytes{};
  for (size_t i = 0; i < spans.ops.size(); ++i) {
    if (spans.fitted[i]) bytes[direction_of(*spans.ops[i])] += spans.ops[i]->bytes.as_double();
  }
  // Per drive, as the cost parameters hold it.
  const double per_drive = static_cast<double>(ranks) / std::max(1, m.nvme_count);
  DriveFit f{.rate = {sim::nvme_rank_rate(c, Lane::kNvmeRead) * per_drive,
                      sim::nvme_rank_rate(c, Lane::kNvmeWrite) * per_drive}};
  std::vector<double> moved(spans.ops.size());
  std::vector<sim::Demand> demands;
  for (int round = 0; round < 40; ++round) {
    p.nvme_read_rate = core::BytesPerSecond(f.rate[0]);
    p.nvme_write_rate = core::BytesPerSecond(f.rate[1]);
    const sim::Capacities cap = sim::capacities_for(c);
    std::fill(moved.begin(), moved.end(), 0.0);
    for (const NvmeSpans::Piece& piece : spans.pieces) {
      demands.clear();
      for (size_t i : piece.running) demands.push_back(sim::demand_of(*spans.ops[i], c, cap));
      const std::vector<double> rates = sim::fair_rates(demands, cap);
      for (size_t k = 0; k < piece.running.size(); ++k) {
        // The rate is in the demand's units (where the device's lanes share
        // the host's cores, seconds of running alone): back to bytes.
        const double work = demands[k].work;
        const double bytes_per_unit = work > 0 ? spans.ops[piece.running[k]]->bytes.as_double() / work : 0;
        moved[piece.running[k]] += rates[k] * piece.seconds * bytes_per_unit;
      }
    }
    std::array<double, 2> total{};
    for (size_t i = 0; i < spans.ops.size(); ++i) {
      if (spans.fitted[i]) total[direction_of(*spans.ops[i])] += moved[i];
    }
    double change = 0;
    for (size_t d = 0; d < 2; ++d) {
      if (bytes[d] <= 0 || total[d] <= 0) continue;
      f.rate[d] *= bytes[d] / total[d];
      change = std::max(change, std::abs(bytes[d] / total[d] - 1));
    }
    if (change < 1e-7) break;
  }
  for (size_t d = 0; d < 2; ++d) {
    if (bytes[d] <= 0) f.rate[d] = 0;
  }
  for (size_t i = 0; i < spans.ops.size(); ++i) {
    if (!spans.fitted[i] || moved[i] <= 0 || spans.ops[i]->bytes.count() <= 0) continue;
    f.errors.push_back(std::log(moved[i] / spans.ops[i]->bytes.as_double()));
  }
  return f;
}

// The minimum a golden-section search finds for a unimodal `f` on [a, b],
// narrowing until the bracket is `tolerance` wide or `rounds` rounds are
// done: the better of its last two points.
struct Minimum {
  double at = 0, value = 0;
};

template <class F>
Minimum golden_section(F f, double a, double b, double tolerance, int rounds) {
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  double x1 = b - ratio * (b - a), x2 = a + ratio * (b - a), f1 = f(x1), f2 = f(x2);
  for (int k = 0; k < rounds && b - a > tolerance; ++k) {
    if (f1 < f2) {
      b = x2, x2 = x1, f2 = f1, x1 = b - ratio * (b - a), f1 = f(x1);
    } else {
      a = x1, x1 = x2, f1 = f2, x2 = a + ratio * (b - a), f2 = f(x2);
    }
  }
  return f1 < f2 ? Minimum{x1, f1} : Minimum{x2, f2};
}

// Each direction's rate and the duplex (sim/nvme_model.cpp) under which the
// model moves every NVMe op's bytes in the span it was measured to take,
// given what ran beside it: the duplex by golden section on the ops'
// misfit, the rates by nvme_fit_at for each. Without a read beside a write
// anywhere the duplex is not seen and keeps its value.
void fit_nvme(const std::vector<MeasuredRun>& runs, const Durations& d, const core::MachineSpec& m, FitReport& r) {
  if (m.nvme_count <= 0 || runs.empty()) return;
  const int ranks = std::max(1, runs.front().schedule->ranks);
  const NvmeSpans spans = nvme_spans(runs, d, {.machine = m, .params = r.params, .ranks = ranks});
  if (std::none_of(spans.nvme.begin(), spans.nvme.end(), [](bool b) { return b; })) return;
  double duplex = r.params.nvme_duplex;
  if (spans.overlapped) {
    auto misfit = [&](double at) { return nvme_fit_at(spans, m, r.params, ranks, at).misfit(); };
    duplex = golden_section(misfit, core::kMinNvmeDuplex, core::kMaxNvmeDuplex, 1e-3, 40).at;
  }
  const DriveFit f = nvme_fit_at(spans, m, r.params, ranks, duplex);
  if (f.rate[0] > 0) r.params.nvme_read_rate = core::BytesPerSecond(f.rate[0]);
  if (f.rate[1] > 0) r.params.nvme_write_rate = core::BytesPerSecond(f.rate[1]);
  r.params.nvme_duplex = duplex;
  r.notes.push_back(note_in_bytes(
      spans.overlapped
          ? "nvme.read, nvme.write: nvme_read_rate, nvme_write_rate, nvme_duplex from the reads beside writes"
          : "nvme.read, nvme.write: nvme_read_rate, nvme_write_rate (no read beside a write: nvme_duplex "
            "kept)",
      static_cast<int>(std::count(spans.fitted.begin(), spans.fitted.end(), true)), f.errors));
}

// Gradient checks on either lane: bytes scanned over time, summed; the
// residual is each check's measured time against its bytes at that rate.
void fit_grad_check(const std::vector<MeasuredRun>& runs, const Durations& d, FitReport& r) {
  std::vector<std::pair<double, double>> checks;  // bytes, seconds
  double bytes = 0, secs = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    for (const core::Op& op : runs[k].schedule->ops) {
      if (op.kind != core::OpKind::kGradCheck || op.bytes.count() <= 0 || !d.fitted(k, op)) continue;
      checks.emplace_back(op.bytes.as_double(), d.of(k, op.id));
      bytes += checks.back().first;
      secs += checks.back().second;
    }
  }
  if (checks.empty() || secs <= 0) return;
  const double rate = bytes / secs;
  r.params.grad_check_rate = core::BytesPerSecond(rate);
  double ss = 0;
  for (const auto& [b, s] : checks) ss += (s - b / rate) * (s - b / rate);
  r.notes.push_back(note("grad_check: grad_check_rate", static_cast<int>(checks.size()),
                         std::sqrt(ss / static_cast<double>(checks.size()))));
}

// The optimizer on the device lane (all on the device): the HBM roofline's
// memory term, bytes / (memory_bandwidth x hbm_efficiency), through the
// origin. The fitted efficiency also prices the memory term of the
// forward and backward ops, which on the CPU backend stays below their
// compute term.
void fit_device_optimizer(const std::vector<MeasuredRun>& runs, const Durations& d, const core::MachineSpec& m,
                          FitReport& r) {
  const double overhead = r.params.compute_overhead.value();
  std::vector<std::pair<double, double>> steps;  // bytes, measured seconds
  double bytes = 0, secs = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    for (const core::Op& op : runs[k].schedule->ops) {
      if (op.lane != Lane::kGpuCompute || op.kind != core::OpKind::kOptimizer || !d.fitted(k, op)) continue;
      steps.emplace_back(op.bytes.as_double(), d.of(k, op.id));
      bytes += steps.back().first;
      secs += std::max(0.0, steps.back().second - overhead);
    }
  }
  if (steps.empty() || secs <= 0 || bytes <= 0) return;
  r.params.hbm_efficiency = std::clamp(bytes / secs / m.gpu.memory_bandwidth.value(), 1e-4, 4.0);
  const double rate = m.gpu.memory_bandwidth.value() * r.params.hbm_efficiency;
  double ss = 0;  // each update's measured time against overhead + bytes at the fitted rate
  for (const auto& [b, t] : steps) ss += (t - overhead - b / rate) * (t - overhead - b / rate);
  r.notes.push_back(note("gpu.compute optimizer: hbm_efficiency", static_cast<int>(steps.size()),
                         std::sqrt(ss / static_cast<double>(steps.size()))));
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

namespace {

// sim/lane_models.cpp shares `cores` evenly among the host-thread lanes'
// busy ops: each runs at min(1, cores / busy) of its alone rate. Inverted on
// the measured timeline: an op's alone duration is the integral of that
// rate over its span (a sweep over the busy count; F is the integral from
// the first event to each event time).
std::vector<double> alone_durations(const MeasuredRun& run, double cores) {
  const std::vector<core::OpSpan>& spans = run.timeline->spans;
  std::vector<double> out(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) out[i] = seconds(spans[i]);
  if (!std::isfinite(cores)) return out;  // nothing shares: as measured
  std::vector<std::pair<core::SimTime, int>> events;
  for (const core::Op& op : run.schedule->ops) {
    const core::OpSpan& s = spans[static_cast<size_t>(op.id)];
    if (!sim::runs_on_a_host_thread(op.lane) || s.end <= s.start) continue;
    events.emplace_back(s.start, 1);
    events.emplace_back(s.end, -1);
  }
  std::sort(events.begin(), events.end());
  std::vector<core::SimTime> times;
  std::vector<double> integral;  // F at times[k]
  int busy = 0;
  for (size_t k = 0; k < events.size();) {
    const core::SimTime t = events[k].first;
    if (!times.empty()) {
      const double rate = busy > 0 ? std::min(1.0, cores / busy) : 1.0;
      integral.push_back(integral.back() + static_cast<double>(t - times.back()) * 1e-9 * rate);
    } else {
      integral.push_back(0);
    }
    times.push_back(t);
    for (; k < events.size() && events[k].first == t; ++k) busy += events[k].second;
  }
  auto at = [&](core::SimTime t) {
    return integral[static_cast<size_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin())];
  };
  for (const core::Op& op : run.schedule->ops) {
    const core::OpSpan& s = spans[static_cast<size_t>(op.id)];
    if (sim::runs_on_a_host_thread(op.lane) && s.end > s.start) out[static_cast<size_t>(op.id)] = at(s.end) - at(s.start);
  }
  return out;
}

FitReport fit_at(const std::vector<MeasuredRun>& runs, const core::MachineSpec& machine,
                 const core::CostParameters& start) {
  FitReport r{.params = start, .notes = {}};
  Durations d;
  for (const MeasuredRun& run : runs) {
    d.of_run.push_back(alone_durations(run, start.host_lane_cores.value_or(std::numeric_limits<double>::infinity())));
    int first = std::numeric_limits<int>::max(), last = std::numeric_limits<int>::min();
    for (const core::Op& op : run.schedule->ops) first = std::min(first, op.step), last = std::max(last, op.step);
    d.warm_up_step.push_back(last > first ? first : -1);
  }
  fit_device_optimizer(runs, d, machine, r);  // first: it takes the fixed cost per op as given
  fit_compute(runs, d, machine, r);
  fit_pcie(runs, d, r);
  fit_optimizer(runs, d, machine, r);
  fit_nvme(runs, d, machine, r);
  fit_grad_check(runs, d, r);
  return r;
}

// The fit runs' squared steady-step errors, simulated with `params`.
double step_misfit(const std::vector<MeasuredRun>& runs, const core::MachineSpec& machine,
                   const core::CostParameters& params) {
  double sum = 0;
  for (const MeasuredRun& run : runs) {
    const sim::Prediction p = sim::simulate(*run.schedule, machine, {.params = params});
    const auto c = compare(*run.schedule, p.timeline, *run.schedule, *run.timeline);
    if (c) sum += c->step_error * c->step_error;
  }
  return sum;
}

}  // namespace

FitReport fit_cost_parameters(const std::vector<MeasuredRun>& runs, const core::MachineSpec& machine,
                              const core::CostParameters& start) {
  if (!start.host_lane_cores || runs.empty()) return fit_at(runs, machine, start);
  // How many lanes' threads run at full speed at once is seen only in the
  // steps: the per-op fits take it as given. So it is chosen, between one
  // core and all of the host's, as the value whose per-op fit puts the fit
  // runs' simulated steps nearest the measured ones: a grid, then a golden
  // section around its best point.
  const double lo = 1, hi = std::max(1.0, static_cast<double>(machine.host.cpu_cores));
  auto misfit = [&](double cores) {
    core::CostParameters p = start;
    p.host_lane_cores = cores;
    return step_misfit(runs, machine, fit_at(runs, machine, p).params);
  };
  constexpr int kGrid = 12;
  const double step = (hi - lo) / kGrid;
  double best = hi, best_misfit = misfit(hi);
  for (int k = 0; k < kGrid; ++k) {
    const double c = lo + step * k;
    if (const double m = misfit(c); m < best_misfit) best = c, best_misfit = m;
  }
  const Minimum near = golden_section(misfit, std::max(lo, best - step), std::min(hi, best + step), 1e-3, 12);
  if (near.value < best_misfit) best = near.at, best_misfit = near.value;
  core::CostParameters p = start;
  p.host_lane_cores = best;
  FitReport r = fit_at(runs, machine, p);
  char buf[200];
  std::snprintf(buf, sizeof buf, "host lanes: host_lane_cores %.3g (of %g cores; on the fit runs' steps, rms error %.1f%%)",
                best, hi, std::sqrt(best_misfit / static_cast<double>(runs.size())) * 100);
  r.notes.insert(r.notes.begin(), buf);
  return r;
}

}  // namespace stowage::calibration
