// Exports a Stowage plan as a DeepSpeed configuration JSON (ZeRO stage,
// optimizer and parameter offload, aio engine), realising the plan as
// closely as DeepSpeed's keys allow and saying in plain sentences what they
// cannot express. Key names and defaults: DeepSpeed 0.19.6,
// deepspeed/runtime/zero/{config,offload_config}.py and
// swap_tensor/constants.py (specs-and-conventions.md, Part A2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/machine_spec.h"
#include "core/plan_file.h"
#include "core/training_spec.h"
#include "core/workload.h"

namespace stowage::planner {

struct ExportOptions {
  // Directory on the NVMe device(s) for DeepSpeed's swap files, e.g.
  // "/local_nvme" (DeepSpeed's documented example path).
  std::string nvme_path = "/local_nvme";
  // Accelerate only: the DeepSpeed JSON (export_deepspeed's text) that the
  // YAML's deepspeed_config_file names, e.g. "run/acc.deepspeed.json".
  std::string deepspeed_config_file = "deepspeed.json";
};

struct ExportResult {
  std::string text;  // the configuration file, ready to write
  // One plain sentence per thing in the plan the format cannot express,
  // naming the setting the file uses instead. Empty when the file runs the
  // plan as planned.
  std::vector<std::string> not_expressible;
  // What the user must do beside the file for the run to be the plan's
  // (switch on checkpointing in the script, stripe the drives); these do
  // not change the plan.
  std::vector<std::string> instructions;
};

enum class OffloadDevice { kNone, kCpu, kNvme };

// zero_optimization.offload_optimizer as chosen for a plan.
struct OptimizerOffload {
  OffloadDevice device = OffloadDevice::kNone;
  // Fraction of parameters whose optimizer runs on the CPU (DeepSpeed's
  // Twin-Flow partial offload); < 1 only with stage 3 and device cpu.
  double ratio = 1.0;
  // The share of optimizer-state elements the plan offloads; ratio is what
  // DeepSpeed is told so that its whole sub-groups come as close as they
  // can without putting more on the GPU (planner/deepspeed_rules.h).
  double planned_ratio = 1.0;
  int buffer_count = 4;         // pinned NVMe swap buffers, each one tensor of a sub-group
  bool pipeline_read = false;   // read the next sub-group while this one steps (NVMe)
  bool pipeline_write = false;  // write the last sub-group back while this one steps (NVMe)
};

// zero_optimization.offload_param (stage 3 only) as chosen for a plan.
struct ParamOffload {
  OffloadDevice device = OffloadDevice::kNone;
  int buffer_count = 5;     // NVMe only: pinned swap buffers
  int64_t buffer_size = 0;  // NVMe only: elements per swap buffer, e.g. 202'899'456
  int64_t max_in_cpu = 0;   // NVMe only: 16-bit parameter elements per rank kept in CPU memory
};

// The top-level "aio" section (libaio engine), written when anything is on NVMe.
struct AioSettings {
  int64_t block_size = 1'048'576;  // bytes per I/O request
  int queue_depth = 8;             // requests in flight per handle
  int intra_op_parallelism = 1;    // threads per read/write (was "thread_count" before 0.16.4)
};

// The decisions both exporters share: what DeepSpeed is told to do for a plan.
struct DeepSpeedSettings {
  int stage = 0;                      // ZeRO stage, 0..3
  int64_t micro_batch = 1;            // train_micro_batch_size_per_gpu
  int64_t gradient_accumulation = 1;  // gradient_accumulation_steps
  int64_t train_batch = 1;            // micro x accumulation x data-parallel ranks
  int gpu_count = 1;                  // data-parallel ranks (one process per GPU)
  bool pin_memory = true;             // both offload sections
  OptimizerOffload optimizer;
  ParamOffload param;
  // Elements of one rank's optimizer sub-group; DeepSpeed's default 1e9.
  int64_t sub_group_size = 1'000'000'000;
  std::optional<int64_t> prefetch_bucket_size;  // stage 3: 16-bit elements fetched ahead
  // 16-bit gradient elements per reduce bucket on the GPU; DeepSpeed's
  // default 5e8 (2 GB in two buckets with stages 1 and 2).
  int64_t reduce_bucket_size = 500'000'000;
  std::optional<AioSettings> aio;               // present when anything is on NVMe
  int initial_scale_power = 16;                 // fp16: log2 of training.loss_scaling.initial_scale
  std::vector<std::string> not_expressible;     // as in ExportResult
  std::vector<std::string> instructions;        // as in ExportResult
};

// Chooses the DeepSpeed settings for `plan`. `workload` is the plan's model
// at `training`'s sequence length; `machine` and `training` are the
// profiles the plan names. Bad input (a policy whose partition count does
// not match partitions_of(workload, sub_group_params), NVMe on a machine
// without drives) is a diagnostic. Pure: no I/O, no printing.
[[nodiscard]] core::Result<DeepSpeedSettings> deepspeed_settings(const core::PlanFile& plan,
                                                                 const core::MachineSpec& machine,
                                                                 const core::Workload& workload,
                                                                 const core::TrainingSpec& training);

// The DeepSpeed config JSON for `plan` (nlohmann::json, 2-space indent), with
// what it cannot express. Same inputs and errors as deepspeed_settings.
[[nodiscard]] core::Result<ExportResult> export_deepspeed(const core::PlanFile& plan,
                                                          const core::MachineSpec& machine,
                                                          const core::Workload& workload,
                                                          const core::TrainingSpec& training,
                                                          const ExportOptions& options);

[[nodiscard]] std::string_view to_string(OffloadDevice device);  // "none", "cpu", "nvme"

}  // namespace stowage::planner
