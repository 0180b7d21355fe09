// A placement: where each tensor class rests and which ZeRO stage
// partitions it across data-parallel ranks. The three standard placements
// are the ones users know from DeepSpeed. (The per-partition Policy of the
// planner refines this; a placement is the whole-model summary.)
#pragma once

#include <optional>
#include <string>
#include <string_view>
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
  // Share of the optimizer states kept on `optimizer_states` when that is
  // not the GPU; the first (lowest) partitions hold the rest on the GPU
  // with their optimizer there: DeepSpeed's offload_optimizer.ratio
  // (ZeRO-Offload++ Twin-Flow, stage 3 with CPU offload only). 1: all.
  double offload_ratio = 1;
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

// Every placement DeepSpeed's ZeRO configuration can state, by name: ZeRO
// stage 0 (nothing offloaded); stages 1 and 2 with offload_optimizer none
// or cpu; stage 3 with offload_optimizer {none, cpu, nvme} x offload_param
// {none, cpu, nvme}. DeepSpeed offloads only from stage 1, to NVMe and
// parameters only at stage 3 (runtime/zero/config.py, stage3.py;
// planner/deepspeed_export.cpp states the same rules for the exporter).
// Names: "zero-2", "zero-2-optimizer-cpu", "zero-3-optimizer-nvme-params-cpu".
[[nodiscard]] std::vector<Placement> deepspeed_placements();

// A placement by name: a standard one (for `gpu_count` GPUs), a DeepSpeed
// one, or a DeepSpeed stage-3 CPU offload with a partial ratio appended,
// "zero-3-optimizer-cpu-ratio-0.4" (0 < ratio < 1, DeepSpeed's
// offload_optimizer.ratio). None for anything else.
[[nodiscard]] std::optional<Placement> placement_named(std::string_view name, int gpu_count);

}  // namespace stowage::core
