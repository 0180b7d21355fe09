// The buffers the disk probes move: O_DIRECT-aligned, one per request or
// region in flight, made before the probe's threads start (an allocation
// failure is then an exception in the caller, not in a thread), and not
// zeros: a virtual disk may skip writing zero blocks.
//
// All of them are slices of one allocation, so that they sit in huge pages
// as the executor's host tiers do (host_pages.h): a 1 MiB buffer of its own
// holds no whole 2 MiB page, and O_DIRECT on 4 KiB pages ran at half the
// rate here, which left the profile's drive slower than the executor's
// (docs/performance.md).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "executor/nvme/aligned_buffer.h"

namespace stowage::probe {

class IoBuffers {
 public:
  IoBuffers(int count, int64_t bytes)
      : stride_((static_cast<size_t>(bytes) + executor::kDirectIoAlignment - 1) / executor::kDirectIoAlignment *
                executor::kDirectIoAlignment),
        bytes_(static_cast<size_t>(bytes)),
        all_(stride_ * static_cast<size_t>(count) + executor::kHugePage),
        first_(all_.span().subspan(
            (executor::kHugePage - reinterpret_cast<uintptr_t>(all_.data()) % executor::kHugePage) % executor::kHugePage)) {
    std::memset(all_.data(), 0x5a, all_.size());
  }
  // Buffer i, `bytes` long, aligned for O_DIRECT; buffer 0 starts a huge page.
  [[nodiscard]] std::span<std::byte> operator[](size_t i) const { return first_.subspan(i * stride_, bytes_); }

 private:
  size_t stride_;
  size_t bytes_;
  executor::AlignedBuffer all_;
  std::span<std::byte> first_;  // all_ from its first 2 MiB boundary
};

}  // namespace stowage::probe
