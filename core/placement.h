// A placement: where each tensor class rests and which ZeRO stage
// partitions it across data-parallel ranks. The three standard placements
// are the ones users know from DeepSpeed. (The per-partition Policy of the
// planner refines this; a placement is the whole-model summary.)
#pragma once

#include <string>
#include <vector>

#include "core/tensor_class.h"

namespace stowage::core {

// ZeRO stage (Rajbhandari et al. 2020, arXiv:1910.02054): 0 replicates
// everything; 1 partitions optimizer states; 2 also gradients; 3 also
// parameters.
enum class ZeroStage { k0 = 0, k1 = 1, k2 = 2, k3 = 3 };

struct Placement {
  std::string name;         // "zero-offload"
  std::string description;  // one line for tables
  ZeroStage stage = ZeroStage::k0;
  Tier param16 = Tier::kGpu;           // where the 16-bit weights rest between uses
  Tier optimizer_states = Tier::kGpu;  // master32, adam_m, adam_v (and grad32)
};

enum class StandardPlacement { kAllGpu, kZeroOffload, kZeroInfinity };

// all-gpu: nothing offloaded; ZeRO-3 across ranks when there are several
//   (the most an all-GPU run can partition), stage 0 on one GPU.
// zero-offload: ZeRO-2, fp32 master and Adam moments on CPU, optimizer on CPU
//   (Ren et al. 2021, arXiv:2101.06840).
// zero-infinity: ZeRO-3, optimizer states on NVMe, fp16 params on CPU
//   (Rajbhandari et al. 2021, arXiv:2104.07857).
[[nodiscard]] Placement standard_placement(StandardPlacement which, int gpu_count);
[[nodiscard]] std::vector<Placement> standard_placements(int gpu_count);

}  // namespace stowage::core
