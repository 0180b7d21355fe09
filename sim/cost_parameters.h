// The cost model's constants that no datasheet gives: efficiencies and fixed
// overheads. Defaults are typical published measurements, named where they
// come from; calibration against a measured timeline replaces them.
#pragma once

#include "core/units.h"

namespace stowage::sim {

struct CostParameters {
  // Dense matmul efficiency against the datasheet peak: large GEMMs reach
  // 60-80 % (specs-and-conventions B5 note); transformer layers mix in
  // smaller kernels, so 0.6.
  double matmul_efficiency = 0.6;
  // Fraction of HBM peak a streaming kernel sustains (~80-90 % on A100/H100
  // in bandwidth tests).
  double hbm_efficiency = 0.85;
  // Fixed cost per compute op: kernel launches of one layer's pass.
  core::Seconds compute_overhead{20e-6};
  // PCIe payload efficiency over the link's per-direction rate: pinned DMA
  // reaches ~80 % (cudaMemcpy bandwidthTest: ~25 of 31.5 GB/s on Gen4 x16),
  // pageable copies about half that through a bounce buffer.
  double pcie_pinned_efficiency = 0.8;
  double pcie_pageable_efficiency = 0.4;
  core::Seconds pcie_latency{10e-6};
  // NVMe: vendor sequential rates are reached with 128 KiB-1 MiB blocks at
  // queue depth 8+ (specs-and-conventions B6); per-request latency ~100 µs.
  double nvme_efficiency = 0.9;
  core::Seconds nvme_latency{100e-6};
  // Host DRAM: STREAM-like sustained bandwidth is 70-85 % of peak (B7).
  double dram_efficiency = 0.75;
  // CPU Adam: ~12 FLOP per parameter (moments, bias correction, sqrt, divide,
  // update, 16-bit copy); a vectorised AVX2 core sustains ~8 GFLOP/s of it.
  double adam_flops_per_param = 12;
  core::FlopsPerSecond cpu_core_rate{8e9};
  // Ring collectives: per-step latency and bus efficiency over NVLink/PCIe.
  core::Seconds comm_latency{20e-6};
  double comm_efficiency = 0.8;
};

}  // namespace stowage::sim
