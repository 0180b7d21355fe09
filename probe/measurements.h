// What `stowage profile` measures on the machine it runs on, in one place:
// each probe fills its part, profile_writer.h turns it into a machine
// profile. Rates in base units (B/s, FLOP/s, parameters/s), times in s.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stowage::probe {

struct ThreadRate {
  int threads = 1;
  double rate = 0;
};

struct SizeRate {
  int64_t bytes = 0;
  double rate = 0;  // B/s
};

struct DiskRate {
  int64_t block = 0;  // bytes per request
  int depth = 1;      // requests in flight
  double read = 0;    // B/s
  double write = 0;   // B/s
};

// The entry of `disk` the executor's default (1 MiB blocks, 8 in flight)
// is nearest to: the one the profile's drive rates come from, and the
// configuration the mixed run uses. nullptr when there is none.
[[nodiscard]] const DiskRate* executor_default_disk_rate(const std::vector<DiskRate>& disk);

// The executor's NVMe store (executor/nvme/BlockStore) at its default block
// size and queue depth, `callers` threads per direction (the lane's slots):
// each direction alone, and each while the other ran.
struct StoreRate {
  int64_t block = 0;
  int depth = 0;
  int callers = 1;
  double read = 0, write = 0;              // B/s, alone
  double mixed_read = 0, mixed_write = 0;  // B/s, reads beside writes
};

struct GemmRate {
  int64_t rows = 0, in = 0, out = 0;  // y[rows, out] = x[rows, in] W^T
  double rate = 0;                    // FLOP/s (2 rows in out per product)
};

// One op of the executor's own GPT block at one shape: its FLOPs as the
// schedule counts them (core::Workload) and the rate it ran at.
struct BlockOpRate {
  std::string what;  // "forward d_model 256, 1024 tokens"
  double flops = 0;
  double rate = 0;  // FLOP/s
};

// A GPU as `stowage profile --gpu auto` measured it (executor/cuda/
// device_probe.h, which the command's CUDA build runs; these are its
// numbers without CUDA's types).
struct GpuMeasurements {
  std::string device;  // the CUDA driver's name
  struct Copy {
    int64_t bytes = 0;
    double h2d = 0, d2h = 0;  // B/s, pinned host memory
  };
  std::vector<Copy> pinned;
  double hbm_copy = 0;        // B/s of a device-to-device copy, read + written
  std::string gemm_type;      // "bf16", or "fp16" on a GPU without bf16
  std::vector<double> gemms;  // FLOP/s of the GEMMs measured in that type
};

struct Measurements {
  int cores = 1;
  int64_t dram_bytes = 0;
  // Bytes of the Adam access pattern per second (28 B per parameter, as the
  // optimizer ops count them), by threads.
  std::vector<ThreadRate> dram_adam_pattern;
  std::vector<SizeRate> memcpy_pageable, memcpy_locked;
  double small_copy_seconds = 0;  // one 4 KiB memcpy with its call, the fixed cost of a copy
  bool locked = false;            // mlock succeeded for the locked copies
  std::vector<ThreadRate> adam_params;  // executor's CPU Adam, parameters/s, by threads
  double grad_check_bytes_per_s = 0;    // the gradient check's scan of 16-bit gradients, one thread
  std::vector<GemmRate> gemm;           // the executor's sgemm (one BLAS thread), by shape
  std::string blas_kernels;             // the OpenBLAS kernels it ran on (executor/model/blas_kernels.h)
  double small_gemm_seconds = 0;        // a 1x64x64 product: the fixed cost of a compute op
  std::vector<BlockOpRate> block_ops;   // GPT block forward and backward by shape
  std::optional<std::string> disk_dir;
  int64_t disk_capacity = 0;
  std::vector<DiskRate> disk;
  double disk_request_seconds = 0;        // one 4 KiB O_DIRECT read at depth 1
  std::optional<double> disk_write_after_cache;  // write rate in the last quarter of a long 1 MiB x1 write
  // Reads and writes at once, at executor_default_disk_rate's block and
  // depth each: B/s of each direction while both ran (how far the drive
  // serves one direction beside the other, CostParameters::nvme_duplex).
  std::optional<DiskRate> disk_mixed;
  std::vector<StoreRate> store;  // by callers, 1 and 2
  std::optional<GpuMeasurements> gpu;  // --gpu auto: the GPU the profile names
  double seconds = 0;  // the whole profile's wall time
};

// Reported between steps: `done` of `total` work units, what runs now.
struct ProgressReport {
  double done = 0, total = 1;
  double elapsed = 0;  // s
  std::string what;
};

}  // namespace stowage::probe
