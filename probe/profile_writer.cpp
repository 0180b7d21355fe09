#include "probe/profile_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/calibration_reader.h"
#include "core/machine_profile_writer.h"
#include "core/trace_origin.h"
#include "probe/gpu_calibration.h"

namespace stowage::probe {
namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string gbs(double v) { return num(v / 1e9) + " GB/s"; }

double best_rate(const std::vector<ThreadRate>& rates) {
  double best = 0;
  for (const ThreadRate& r : rates) best = std::max(best, r.rate);
  return best;
}

double rate_at_threads(const std::vector<ThreadRate>& rates, int threads) {
  for (const ThreadRate& r : rates) {
    if (r.threads == threads) return r.rate;
  }
  return rates.empty() ? 0 : rates.front().rate;
}

// Host memory bandwidth as the optimizer ops count it (28 B per
// parameter): the best Adam-pattern pass, or the executor's CPU Adam itself
// when that moved its bytes faster (the real kernel then proves the rate).
double dram_rate(const Measurements& m) {
  return std::max({1e9, best_rate(m.dram_adam_pattern), 28.0 * best_rate(m.adam_params)});
}

// The rate of the largest copy: what a partition-sized transfer sees.
double copy_rate(const Measurements& m) {
  const auto& copies = m.locked && !m.memcpy_locked.empty() ? m.memcpy_locked : m.memcpy_pageable;
  return copies.empty() ? 1e9 : copies.back().rate;
}

// The device's memory-bound work is its optimizer: the CPU backend runs a
// partition's Adam on the device lane with the executor's CPU Adam at the
// optimizer's thread count (executor/cpu_backend.cpp), so the device moves
// an Adam op's 28 B per parameter at that kernel's rate, not at a memcpy's
// (which predicted the device's Adam twice as slow as it ran: issue 14).
double device_memory_rate(const Measurements& m, const ProfileWriterOptions& o) {
  const double adam = rate_at_threads(m.adam_params, std::max(1, o.optimizer_threads));
  return adam > 0 ? 28.0 * adam : copy_rate(m);
}

// The block ops' rates by their FLOPs, in increasing order; ops of equal
// FLOPs (none at the probe's shapes) share their mean rate.
std::vector<core::RatePoint> rate_curve(std::vector<BlockOpRate> ops) {
  std::sort(ops.begin(), ops.end(), [](const BlockOpRate& a, const BlockOpRate& b) { return a.flops < b.flops; });
  std::vector<core::RatePoint> curve;
  int merged = 1;
  for (const BlockOpRate& op : ops) {
    if (op.flops <= 0 || op.rate <= 0) continue;
    if (!curve.empty() && curve.back().flops == op.flops) {
      const double sum = curve.back().rate.value() * merged + op.rate;
      curve.back().rate = core::FlopsPerSecond(sum / ++merged);
      continue;
    }
    curve.push_back({.flops = op.flops, .rate = core::FlopsPerSecond(op.rate)});
    merged = 1;
  }
  return curve;
}

double gemm_rate(const Measurements& m) {
  std::vector<double> r;
  for (const GemmRate& g : m.gemm) r.push_back(g.rate);
  if (r.empty()) return 1e10;
  std::sort(r.begin(), r.end());
  return r[r.size() / 2];
}

int64_t device_memory(const Measurements& m, const ProfileWriterOptions& o) {
  const int64_t gib = int64_t{1} << 30;
  const int64_t half = std::max(gib, (m.dram_bytes / 2) / gib * gib);
  return o.device_memory > 0 ? std::max(gib, o.device_memory) : half;
}

std::string measurement_comments(const Measurements& m) {
  std::string s = "# Measured by `stowage profile` in " + num(m.seconds) + " s on " + std::to_string(m.cores) + " cores:\n";
  s += "#   host memory, Adam access pattern (28 B/param):";
  for (const ThreadRate& r : m.dram_adam_pattern) s += " " + std::to_string(r.threads) + "t " + gbs(r.rate) + ";";
  s += "\n#   memcpy pageable:";
  for (const SizeRate& r : m.memcpy_pageable) s += " " + num(static_cast<double>(r.bytes) / 1048576.0) + " MiB " + gbs(r.rate) + ";";
  s += std::string("\n#   memcpy ") + (m.locked ? "locked" : "(mlock refused)") + ":";
  for (const SizeRate& r : m.memcpy_locked) s += " " + num(static_cast<double>(r.bytes) / 1048576.0) + " MiB " + gbs(r.rate) + ";";
  s += "\n#   a 4 KiB copy: " + num(m.small_copy_seconds * 1e6) + " us\n#   CPU Adam (executor/cpu_adam):";
  for (const ThreadRate& r : m.adam_params) s += " " + std::to_string(r.threads) + "t " + num(r.rate / 1e6) + " Mparam/s;";
  s += "\n#   gradient check (executor/square_sum.h, one thread): " + gbs(m.grad_check_bytes_per_s) + "\n";
  if (!m.gemm.empty()) {  // the CPU backend's device (ProbeOptions::cpu_device)
    s += "#   sgemm forward+backward, one BLAS thread" +
         (m.blas_kernels.empty() ? std::string() : " (OpenBLAS's " + m.blas_kernels + " kernels)") + ":";
    for (const GemmRate& g : m.gemm)
      s += " " + std::to_string(g.rows) + "x" + std::to_string(g.in) + "x" + std::to_string(g.out) + " " +
           num(g.rate / 1e9) + " GFLOP/s;";
    s += "\n#   a 1x64x64 product: " + num(m.small_gemm_seconds * 1e6) + " us\n";
  }
  if (!m.block_ops.empty()) {
    s += "#   GPT block (executor/model), one BLAS thread:";
    for (const BlockOpRate& b : m.block_ops) s += " " + b.what + ": " + num(b.rate / 1e9) + " GFLOP/s;";
    s += "\n";
  }
  if (m.disk_dir) {
    s += "#   O_DIRECT in " + *m.disk_dir + " (block, depth: read / write):";
    for (const DiskRate& d : m.disk)
      s += " " + num(static_cast<double>(d.block) / 1024.0) + " KiB x" + std::to_string(d.depth) + ": " + gbs(d.read) + " / " + gbs(d.write) + ";";
    s += "\n#   one 4 KiB read: " + num(m.disk_request_seconds * 1e6) + " us\n";
    if (m.disk_write_after_cache) s += "#   last quarter of a long 1 MiB write: " + gbs(*m.disk_write_after_cache) + "\n";
    if (m.disk_mixed)
      s += "#   reads and writes at once, " + num(static_cast<double>(m.disk_mixed->block) / 1024.0) + " KiB x" +
           std::to_string(m.disk_mixed->depth) + " each: " + gbs(m.disk_mixed->read) + " read, " +
           gbs(m.disk_mixed->write) + " written\n";
    for (const StoreRate& r : m.store) {
      s += "#   the executor's store (io_uring), " + num(static_cast<double>(r.block) / 1024.0) + " KiB x" +
           std::to_string(r.depth) + ", " + std::to_string(r.callers) + " region(s) at a time per direction: " +
           gbs(r.read) + " read, " + gbs(r.write) + " written alone; " + gbs(r.mixed_read) + " read beside " +
           gbs(r.mixed_write) + " written\n";
    }
  }
  return s;
}

// What the GPU probe measured (executor/cuda/device_probe.h), for the
// comments: the calibration's inputs (probe/gpu_calibration.h).
std::string gpu_comments(const GpuMeasurements& g) {
  std::string s = "#   " + g.device + " (executor/cuda/device_probe.h), pinned copies h2d / d2h:";
  for (const GpuMeasurements::Copy& c : g.pinned)
    s +=
        " " + num(static_cast<double>(c.bytes) / 1048576.0) + " MiB " + gbs(c.h2d) + " / " + gbs(c.d2h) + ";";
  s += "\n#   device-to-device copy, read + written: " + gbs(g.hbm_copy) + "\n#   " + g.gemm_type + " GEMMs:";
  for (const double rate : g.gemms) s += " " + num(rate / 1e12) + " TFLOP/s;";
  return s + "\n";
}

// The drive's rates as the profile writes them, which the mixed run's
// duplex is measured against: the pread/pwrite entry nearest the
// executor's default. Not the store probe's: on the same nine fidelity
// traces (docs/fidelity.md, session 38) its rates predicted the NVMe
// placements' steps worse (mean |error| 12.0 % against 9.9 %); it stays in
// the profile's comments as what the executor's path got.
struct DriveRates {
  int64_t block = 0;
  int depth = 0;
  double read = 0, write = 0;
  // Always written, so nothing assumes a share of the burst rate
  // (planner/sustained_write.h): the long write's tail, at most the burst.
  double sustained_write = 0;
};

std::optional<DriveRates> drive_rates(const Measurements& m) {
  const DiskRate* d = executor_default_disk_rate(m.disk);
  if (d == nullptr) return std::nullopt;
  DriveRates r{.block = d->block, .depth = d->depth, .read = std::max(10e6, d->read), .write = std::max(10e6, d->write)};
  const double tail = m.disk_write_after_cache ? *m.disk_write_after_cache : d->write;
  r.sustained_write = std::max(10e6, std::min(d->write, tail));
  return r;
}

}  // namespace

core::CostParameters host_calibration(const Measurements& m, const ProfileWriterOptions& o) {
  core::CostParameters p;
  p.nvme_efficiency = 1;
  // Reads and writes at once: each direction's share of its alone rate
  // (the rates the profile writes, which the simulator prices writes at),
  // summed. 2: neither slows the other; 1: they share the drive's time.
  const std::optional<DriveRates> drive = drive_rates(m);
  if (drive && m.disk_mixed && m.disk_mixed->read > 0 && m.disk_mixed->write > 0) {
    const double duplex = m.disk_mixed->read / drive->read + m.disk_mixed->write / drive->sustained_write;
    p.nvme_duplex = std::clamp(duplex, core::kMinNvmeDuplex, core::kMaxNvmeDuplex);
  }
  if (m.disk_request_seconds > 0) p.nvme_latency = core::Seconds(m.disk_request_seconds);
  p.dram_efficiency = 1;
  p.optimizer_threads = std::max(1, o.optimizer_threads);
  const double adam = rate_at_threads(m.adam_params, p.optimizer_threads);
  if (adam > 0) p.cpu_core_rate = core::FlopsPerSecond(adam * p.adam_flops_per_param / p.optimizer_threads);
  return p;
}

core::CostParameters measured_calibration(const Measurements& m, const ProfileWriterOptions& o) {
  core::CostParameters p = host_calibration(m, o);
  // The device's rates are measured, so nothing is lost to an efficiency.
  p.matmul_efficiency = 1;
  p.hbm_efficiency = 1;
  p.compute_overhead = core::Seconds(m.small_gemm_seconds);
  p.compute_rate_by_flops = rate_curve(m.block_ops);
  p.h2d_rate = core::BytesPerSecond(copy_rate(m));
  p.d2h_rate = core::BytesPerSecond(copy_rate(m));
  p.pcie_latency = core::Seconds(m.small_copy_seconds);
  if (m.grad_check_bytes_per_s > 0) p.grad_check_rate = core::BytesPerSecond(m.grad_check_bytes_per_s);
  // The device is this process: its compute, copies and optimizer are
  // threads on these cores. As many as there are cores run at full speed
  // until `stowage calibrate` measures how many do (hyperthreads).
  p.host_lane_cores = std::max(1, m.cores);
  return p;
}

std::string machine_profile_yaml(const Measurements& m, const ProfileWriterOptions& o) {
  std::string s = "format: stowage/machine/v1\n";
  const std::string quick = o.quick ? " --quick" : "";
  int pcie_generation = 4, pcie_lanes = 16;
  core::CostParameters calibration = o.gpu ? host_calibration(m, o) : measured_calibration(m, o);
  if (o.gpu) {
    // Quoted: a GPU's label and a driver's device name may hold anything.
    s +=
        "label: " + core::yaml_quoted(o.name + " (" + o.gpu->label + "), measured by stowage profile") + "\n";
    if (m.gpu) {
      s += "source: " +
           core::yaml_quoted("stowage profile --gpu auto" + quick + ", on the GPU the driver names '" +
                             m.gpu->device + "': its datasheet figures are its bundled profile's (" +
                             o.gpu->name +
                             "); its copy, memory and GEMM rates, the host and the disk as measured below") +
           "\n";
    } else {
      s += "source: " +
           core::yaml_quoted("stowage profile --gpu " + o.gpu->name + quick + "; the GPU's figures are its " +
                             "bundled profile's, the host's and the disk's measured as listed below") +
           "\n";
    }
    s += measurement_comments(m);
    if (m.gpu) {
      s += gpu_comments(*m.gpu);
      if (const std::string missing = apply_gpu_calibration(*m.gpu, *o.gpu, calibration); !missing.empty())
        s += "# The GPU's calibration is left at its defaults: " + missing + "\n";
    }
    s += "gpu: " + o.gpu->name + "\n";
    pcie_generation = o.gpu->pcie_generation, pcie_lanes = o.gpu->pcie_lanes;
  } else {
    const double gemm = gemm_rate(m);
    s += "label: " + o.name + " (CPU backend), measured by stowage profile\n";
    s += "source: stowage profile" + quick + "; the measurements are listed below\n";
    s += measurement_comments(m);
    s += "gpu:\n  label: CPU backend device (host memory under a cap, OpenBLAS sgemm)\n";
    s += "  source: measured (median sgemm rate of the shapes above; CPU Adam at the optimizer's threads, 28 "
         "B/param)\n";
    s += "  memory: " + std::to_string(device_memory(m, o)) + " B\n";
    s += "  memory_bandwidth: " + num(device_memory_rate(m, o)) + "\n";
    s += "  fp16_rate: " + num(gemm) + "\n  bf16_rate: " + num(gemm) + "\n  fp32_rate: " + num(gemm) + "\n";
    s += "  pcie_generation: 4\n  pcie_lanes: 16\n";
    // As a GPU's profile lists the names its driver gives it: so a run on
    // the CPU backend is known to be of this profile's device (core/trace_origin.h).
    s += "  device_names: [\"" + std::string(core::kCpuBackendDeviceName) + "\"]\n";
  }
  s += "gpu_count: 1\n";
  s += "host:\n  label: this machine's host\n  source: measured (best Adam-pattern bandwidth over thread counts)\n";
  s += "  cpu_cores: " + std::to_string(m.cores) + "\n";
  s += "  dram: " + std::to_string(std::max<int64_t>(m.dram_bytes, int64_t{1} << 30)) + " B\n";
  s += "  dram_bandwidth: " + num(dram_rate(m)) + "\n";
  s += "  pcie_lanes: " + std::to_string(pcie_lanes) +
       "\n  pcie_generation: " + std::to_string(pcie_generation) + "\n";
  if (const std::optional<DriveRates> d = drive_rates(m)) {
    s += "nvme:\n  label: the disk under " + *m.disk_dir + "\n";
    s += "  source: measured (O_DIRECT, " + num(static_cast<double>(d->block) / 1024.0) + " KiB blocks, " +
         std::to_string(d->depth) + " in flight); endurance not measurable, a typical 1 TB TLC rating\n";
    s += "  capacity: " + std::to_string(std::max<int64_t>(m.disk_capacity, 1'000'000'000)) + " B\n";
    s += "  sequential_read: " + num(d->read) + "\n";
    s += "  sequential_write: " + num(d->write) + "\n";
    s += "  sustained_write: " + num(d->sustained_write) + "\n";
    s += "  endurance: 600 TB\n  pcie_generation: 4\n  pcie_lanes: 4\n";
    s += "nvme_count: 1\n";
  } else {
    s += "nvme_count: 0\n";
  }
  s += "calibration:\n" + core::calibration_yaml(calibration);
  return s;
}

}  // namespace stowage::probe
