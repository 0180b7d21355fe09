// DeviceMemory: cudaMalloc / cudaFree.
#include "executor/cuda/device_memory.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "executor/cuda/cuda_error.h"

namespace stowage::executor::cuda {

DeviceMemory::DeviceMemory(int64_t bytes) : bytes_(bytes) {
  if (bytes <= 0) {
    bytes_ = 0;
    return;
  }
  void* base = nullptr;
  STOWAGE_CUDA(cudaMalloc(&base, static_cast<size_t>(bytes)));
  data_ = static_cast<std::byte*>(base);
}

DeviceMemory::~DeviceMemory() {
  reset();
}

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceMemory::reset() noexcept {
  // A failing cudaFree in a destructor (the context already torn down at
  // exit) has no one to tell; the memory goes with the context.
  if (data_ != nullptr) (void)cudaFree(data_);
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace stowage::executor::cuda
