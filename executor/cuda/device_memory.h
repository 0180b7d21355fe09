// One cudaMalloc, owned: freed when the owner goes. The device arena
// (device_arena.h) carves the plan's whole GPU capacity out of one of these.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stowage::executor::cuda {

class DeviceMemory {
 public:
  DeviceMemory() = default;
  // Throws CudaError (cudaMalloc's, e.g. cudaErrorMemoryAllocation). bytes >= 0;
  // 0 allocates nothing. The base is 256-byte aligned (cudaMalloc's guarantee).
  explicit DeviceMemory(int64_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& other) noexcept;
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  [[nodiscard]] std::byte* data() const { return data_; }  // a device address
  [[nodiscard]] int64_t bytes() const { return bytes_; }

 private:
  void reset() noexcept;
  std::byte* data_ = nullptr;
  int64_t bytes_ = 0;
};

}  // namespace stowage::executor::cuda
