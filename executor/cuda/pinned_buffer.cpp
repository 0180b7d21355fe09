// PinnedBuffer: cudaHostAlloc / cudaFreeHost.
#include "executor/cuda/pinned_buffer.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "executor/cuda/cuda_error.h"

namespace stowage::executor::cuda {

PinnedBuffer::PinnedBuffer(int64_t bytes, PinnedMapping mapping) : bytes_(bytes) {
  if (bytes <= 0) {
    bytes_ = 0;
    return;
  }
  const unsigned flags = mapping == PinnedMapping::kMapped ? cudaHostAllocMapped : cudaHostAllocDefault;
  void* base = nullptr;
  STOWAGE_CUDA(cudaHostAlloc(&base, static_cast<size_t>(bytes), flags));
  data_ = static_cast<std::byte*>(base);
}

PinnedBuffer::~PinnedBuffer() {
  reset();
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void PinnedBuffer::reset() noexcept {
  if (data_ != nullptr) (void)cudaFreeHost(data_);  // see DeviceMemory::reset
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace stowage::executor::cuda
