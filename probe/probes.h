// The probes of `stowage profile`, one file each: host memory (the Adam
// access pattern by threads, memcpy pageable and locked), the executor's
// CPU Adam, its sgemm at the model's shapes, O_DIRECT disk I/O and the
// executor's NVMe store. Each
// fills its part of Measurements and calls `tick` after each measurement
// (for the progress bar). Environment failures (a disk that cannot be
// written) are std::runtime_error with the path and errno text.
#pragma once

#include <filesystem>
#include <functional>
#include <vector>

#include "probe/measurements.h"
#include "probe/probe_options.h"

namespace stowage::probe {

using Tick = std::function<void(const char* what)>;

// Work units each probe reports through `tick`, for the progress bar.
int memory_probe_steps(const ProbeOptions& o, int cores);
int adam_probe_steps(const ProbeOptions& o, int cores);
int compute_probe_steps(const ProbeOptions& o);
int disk_probe_steps(const ProbeOptions& o);
int store_probe_steps(const ProbeOptions& o);

void probe_memory(const ProbeOptions& o, Measurements& m, const Tick& tick);
void probe_adam(const ProbeOptions& o, Measurements& m, const Tick& tick);
void probe_compute(const ProbeOptions& o, Measurements& m, const Tick& tick);
void probe_disk(const ProbeOptions& o, Measurements& m, const Tick& tick);
void probe_store(const ProbeOptions& o, Measurements& m, const Tick& tick);
// The store probe in `disk_dir` with `regions` regions of 32 MiB (at least
// 2), by callers 1 and 2. Works in a directory of its own it creates there
// (an error if one of that name exists: never someone else's) and removes.
// Throws executor::IoError where the store fails (a filesystem refusing
// O_DIRECT), std::runtime_error where the directory cannot be made.
[[nodiscard]] std::vector<StoreRate> probe_store_at(const std::filesystem::path& disk_dir, int regions,
                                                    const Tick& tick);

// Runs them all in that order; fills cores, dram_bytes and seconds too.
[[nodiscard]] Measurements probe_machine(const ProbeOptions& o);

// Seconds of the fastest of `repeats` runs of `f` (the least disturbed by
// other processes on a shared machine).
double best_seconds(int repeats, const std::function<void()>& f);

}  // namespace stowage::probe
