#include "planner/accelerate_export.h"

#include <yaml-cpp/yaml.h>

namespace stowage::planner {
namespace {

using Notes = std::vector<std::string>;

// Why the YAML names a DeepSpeed JSON instead of carrying the plan in its
// own deepspeed_config keys: those keys carry only the stage, the offload
// devices and gradient accumulation, and Accelerate 1.15's launcher does not
// pass offload_*_nvme_path on to DeepSpeed, which then writes its swap files
// into ./none (accelerate/utils/dataclasses.py, DeepSpeedPlugin; issue 13).
// With deepspeed_config_file every key of export_deepspeed reaches DeepSpeed.
void note_script(const DeepSpeedSettings& s, const ExportOptions& options, Notes& instructions) {
  instructions.push_back(
      "The Accelerate config points at the DeepSpeed JSON " + options.deepspeed_config_file +
      " (deepspeed_config_file) so that every DeepSpeed key, the NVMe paths included, reaches DeepSpeed; "
      "Accelerate's own deepspeed_config keys would drop the NVMe path and the swap-buffer settings.");
  instructions.push_back("The JSON fixes train_micro_batch_size_per_gpu at " + std::to_string(s.micro_batch) +
                         ", so the training script's DataLoader must use batches of " +
                         std::to_string(s.micro_batch) + " per GPU.");
  instructions.push_back(
      "Each micro-step runs inside `with accelerator.accumulate(model):`; without it Accelerate marks every "
      "micro-step an accumulation boundary and DeepSpeed steps the optimizer " +
      std::to_string(s.gradient_accumulation) + " times per planned step (measured by bench/peers/deepspeed_check).");
  instructions.push_back(
      "The JSON names the optimizer, so the training script passes accelerate.utils.DummyOptim to "
      "accelerator.prepare instead of building its own.");
}

void emit_deepspeed_config(YAML::Emitter& out, const DeepSpeedSettings& s, const ExportOptions& options) {
  out << YAML::Key << "deepspeed_config" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "deepspeed_config_file" << YAML::Value << options.deepspeed_config_file;
  // deepspeed.zero.Init builds the model already partitioned (stage 3 only).
  out << YAML::Key << "zero3_init_flag" << YAML::Value << (s.stage == 3);
  out << YAML::EndMap;
}

// Keys in the order `accelerate config` writes them (alphabetical). No
// mixed_precision: with a deepspeed_config_file the JSON's fp16/bf16
// section decides, and Accelerate 1.15 refuses the key beside it
// ("When using `deepspeed_config_file`, the following accelerate config
// variables will be ignored: [..., 'mixed_precision']", a ValueError met
// by bench/peers/deepspeed_check).
std::string emit_config(const core::PlanFile& plan, const DeepSpeedSettings& s, const ExportOptions& options) {
  YAML::Emitter out;
  out << YAML::Comment("Accelerate config for Stowage plan " + plan.model + " on " + plan.machine +
                       ", training " + plan.training);
  out << YAML::BeginMap;
  out << YAML::Key << "compute_environment" << YAML::Value << "LOCAL_MACHINE";
  emit_deepspeed_config(out, s, options);
  out << YAML::Key << "distributed_type" << YAML::Value << "DEEPSPEED";
  out << YAML::Key << "machine_rank" << YAML::Value << 0;
  out << YAML::Key << "main_training_function" << YAML::Value << "main";
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
  ExportResult result{.text = emit_config(plan, s, options),
                      .not_expressible = s.not_expressible,
                      .instructions = s.instructions};
  note_script(s, options, result.instructions);
  return result;
}

}  // namespace stowage::planner
