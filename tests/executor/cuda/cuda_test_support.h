// What the GPU tests share: the skip when no device is present (STYLE.md
// §16: GPU tests carry the CTest label `gpu` and say why they skip), device
// arrays filled from and read back into host vectors, and random inputs of
// the odd sizes every kernel is checked at.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <vector>

#include "executor/cuda/cuda_device.h"
#include "executor/cuda/cuda_error.h"
#include "executor/cuda/device_memory.h"

namespace stowage::executor::cuda {

// In a TEST body: skips it, with the reason, where no device can be used.
#define STOWAGE_REQUIRE_CUDA_DEVICE()                                                                     \
  do {                                                                                                    \
    const ::stowage::executor::cuda::CudaPresence presence_ = ::stowage::executor::cuda::cuda_presence(); \
    if (!presence_.present()) GTEST_SKIP() << "no CUDA device: " << presence_.absent_because;             \
  } while (0)

// 1 (a lone thread), 7 (less than a warp), 1000003 (a prime: many blocks
// and a ragged last one, more elements than the grid's threads).
inline constexpr int64_t kOddSizes[] = {1, 7, 1000003};

// A device copy of a host vector, read back with to_host.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<T>& host)
      : memory_(static_cast<int64_t>(host.size() * sizeof(T))), n_(host.size()) {
    if (n_ > 0) STOWAGE_CUDA(cudaMemcpy(memory_.data(), host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  [[nodiscard]] T* get() const { return reinterpret_cast<T*>(memory_.data()); }
  [[nodiscard]] std::vector<T> to_host() const {
    std::vector<T> host(n_);
    STOWAGE_CUDA(cudaDeviceSynchronize());  // the kernels before, and their faults
    if (n_ > 0) STOWAGE_CUDA(cudaMemcpy(host.data(), memory_.data(), n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  DeviceMemory memory_;
  size_t n_;
};

// n floats, uniform in [lo, hi), from a fixed seed.
inline std::vector<float> random_floats(int64_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(static_cast<size_t>(n));
  for (float& x : out) x = dist(rng);
  return out;
}

// n raw 16-bit patterns, every one possible (NaNs, infinities, subnormals).
inline std::vector<uint16_t> random_bits(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint16_t> out(static_cast<size_t>(n));
  for (uint16_t& x : out) x = static_cast<uint16_t>(rng());
  return out;
}

}  // namespace stowage::executor::cuda
