// Page-locked host memory from cudaHostAlloc, owned: what the plan's pinned
// host tiers live in, so that H2D and D2H copies run as DMA at full PCIe
// rate and asynchronously to the host (CUDA C++ Best Practices Guide,
// "Pinned Memory").
#pragma once

#include <cstddef>
#include <cstdint>

namespace stowage::executor::cuda {

enum class PinnedMapping : uint8_t {
  kHostOnly,  // cudaHostAllocDefault: copies only
  kMapped,    // cudaHostAllocMapped: kernels may also read it over PCIe
};

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  // Throws CudaError naming cudaHostAlloc. bytes >= 0; 0 allocates nothing.
  explicit PinnedBuffer(int64_t bytes, PinnedMapping mapping = PinnedMapping::kHostOnly);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  [[nodiscard]] std::byte* data() const { return data_; }  // a host address
  [[nodiscard]] int64_t bytes() const { return bytes_; }

 private:
  void reset() noexcept;
  std::byte* data_ = nullptr;
  int64_t bytes_ = 0;
};

}  // namespace stowage::executor::cuda
