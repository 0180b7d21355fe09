// A GPU model as training sees it: memory, HBM bandwidth, the dense matmul
// rates it really sustains for training math, and its links. Loaded from
// profiles/gpus/*.yaml (docs/formats/profiles.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/units.h"

namespace stowage::core {

struct GpuSpec {
  std::string name;    // profile name, e.g. "a100-80gb"
  std::string label;   // human name, e.g. "NVIDIA A100 80GB SXM4"
  std::string source;  // where the numbers come from (datasheet URL)
  Bytes memory;                        // device memory, e.g. 80 GB
  BytesPerSecond memory_bandwidth;     // HBM/GDDR peak, e.g. 2039 GB/s
  FlopsPerSecond fp16_rate;            // dense tensor fp16 with fp32 accumulate, e.g. 312 TFLOP/s
  std::optional<FlopsPerSecond> bf16_rate;  // absent where the card has no bf16 (V100, T4)
  FlopsPerSecond fp32_rate;            // non-tensor fp32, e.g. 19.5 TFLOP/s
  int pcie_generation = 4;             // 3, 4 or 5
  int pcie_lanes = 16;
  std::optional<BytesPerSecond> gpu_link_bandwidth;  // NVLink per GPU, bidirectional total as vendors quote
  // The names the CUDA driver gives this GPU (cudaDeviceProp::name, as
  // nvidia-smi prints them), exactly: how `stowage profile --gpu auto` and
  // bench/gpu/this-machine find the profile of the GPU they run on. A
  // variant with other figures (an H100 NVL beside the SXM) has its own
  // profile or none.
  std::vector<std::string> device_names;
};

// Per-direction PCIe payload bandwidth: GT/s x 128/130 x lanes / 8
// (PCIe 3.0 onwards use 128b/130b encoding; Gen3 8, Gen4 16, Gen5 32 GT/s).
BytesPerSecond pcie_bandwidth_per_direction(int generation, int lanes);

}  // namespace stowage::core
