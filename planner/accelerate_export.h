// Exports a Stowage plan as a Hugging Face Accelerate config YAML that runs
// DeepSpeed through Accelerate's DeepSpeed plugin (`accelerate launch
// --config_file`). The YAML's deepspeed_config names export_deepspeed's
// JSON (deepspeed_config_file, ExportOptions) so that no DeepSpeed key is
// lost: the plugin's own keys carry only the stage, offload devices and
// gradient accumulation, and Accelerate's launcher drops the NVMe paths.
// Keys: Accelerate 1.15 DeepSpeedPlugin and commands/config/cluster.py.
#pragma once

#include "core/diagnostic.h"
#include "core/machine_spec.h"
#include "core/plan_file.h"
#include "core/training_spec.h"
#include "core/workload.h"
#include "planner/deepspeed_export.h"

namespace stowage::planner {

// The Accelerate config for `plan` (emitted with yaml-cpp). not_expressible
// is export_deepspeed's: the YAML loses nothing beside it. instructions add
// what the training script must do under Accelerate. Same inputs and errors
// as export_deepspeed.
[[nodiscard]] core::Result<ExportResult> export_accelerate(const core::PlanFile& plan,
                                                           const core::MachineSpec& machine,
                                                           const core::Workload& workload,
                                                           const core::TrainingSpec& training,
                                                           const ExportOptions& options);

}  // namespace stowage::planner
