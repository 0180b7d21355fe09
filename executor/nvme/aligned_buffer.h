// A heap buffer aligned for O_DIRECT: the kernel rejects direct I/O whose
// memory address, file offset or length is not a multiple of the logical
// block size, and 4096 covers every device we target (512e and 4Kn drives).
// Its pages come from where the executor's host tiers come from
// (host_pages.h: from 1 MiB up, a mapping of its own with transparent huge
// pages), so that the store's staging, `stowage profile`'s disk probes and
// the benchmarks move memory like the executor's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <span>

#include "executor/host_pages.h"

namespace stowage::executor {

inline constexpr size_t kDirectIoAlignment = 4096;
static_assert(kHostPage % kDirectIoAlignment == 0, "host pages are aligned for O_DIRECT");

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // `bytes` rounded up to kDirectIoAlignment; zero-filled. Throws std::bad_alloc.
  explicit AlignedBuffer(size_t bytes)
      : size_((bytes + kDirectIoAlignment - 1) / kDirectIoAlignment * kDirectIoAlignment),
        data_(allocate_host_pages(std::max(size_, kDirectIoAlignment)), Free{std::max(size_, kDirectIoAlignment)}) {
    if (data_ == nullptr) throw std::bad_alloc();
    std::fill_n(data_.get(), size_, std::byte{0});
  }

  [[nodiscard]] std::byte* data() const { return data_.get(); }
  [[nodiscard]] size_t size() const { return size_; }
  [[nodiscard]] std::span<std::byte> span() const { return {data_.get(), size_}; }

 private:
  struct Free {
    size_t bytes = 0;
    void operator()(std::byte* p) const { free_host_pages(p, bytes); }
  };
  size_t size_ = 0;
  std::unique_ptr<std::byte, Free> data_;
};

}  // namespace stowage::executor
