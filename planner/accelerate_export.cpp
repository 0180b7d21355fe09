#include "planner/accelerate_export.h"

#include <yaml-cpp/yaml.h>

namespace stowage::planner {
namespace {

using Notes = std::vector<std::string>;

// DeepSpeed 0.19.6 defaults the plugin's generated config leaves in place.
constexpr int64_t kDefaultSubGroupSize = 1'000'000'000;
constexpr int64_t kDefaultPrefetchBucket = 50'000'000;
constexpr int kDefaultInitialScalePower = 16;
constexpr int64_t kDefaultLossScaleWindow = 1000;

std::string without_file(const std::string& what) {
  return "Without deepspeed_config_file (the JSON from export_deepspeed), the Accelerate plugin cannot "
         "carry " +
         what + ".";
}

void note_offload_tuning(const DeepSpeedSettings& s, Notes& notes) {
  const bool offloaded = s.optimizer.device != OffloadDevice::kNone || s.param.device != OffloadDevice::kNone;
  if (offloaded) {
    notes.push_back(without_file(std::string("pin_memory: ") + (s.pin_memory ? "true" : "false") +
                                 " (DeepSpeed's default is true from 0.19.5 and false before)"));
  }
  if (s.optimizer.ratio < 1.0) notes.push_back(without_file("the partial offload ratio"));
  if (s.optimizer.device == OffloadDevice::kNvme) {
    notes.push_back(without_file("the optimizer swap buffer_count " +
                                 std::to_string(s.optimizer.buffer_count) +
                                 " and pipeline_read/pipeline_write"));
  }
  if (s.param.device == OffloadDevice::kNvme) {
    notes.push_back(without_file("the parameter swap buffer_count, buffer_size and max_in_cpu"));
  }
  if (s.aio) notes.push_back(without_file("the aio section (queue_depth, intra_op_parallelism)"));
}

void note_zero_tuning(const DeepSpeedSettings& s, Notes& notes) {
  if (s.sub_group_size != kDefaultSubGroupSize) {
    notes.push_back(without_file("sub_group_size " + std::to_string(s.sub_group_size)));
  }
  if (s.prefetch_bucket_size && *s.prefetch_bucket_size != kDefaultPrefetchBucket) {
    notes.push_back(without_file("stage3_prefetch_bucket_size " + std::to_string(*s.prefetch_bucket_size)));
  }
}

// What the plugin leaves to the script or to DeepSpeed's defaults: the
// micro-batch ("auto", from the DataLoader), the optimizer, fp16 scaling.
void note_training(const DeepSpeedSettings& s, const core::TrainingSpec& training, Notes& notes) {
  notes.push_back(
      "The Accelerate plugin sets train_micro_batch_size_per_gpu to auto, so the training script's "
      "DataLoader must use batches of " +
      std::to_string(s.micro_batch) + " per GPU.");
  notes.push_back(
      without_file("the optimizer (type and Adam hyperparameters); the training script's optimizer is "
                   "used instead"));
  const core::LossScaling& ls = training.loss_scaling;
  const bool default_scaling = s.initial_scale_power == kDefaultInitialScalePower &&
                               ls.window == kDefaultLossScaleWindow && ls.min_scale == 1;
  if (training.precision == core::Precision::kFp16 && !default_scaling) {
    notes.push_back(without_file("the fp16 loss-scaling settings, so DeepSpeed's defaults apply"));
  }
}

void emit_deepspeed_config(YAML::Emitter& out, const DeepSpeedSettings& s, const ExportOptions& options) {
  out << YAML::Key << "deepspeed_config" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "gradient_accumulation_steps" << YAML::Value << s.gradient_accumulation;
  out << YAML::Key << "offload_optimizer_device" << YAML::Value << std::string(to_string(s.optimizer.device));
  if (s.optimizer.device == OffloadDevice::kNvme) {
    out << YAML::Key << "offload_optimizer_nvme_path" << YAML::Value << options.nvme_path;
  }
  out << YAML::Key << "offload_param_device" << YAML::Value << std::string(to_string(s.param.device));
  if (s.param.device == OffloadDevice::kNvme) {
    out << YAML::Key << "offload_param_nvme_path" << YAML::Value << options.nvme_path;
  }
  // deepspeed.zero.Init builds the model already partitioned (stage 3 only).
  out << YAML::Key << "zero3_init_flag" << YAML::Value << (s.stage == 3);
  out << YAML::Key << "zero_stage" << YAML::Value << s.stage;
  out << YAML::EndMap;
}

// Keys in the order `accelerate config` writes them (alphabetical).
std::string emit_config(const core::PlanFile& plan, const DeepSpeedSettings& s,
                        const core::TrainingSpec& training, const ExportOptions& options) {
  YAML::Emitter out;
  out << YAML::Comment("Accelerate config for Stowage plan " + plan.model + " on " + plan.machine +
                       ", training " + plan.training);
  out << YAML::BeginMap;
  out << YAML::Key << "compute_environment" << YAML::Value << "LOCAL_MACHINE";
  emit_deepspeed_config(out, s, options);
  out << YAML::Key << "distributed_type" << YAML::Value << "DEEPSPEED";
  out << YAML::Key << "machine_rank" << YAML::Value << 0;
  out << YAML::Key << "main_training_function" << YAML::Value << "main";
  out << YAML::Key << "mixed_precision" << YAML::Value
      << (training.precision == core::Precision::kBf16 ? "bf16" : "fp16");
  out << YAML::Key << "num_machines" << YAML::Value << 1;
  out << YAML::Key << "num_processes" << YAML::Value << s.gpu_count;
  out << YAML::Key << "rdzv_backend" << YAML::Value << "static";
  out << YAML::Key << "same_network" << YAML::Value << true;
  out << YAML::Key << "use_cpu" << YAML::Value << false;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

core::Result<ExportResult> export_accelerate(const core::PlanFile& plan, const core::MachineSpec& machine,
                                             const core::Workload& workload,
                                             const core::TrainingSpec& training,
                                             const ExportOptions& options) {
  core::Result<DeepSpeedSettings> settings = deepspeed_settings(plan, machine, workload, training);
  if (!settings) return std::unexpected(std::move(settings.error()));
  const DeepSpeedSettings& s = *settings;
  ExportResult result{.text = emit_config(plan, s, training, options), .not_expressible = s.not_expressible};
  note_offload_tuning(s, result.not_expressible);
  note_zero_tuning(s, result.not_expressible);
  note_training(s, training, result.not_expressible);
  return result;
}

}  // namespace stowage::planner
