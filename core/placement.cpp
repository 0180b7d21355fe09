#include "core/placement.h"

namespace stowage::core {

Placement standard_placement(StandardPlacement which, int gpu_count) {
  switch (which) {
    case StandardPlacement::kAllGpu:
      return {.name = "all-gpu",
              .description = "everything on the GPU",
              .stage = gpu_count > 1 ? ZeroStage::k3 : ZeroStage::k0,
              .param16 = Tier::kGpu,
              .optimizer_states = Tier::kGpu};
    case StandardPlacement::kZeroOffload:
      return {.name = "zero-offload",
              .description = "ZeRO-2, fp32 master and Adam moments on CPU",
              .stage = ZeroStage::k2,
              .param16 = Tier::kGpu,
              .optimizer_states = Tier::kCpu};
    case StandardPlacement::kZeroInfinity:
      return {.name = "zero-infinity",
              .description = "ZeRO-3, optimizer states on NVMe, fp16 params on CPU",
              .stage = ZeroStage::k3,
              .param16 = Tier::kCpu,
              .optimizer_states = Tier::kNvme};
  }
  return {};
}

std::vector<Placement> standard_placements(int gpu_count) {
  return {standard_placement(StandardPlacement::kAllGpu, gpu_count),
          standard_placement(StandardPlacement::kZeroOffload, gpu_count),
          standard_placement(StandardPlacement::kZeroInfinity, gpu_count)};
}

}  // namespace stowage::core
