// The cost model's constants that no datasheet gives: efficiencies, fixed
// overheads and measured rates. They are data: a machine profile's
// `calibration:` section sets any of them (docs/formats/profiles.md),
// `stowage profile` measures them and `stowage calibrate` fits them to
// measured timelines. The compiled defaults below each name their source;
// they stand for a machine nobody has measured.
#pragma once

#include <optional>
#include <vector>

#include "core/units.h"

namespace stowage::core {

// One point of a measured compute rate curve: ops of `flops` FLOPs ran at
// `rate` FLOP/s.
struct RatePoint {
  double flops = 0;
  FlopsPerSecond rate;
  bool operator==(const RatePoint&) const = default;
};

// nvme_duplex's range: below 1 a direction alone would be slowed too.
inline constexpr double kMinNvmeDuplex = 1, kMaxNvmeDuplex = 2;

struct CostParameters {
  // Dense matmul efficiency against the datasheet peak. Large bf16 GEMMs
  // reach 60-80 % of peak on A100/H100 (NVIDIA, "Matrix Multiplication
  // Background User's Guide", docs.nvidia.com/deeplearning/performance);
  // transformer layers mix in smaller kernels, so 0.6.
  double matmul_efficiency = 0.6;
  // Fraction of HBM peak a streaming kernel sustains: ~80-90 % on A100/H100
  // (NVIDIA bandwidthTest / nvbandwidth device-to-device copies).
  double hbm_efficiency = 0.85;
  // Fixed cost per compute op: the kernel launches of one layer's pass,
  // ~5 µs each (CUDA C++ Best Practices Guide, "kernel launch overhead"),
  // a handful per layer.
  Seconds compute_overhead{20e-6};
  // The rate a compute op reaches by its size, where measured: points in
  // increasing order of FLOPs, interpolated linearly in log FLOPs and flat
  // beyond the ends (compute_rate.h); matmul_efficiency still scales it.
  // `stowage profile` measures the CPU backend's own transformer blocks,
  // whose forward and backward reach different fractions of an sgemm's rate
  // (attention, norms and GELU around the matrix products). Default: empty,
  // the device's datasheet peak for every op.
  std::vector<RatePoint> compute_rate_by_flops;
  // PCIe payload efficiency over the link's per-direction rate: pinned DMA
  // reaches ~80 % (cudaMemcpy bandwidthTest: ~25 of 31.5 GB/s on Gen4 x16),
  // pageable copies about half that through a bounce buffer (CUDA C++ Best
  // Practices Guide, "Pinned Memory").
  double pcie_pinned_efficiency = 0.8;
  double pcie_pageable_efficiency = 0.4;
  // Per-transfer setup of a cudaMemcpyAsync, ~10 µs (bandwidthTest at small sizes).
  Seconds pcie_latency{10e-6};
  // A measured payload rate per direction, host to device and back. When
  // set it replaces link rate x efficiency: the CPU backend's "PCIe" is a
  // memcpy, and a measured link is better than a formula. Default: unset.
  std::optional<BytesPerSecond> h2d_rate;
  std::optional<BytesPerSecond> d2h_rate;
  // A measured fixed cost per copy in one direction, where it differs from
  // the other's: replaces pcie_latency for that direction. `stowage
  // calibrate` fits each direction's own (on the CPU backend the two were
  // 0 and 0.35 ms in one run, and their mean added 8 % to every upload).
  // Default: unset.
  std::optional<Seconds> h2d_latency;
  std::optional<Seconds> d2h_latency;
  // Where the device is a program on the host (host_lane_cores set): the
  // rate a copy in each direction reaches while a compute op runs, which
  // takes the memory path (caches, memory bandwidth, the cores' time) a
  // memcpy's thread uses; the compute op is not slowed. Issue 14's runs
  // measured uploads about 10 % slower beside a layer pass than alone.
  // `stowage calibrate` fits it from the copies' overlap with compute.
  // Unset, or on a real GPU (whose copy engines share nothing with its
  // SMs): a copy runs at h2d_rate / d2h_rate whatever runs beside it.
  std::optional<BytesPerSecond> h2d_rate_beside_compute;
  std::optional<BytesPerSecond> d2h_rate_beside_compute;
  // Where the device is a program on the host (host_lane_cores set): the
  // share of its rate alone a layer pass (forward, backward, recompute)
  // reaches while NVMe I/O is in flight, whose interrupts, completions and
  // page copies take the host's cores and caches; the I/O is not slowed.
  // Issue 14's runs measured layer passes 3-14 % slower beside the NVMe
  // store's reads and writes than alone, and copies beside them no slower
  // (docs/fidelity.md, session 47). `stowage calibrate` fits it from the
  // passes' overlap with NVMe I/O. Unset: a pass runs at its own rate
  // whatever I/O is in flight (on a real GPU the drive's DMA shares nothing
  // with the SMs).
  std::optional<double> compute_share_beside_nvme;
  // NVMe: vendor sequential rates are reached with 128 KiB-1 MiB blocks at
  // queue depth 8+ (fio sequential runs in vendor datasheets, e.g. the
  // Samsung 990 PRO's "QD32, 128 KB"); per-request latency ~100 µs.
  double nvme_efficiency = 0.9;
  Seconds nvme_latency{100e-6};
  // A measured rate per direction of one drive, as offload I/O reaches it.
  // When set it replaces the drive's rate x nvme_efficiency, as h2d_rate
  // does the link's: a drive's datasheet or probe and the store's requests
  // differ by a different share in each direction. `stowage calibrate` fits
  // them to measured traces. Default: unset.
  std::optional<BytesPerSecond> nvme_read_rate;
  std::optional<BytesPerSecond> nvme_write_rate;
  // How much of the drive reads and writes get when they run at once, in
  // drive-seconds per second: each direction is held to its own rate, and
  // together they use at most this much of the drive's time. 1: they share
  // it (a read beside a write takes twice as long); 2: neither slows the
  // other. Datasheets give no mixed rate, so 1, the cautious end;
  // `stowage profile` measures it (a read and a write run at once) and
  // `stowage calibrate` fits it where the traces overlap the two.
  double nvme_duplex = 1;
  // Host DRAM: STREAM-like sustained bandwidth is 70-85 % of the channel
  // peak (McCalpin, STREAM results, www.cs.virginia.edu/stream).
  double dram_efficiency = 0.75;
  // CPU Adam: ~12 FLOP per parameter (two moments, bias correction, sqrt,
  // divide, update, 16-bit copy: torch.optim.Adam's update rule); a
  // vectorised AVX2 core sustains ~8 GFLOP/s of it (DeepSpeed's CPU Adam,
  // ZeRO-Offload paper, Ren et al. 2021, section 5).
  double adam_flops_per_param = 12;
  FlopsPerSecond cpu_core_rate{8e9};
  // Cores one optimizer op runs on (the executor's --threads); 0: all the
  // host's cores, as DeepSpeed's CPU Adam uses them.
  int optimizer_threads = 0;
  // The step's gradient check (overflow and global norm) on either lane:
  // bytes of gradients scanned per second. Unset: the op's FLOPs (2 per
  // parameter) at the lane's compute rate and its bytes through memory,
  // as for any op of its lane. Measured where set: the CPU backend's check
  // is a single-threaded pass far slower than that roofline.
  std::optional<BytesPerSecond> grad_check_rate;
  // Where the "device" is a program on the host (the CPU backend, whose
  // compute, copies and optimizer are threads of one process): how many of
  // those lanes' threads run at full speed at once. While more are busy,
  // they share this many cores' worth of time evenly, so an op slows down
  // while another lane's runs beside it; a core's two hyperthreads count for
  // less than two cores. `stowage profile` writes the host's core count;
  // `stowage calibrate` fits it to the measured steps. Unset (every real
  // GPU): the device has silicon of its own and no lane slows another by
  // using the CPU.
  std::optional<double> host_lane_cores;
  // Ring collectives: per-step latency and bus efficiency over NVLink/PCIe
  // (NCCL tests' busbw: ~80 % of link rate).
  Seconds comm_latency{20e-6};
  double comm_efficiency = 0.8;
};

}  // namespace stowage::core
