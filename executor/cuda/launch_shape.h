// The launch shape of the element-wise kernels: 256 threads a block and a
// grid-stride loop, the grid capped so that a billion elements do not start
// four million blocks (each thread then takes several elements).
#pragma once

#include <algorithm>
#include <cstdint>

namespace stowage::executor::cuda {

inline constexpr int kThreadsPerBlock = 256;

// n > 0.
[[nodiscard]] inline unsigned blocks_for(int64_t n) {
  const int64_t wanted = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(std::min<int64_t>(wanted, int64_t{1} << 16));
}

}  // namespace stowage::executor::cuda
