// Exports a Stowage plan as a Hugging Face Accelerate config YAML that runs
// DeepSpeed through Accelerate's DeepSpeed plugin (`accelerate launch
// --config_file`). The plugin's `deepspeed_config:` keys carry only the
// ZeRO stage, offload devices and paths and gradient accumulation; the rest
// of the plan needs `deepspeed_config_file` pointing at export_deepspeed's
// JSON, and not_expressible says so. Keys: Accelerate 1.15 DeepSpeedPlugin
// and commands/config/cluster.py (specs-and-conventions.md, Part A3).
#pragma once

#include "core/diagnostic.h"
#include "core/machine_spec.h"
#include "core/plan_file.h"
#include "core/training_spec.h"
#include "core/workload.h"
#include "planner/deepspeed_export.h"

namespace stowage::planner {

// The Accelerate config for `plan` (emitted with yaml-cpp). not_expressible
// holds what DeepSpeed itself cannot express (as export_deepspeed reports)
// followed by what the plugin cannot carry without a DeepSpeed JSON file.
// Same inputs and errors as export_deepspeed.
[[nodiscard]] core::Result<ExportResult> export_accelerate(const core::PlanFile& plan,
                                                           const core::MachineSpec& machine,
                                                           const core::Workload& workload,
                                                           const core::TrainingSpec& training,
                                                           const ExportOptions& options);

}  // namespace stowage::planner
