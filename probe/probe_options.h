// How much `stowage profile` measures and where: --quick takes one size
// per test and short repeats (under a minute); the full run sweeps sizes,
// block sizes, queue depths and thread counts.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>

#include "probe/measurements.h"

namespace stowage::probe {

enum class Depth { kQuick, kFull };

struct ProbeOptions {
  Depth depth = Depth::kFull;
  std::optional<std::filesystem::path> disk_dir;  // absent: no disk tests
  int max_threads = 0;                            // 0: all cores
  // The CPU backend's device: its matrix products and transformer blocks
  // (probe_compute). Off where the profile names a GPU, whose figures are
  // its own profile's.
  bool cpu_device = true;
  std::function<void(const ProgressReport&)> on_progress;
};

}  // namespace stowage::probe
