// The GPU tier of a run: one cudaMalloc of the plan's GPU capacity (or the
// --device-memory cap), carved by a RangeAllocator, so the executor's
// measured peak is the schedule's and an infeasible plan fails at the
// allocation that does not fit, as on the CPU backend. Thread-safe: lanes
// allocate concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <mutex>

#include "executor/cuda/device_memory.h"
#include "executor/range_allocator.h"

namespace stowage::executor::cuda {

struct DeviceRange {
  std::byte* data = nullptr;  // a device address; null for an empty range
  ArenaRange range;
};

class DeviceArena {
 public:
  // One cudaMalloc of `capacity` bytes; throws CudaError when the device
  // cannot give it (the message names cudaMalloc and the CUDA error).
  explicit DeviceArena(int64_t capacity);

  // A shortfall names bytes, use, cap and the largest free run; the caller
  // words it with memory_exhausted() (executor/memory_exhausted.h).
  [[nodiscard]] std::expected<DeviceRange, ArenaShortfall> allocate(int64_t bytes);
  void release(const DeviceRange& range);
  [[nodiscard]] int64_t in_use() const;
  [[nodiscard]] int64_t capacity() const { return memory_.bytes(); }

 private:
  DeviceMemory memory_;
  mutable std::mutex mutex_;
  RangeAllocator ranges_;
};

}  // namespace stowage::executor::cuda
