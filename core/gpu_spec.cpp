#include "core/gpu_spec.h"

namespace stowage::core {

BytesPerSecond pcie_bandwidth_per_direction(int generation, int lanes) {
  // Transfer rate per lane in GT/s; Gen1/2 use 8b/10b, Gen3+ 128b/130b.
  double gt_per_s = 0;
  double encoding = 128.0 / 130.0;
  switch (generation) {
    case 1: gt_per_s = 2.5; encoding = 0.8; break;
    case 2: gt_per_s = 5.0; encoding = 0.8; break;
    case 3: gt_per_s = 8.0; break;
    case 4: gt_per_s = 16.0; break;
    case 5: gt_per_s = 32.0; break;
    default: gt_per_s = 64.0; break;  // Gen6 (PAM4 with FLIT; ~same payload ratio)
  }
  return BytesPerSecond(gt_per_s * 1e9 * encoding * lanes / 8.0);
}

}  // namespace stowage::core
