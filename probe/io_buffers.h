// The buffers the disk probes move: O_DIRECT-aligned, one per request or
// region in flight, made before the probe's threads start (an allocation
// failure is then an exception in the caller, not in a thread), and not
// zeros: a virtual disk may skip writing zero blocks.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "executor/nvme/aligned_buffer.h"

namespace stowage::probe {

[[nodiscard]] inline std::vector<executor::AlignedBuffer> io_buffers(int count, int64_t bytes) {
  std::vector<executor::AlignedBuffer> out;
  for (int i = 0; i < count; ++i) {
    out.emplace_back(static_cast<size_t>(bytes));
    std::memset(out.back().data(), 0x5a, out.back().size());
  }
  return out;
}

}  // namespace stowage::probe
