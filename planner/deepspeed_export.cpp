#include "planner/deepspeed_export.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/policy.h"
#include "planner/deepspeed_rules.h"

namespace stowage::planner {
namespace {

using core::OptimizerDevice;
using core::Partition;
using core::PartitionPolicy;
using core::Policy;
using core::Tier;
using Notes = std::vector<std::string>;

// DeepSpeed 0.19.6 defaults (zero/config.py, zero/offload_config.py).
constexpr int64_t kDefaultSubGroupSize = 1'000'000'000;
constexpr int kDefaultParamBuffers = 5;
// Swap buffers one optimizer sub-group takes on NVMe: fp32 master, adam_m,
// adam_v and the fp32 gradient (offload_config.py, buffer_count; the
// pipelined swapper allocates len(state tensors) + 1 for the gradient).
constexpr int kSwapBuffersPerSubGroup = 4;
constexpr int64_t kAioBlockBytes = 1'048'576;

size_t index_of(Tier t) {
  return static_cast<size_t>(t);
}
int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
int64_t round_up(int64_t n, int64_t multiple) {
  return ceil_div(n, multiple) * multiple;
}

// How many parameters and partitions of a plan rest on each tier for one role.
struct TierTally {
  std::array<int64_t, 3> params{};
  std::array<int, 3> partitions{};
  [[nodiscard]] int64_t at(Tier t) const { return params[index_of(t)]; }
  [[nodiscard]] int count(Tier t) const { return partitions[index_of(t)]; }
  [[nodiscard]] int64_t off_gpu() const { return at(Tier::kCpu) + at(Tier::kNvme); }
  [[nodiscard]] int64_t total() const { return at(Tier::kGpu) + off_gpu(); }
};

TierTally tally(const Policy& policy, const std::vector<Partition>& parts, Tier PartitionPolicy::*role) {
  TierTally t;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tier tier = policy.partitions[i].*role;
    t.params[index_of(tier)] += parts[i].params;
    t.partitions[index_of(tier)] += 1;
  }
  return t;
}

// Of two offload tiers, the one holding more bytes; a tie goes to NVMe,
// which never asks host RAM to hold more than the plan budgeted.
OffloadDevice heavier(const TierTally& t) {
  return t.at(Tier::kNvme) >= t.at(Tier::kCpu) ? OffloadDevice::kNvme : OffloadDevice::kCpu;
}

// The shortest text that reads back as `x` ("65537", "0.1").
std::string number(double x) {
  std::array<char, 32> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), x);
  return ec == std::errc() ? std::string(buf.data(), end) : std::string("?");
}

std::string of_partitions(int n, size_t total) {
  return std::to_string(n) + " of " + std::to_string(total) + " partitions";
}

core::Result<std::vector<Partition>> check_plan(const core::PlanFile& plan, const core::MachineSpec& machine,
                                                const core::Workload& workload) {
  const Policy& policy = plan.policy;
  std::vector<Partition> parts = core::partitions_of(workload, policy.sub_group_params);
  core::Diagnostics problems;
  if (parts.size() != policy.partitions.size()) {
    problems.push_back({{},
                        "policy.partitions: the plan has " + std::to_string(policy.partitions.size()) +
                            " partitions but " +
                            workload.model().name + " splits into " + std::to_string(parts.size()),
                        "a plan made for this model and sub_group_params"});
  }
  const auto uses_nvme = std::ranges::find_if(policy.partitions, [](const PartitionPolicy& p) {
    return p.param16 == Tier::kNvme || p.optimizer_states == Tier::kNvme || p.gradients == Tier::kNvme;
  });
  if (uses_nvme != policy.partitions.end() && machine.nvme_count == 0) {
    problems.push_back({{},
                        "policy.partitions[" + std::to_string(uses_nvme - policy.partitions.begin()) +
                            "]: the plan puts data on NVMe but " + machine.name + " has no NVMe drives",
                        "a machine with nvme_count > 0"});
  }
  // DeepSpeedCPUAdam keeps its moments in the dtype of the weights it
  // steps (fp32_optimizer_states=False, deepspeed/ops/adam/cpu_adam.py), and
  // ZeRO steps the fp32 master unless bf16.bf16_master_weights_and_grads
  // makes the master bf16 too (with bf16.bf16_optimizer_states): bf16
  // moments beside an fp32 master, what this plan keeps, it cannot express.
  if (policy.optimizer_state_precision == core::StatePrecision::kBf16) {
    problems.push_back({{},
                        "policy.optimizer_state_precision: bf16 moments beside fp32 master weights cannot be "
                        "expressed in DeepSpeed, whose bf16 optimizer states (bf16.bf16_optimizer_states) "
                        "require bf16 master weights (bf16.bf16_master_weights_and_grads)",
                        "fp32 (plan again without --allow-bf16-states)"});
  }
  core::locate_in_plan(problems, plan.places);
  if (!problems.empty()) return std::unexpected(std::move(problems));
  return parts;
}

// Stowage lets each partition choose where its optimizer runs; DeepSpeed
// steps GPU-resident states on the GPU and offloaded ones on the CPU
// (DeepSpeedCPUAdam), and moves gradients to CPU memory exactly when the
// optimizer is offloaded (stage_1_and_2.py, stage3.py).
void note_optimizer_devices(const Policy& policy, Notes& notes) {
  int cpu_step_on_gpu_states = 0, gpu_step_on_offloaded = 0, gradients_elsewhere = 0;
  for (const PartitionPolicy& p : policy.partitions) {
    const bool offloaded = p.optimizer_states != Tier::kGpu;
    if (!offloaded && p.optimizer == OptimizerDevice::kCpu) ++cpu_step_on_gpu_states;
    if (offloaded && p.optimizer == OptimizerDevice::kGpu) ++gpu_step_on_offloaded;
    const bool gradients_match =
        offloaded
            ? (p.gradients == Tier::kCpu || (p.gradients == Tier::kNvme && p.optimizer_states == Tier::kNvme))
            : p.gradients == Tier::kGpu;
    if (!gradients_match) ++gradients_elsewhere;
  }
  const size_t n = policy.partitions.size();
  if (cpu_step_on_gpu_states > 0) {
    notes.push_back(
        of_partitions(cpu_step_on_gpu_states, n) +
        " keep optimizer states on the GPU but step them on the CPU; DeepSpeed steps GPU-resident "
        "states on the GPU.");
  }
  if (gpu_step_on_offloaded > 0) {
    notes.push_back(
        of_partitions(gpu_step_on_offloaded, n) +
        " step offloaded optimizer states on the GPU; DeepSpeed always steps offloaded states on the "
        "CPU.");
  }
  if (gradients_elsewhere > 0) {
    notes.push_back(
        of_partitions(gradients_elsewhere, n) +
        " send gradients to another tier than DeepSpeed does (the GPU without optimizer offload, CPU "
        "memory with it).");
  }
}

// ZeRO-Offload needs ZeRO stage 1 or more; with one GPU stage 1 partitions
// nothing, so raising 0 to 1 changes nothing but the key.
int choose_stage(const Policy& policy, const TierTally& states, int gpu_count, Notes& notes) {
  const int stage = static_cast<int>(policy.stage);
  if (stage > 0 || states.off_gpu() == 0) return stage;
  if (gpu_count > 1) {
    notes.push_back(
        "DeepSpeed offloads optimizer states only with ZeRO stage 1 or more; the plan's stage 0 "
        "becomes stage 1, which also partitions the states across the " +
        std::to_string(gpu_count) + " GPUs.");
  }
  return 1;
}

// Twin-Flow partial offload (stage3.py): of n sub-groups, the first
// int((1 - ratio) * n) in parameter order stay on the GPU with a GPU AdamW,
// the rest step in DeepSpeedCPUAdam.
void choose_partial_ratio(const Policy& policy, const TierTally& states, int stage,
                          const core::TrainingSpec& training, OptimizerOffload& out, Notes& notes) {
  const std::string on_gpu = of_partitions(states.count(Tier::kGpu), policy.partitions.size()) +
                             " keep optimizer states on the GPU and the rest offload them";
  if (stage < 3) {
    notes.push_back(on_gpu + "; DeepSpeed's partial offload (ratio < 1) needs ZeRO stage 3, so with stage " +
                    std::to_string(stage) + " every partition's optimizer runs on the CPU.");
    return;
  }
  if (out.device == OffloadDevice::kNvme) {
    notes.push_back(on_gpu +
                    "; DeepSpeed's partial offload (ratio < 1) is built for CPU offload and its NVMe "
                    "swapper would swap the GPU share too, so every partition's states go to NVMe.");
    return;
  }
  out.planned_ratio = static_cast<double>(states.off_gpu()) / static_cast<double>(states.total());
  out.ratio = out.planned_ratio;  // realised in whole sub-groups by realise_ratio
  const auto first_offloaded = std::ranges::find_if(
      policy.partitions, [](const PartitionPolicy& p) { return p.optimizer_states != Tier::kGpu; });
  const bool gpu_prefix = std::all_of(first_offloaded, policy.partitions.end(), [](const PartitionPolicy& p) {
    return p.optimizer_states != Tier::kGpu;
  });
  if (!gpu_prefix) {
    notes.push_back(on_gpu +
                    ", but not as a leading run; DeepSpeed keeps the first sub-groups in parameter order "
                    "on the GPU, so the ratio holds but not which partitions stay.");
  }
  if (training.optimizer == core::OptimizerKind::kAdam && training.adam.weight_decay != 0) {
    notes.push_back(
        "DeepSpeed steps the GPU share of a partial offload with torch AdamW, so Adam's L2 weight decay "
        "becomes decoupled weight decay there.");
  }
}

// DeepSpeed's pipelined optimizer swapper reads at most one sub-group ahead
// and writes one behind, each holding a sub-group's worth of swap buffers.
void choose_nvme_pipelining(const Policy& policy, OptimizerOffload& out, Notes& notes) {
  out.pipeline_read = policy.nvme_prefetch_depth >= 1;
  out.pipeline_write = true;
  out.buffer_count =
      kSwapBuffersPerSubGroup * (1 + (out.pipeline_read ? 1 : 0) + (out.pipeline_write ? 1 : 0));
  if (policy.nvme_prefetch_depth > 1) {
    notes.push_back(
        "DeepSpeed reads optimizer states at most one sub-group ahead (pipeline_read); the plan's "
        "nvme_prefetch_depth " +
        std::to_string(policy.nvme_prefetch_depth) + " is cut to 1.");
  }
}

OptimizerOffload choose_optimizer_offload(const Policy& policy, const TierTally& states, int stage,
                                          const core::TrainingSpec& training, Notes& notes) {
  OptimizerOffload out;
  if (states.off_gpu() == 0) return out;
  out.device = heavier(states);
  const size_t n = policy.partitions.size();
  if (states.at(Tier::kCpu) > 0 && states.at(Tier::kNvme) > 0) {
    notes.push_back(of_partitions(states.count(Tier::kCpu), n) + " keep optimizer states in CPU memory and " +
                    std::to_string(states.count(Tier::kNvme)) +
                    " on NVMe; DeepSpeed puts all offloaded states on one device, here " +
                    std::string(to_string(out.device)) + ", which holds the most optimizer-state bytes.");
  }
  if (out.device == OffloadDevice::kNvme && stage < 3) {
    notes.push_back("DeepSpeed offloads optimizer states to NVMe only with ZeRO stage 3; with stage " +
                    std::to_string(stage) + " they go to CPU memory instead.");
    out.device = OffloadDevice::kCpu;
  }
  if (states.at(Tier::kGpu) > 0) choose_partial_ratio(policy, states, stage, training, out, notes);
  if (out.device == OffloadDevice::kNvme) choose_nvme_pipelining(policy, out, notes);
  return out;
}

// Parameter offload exists only in stage 3; DeepSpeed offloads every
// partitioned parameter, so per-partition choices collapse to one device.
ParamOffload choose_param_offload(const Policy& policy, const std::vector<Partition>& parts,
                                  const core::Workload& workload, int stage, int gpu_count, Notes& notes) {
  const TierTally weights = tally(policy, parts, &PartitionPolicy::param16);
  ParamOffload out;
  if (weights.off_gpu() == 0) return out;
  const size_t n = parts.size();
  const std::string off = of_partitions(weights.count(Tier::kCpu) + weights.count(Tier::kNvme), n);
  if (stage < 3) {
    notes.push_back(off +
                    " keep 16-bit weights off the GPU; DeepSpeed offloads parameters only with ZeRO stage 3, "
                    "so with stage " +
                    std::to_string(stage) + " they stay on the GPU.");
    return out;
  }
  out.device = heavier(weights);
  const std::string device(to_string(out.device));
  if (weights.at(Tier::kGpu) > 0) {
    notes.push_back(off +
                    " offload 16-bit weights and the rest keep them on the GPU; DeepSpeed offloads every "
                    "partitioned parameter, so all go to " +
                    device + ".");
  }
  if (out.device == OffloadDevice::kCpu) {
    if (weights.at(Tier::kNvme) > 0) {
      notes.push_back(of_partitions(weights.count(Tier::kNvme), n) +
                      " keep 16-bit weights on NVMe; DeepSpeed puts "
                      "them in CPU memory with the rest, the tier holding the most weight bytes.");
    }
    return out;
  }
  out.buffer_count = std::max({kDefaultParamBuffers, policy.staging_buffers,
                               deepspeed::least_param_buffer_count(workload)});
  // The swapper moves one parameter per buffer, so a buffer must hold the
  // largest parameter's partition, aligned to whole aio blocks of 16-bit
  // elements (deepspeed_rules.h, least_param_buffer_size).
  out.buffer_size = round_up(deepspeed::least_param_buffer_size(workload, gpu_count, 1), kAioBlockBytes / 2);
  out.max_in_cpu = ceil_div(weights.at(Tier::kCpu), gpu_count);
  if (weights.at(Tier::kCpu) > 0) {
    notes.push_back(of_partitions(weights.count(Tier::kCpu), n) + " keep 16-bit weights in CPU memory and " +
                    std::to_string(weights.count(Tier::kNvme)) + " on NVMe; DeepSpeed keeps max_in_cpu = " +
                    std::to_string(out.max_in_cpu) + " elements per rank in CPU memory but chooses which.");
  }
  return out;
}

// DeepSpeed's sub_group_size counts one rank's elements (partition_numel in
// stage3.py), Stowage's sub_group_params whole-layer elements. A partial
// offload splits by sub-group count, so whole-layer plans get about one
// sub-group per layer instead of DeepSpeed's 1e9, which would make one.
// Per-rank elements of the optimizer states the plan keeps on the GPU, in
// DeepSpeed's padded per-rank partitions (deepspeed_rules.h, partition_numels).
int64_t gpu_state_elements(const Policy& policy, const std::vector<Partition>& parts, const core::Workload& w,
                           int ranks) {
  int64_t n = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (policy.partitions[i].optimizer_states != Tier::kGpu) continue;
    const core::Layer& layer = w.layers()[static_cast<size_t>(parts[i].layer)];
    if (parts[i].first_param != 0 || parts[i].params != layer.param_count()) {
      n += ceil_div(parts[i].params, ranks);
      continue;
    }
    for (const core::ParamTensor& t : layer.params) n += ceil_div(t.elements(), ranks);
  }
  return n;
}

// DeepSpeed closes a sub-group once it holds sub_group_size elements
// (deepspeed_rules.h, sub_group_numels). For a partial offload, a size of
// exactly the plan's GPU share makes the first sub-group that share, so
// DeepSpeed's whole-sub-group ratio realises the plan exactly.
int64_t choose_sub_group_size(const Policy& policy, const core::Workload& workload,
                              const OptimizerOffload& opt, int64_t gpu_elements, int gpu_count, Notes& notes) {
  if (policy.sub_group_params > 0) {
    if (policy.sub_group_params < workload.largest_module_params()) {
      notes.push_back(
          "DeepSpeed never splits a tensor across optimizer sub-groups, so its sub-groups hold whole "
          "tensors rather than the plan's slices of " +
          std::to_string(policy.sub_group_params) + " parameters.");
    }
    return ceil_div(policy.sub_group_params, gpu_count);
  }
  // NVMe: DeepSpeed pins buffer_count swap buffers of the largest
  // sub-group (deepspeed_rules.h, host_pools), so 1e9-element sub-groups
  // would pin 4 GB each; layer-sized ones keep the pool near what the plan
  // budgeted for its NVMe reads.
  if (opt.planned_ratio < 1.0 && gpu_elements > 0) return gpu_elements;
  if (opt.device == OffloadDevice::kNvme) return ceil_div(workload.largest_layer_params(), gpu_count);
  return kDefaultSubGroupSize;
}

// DeepSpeed offloads whole sub-groups (deepspeed_rules.h, partial_offload):
// keep on the GPU the most leading sub-groups that fit in the plan's GPU
// share, never more, and say so when that moves the share.
void realise_ratio(const core::Workload& workload, int64_t planned_gpu_elements, DeepSpeedSettings& s,
                   Notes& notes) {
  const std::vector<int64_t> groups = deepspeed::sub_group_numels(workload, s.gpu_count, s.sub_group_size);
  const double planned_gpu = static_cast<double>(planned_gpu_elements);
  int keep = 0;
  int64_t kept = 0;
  while (keep < static_cast<int>(groups.size()) &&
         static_cast<double>(kept + groups[static_cast<size_t>(keep)]) <= planned_gpu * (1 + 1e-9)) {
    kept += groups[static_cast<size_t>(keep++)];
  }
  s.optimizer.ratio = deepspeed::ratio_keeping(keep, static_cast<int>(groups.size()));
  const double realised = deepspeed::partial_offload(groups, s.optimizer.ratio).realised_ratio();
  if (std::abs(realised - s.optimizer.planned_ratio) > 5e-4) {
    notes.push_back("The plan keeps " + number(std::round(1000 * (1 - s.optimizer.planned_ratio)) / 10) +
                    "% of optimizer states on the GPU; DeepSpeed keeps whole sub-groups there, " +
                    std::to_string(keep) + " of " + std::to_string(groups.size()) + ", which is " +
                    number(std::round(1000 * (1 - realised)) / 10) + "%.");
  }
}

// Queue depth: each partition read ahead brings its four swap tensors, so
// nvme_prefetch_depth x 4 requests keep the reads of the plan in flight;
// never below DeepSpeed's default 8, which its aio tuning starts from.
AioSettings choose_aio(const Policy& policy, const core::MachineSpec& machine, Notes& instructions) {
  AioSettings aio;
  aio.block_size = policy.nvme_block_size.count();
  aio.queue_depth = policy.nvme_queue_depth;
  aio.intra_op_parallelism = 1;
  if (machine.nvme_count > 1) {
 instructions.push_back("DeepSpeed takes one nvme_path, so the machine's " + std::to_string(machine.nvme_count) +
                    " NVMe drives must be striped (RAID 0) under it to give the bandwidth the plan assumes.");
  }
  return aio;
}

// Choices of the plan that live in the training script or nowhere in DeepSpeed.
void note_training_choices(const Policy& policy, Notes& notes, Notes& instructions) {
  if (policy.delayed_update) {
    notes.push_back(
        "DeepSpeed has no key for the one-step delayed parameter update (ZeRO-Offload DPU); it steps "
        "the optimizer before the next forward. ZenFlow's overlap_step also overlaps the CPU step but "
        "changes which gradients are applied, so it is not used.");
  }
  if (policy.activation_checkpointing) {
    // DeepSpeed's "activation_checkpointing" section only configures
    // deepspeed.checkpointing.checkpoint() calls the model makes itself.
    instructions.push_back(
        "The plan checkpoints activations, which the training script switches on (for a Hugging Face "
        "model, model.gradient_checkpointing_enable()); no DeepSpeed key does it.");
  }
}

int choose_initial_scale_power(const core::TrainingSpec& training, Notes& notes) {
  const double scale = training.loss_scaling.initial_scale;
  const int power = scale >= 1 ? static_cast<int>(std::lround(std::log2(scale))) : 0;
  if (training.precision == core::Precision::kFp16 && std::ldexp(1.0, power) != scale) {
    notes.push_back("DeepSpeed's initial loss scale is a power of two; " + number(scale) + " becomes 2^" +
                    std::to_string(power) + ".");
  }
  return power;
}

nlohmann::ordered_json precision_json(const DeepSpeedSettings& s, const core::TrainingSpec& training) {
  if (training.precision == core::Precision::kBf16) return {{"enabled", true}};
  return {{"enabled", true},
          {"loss_scale", 0},  // 0 = dynamic loss scaling
          {"initial_scale_power", s.initial_scale_power},
          {"loss_scale_window", training.loss_scaling.window},
          {"min_loss_scale", training.loss_scaling.min_scale}};
}

nlohmann::ordered_json optimizer_json(const core::TrainingSpec& training) {
  const core::AdamConfig& a = training.adam;
  nlohmann::ordered_json params = {{"lr", a.learning_rate},
                                   {"betas", {a.beta1, a.beta2}},
                                   {"eps", a.eps},
                                   {"weight_decay", a.weight_decay}};
  // DeepSpeed's "Adam" applies decoupled decay unless adam_w_mode is false
  // (engine.py, _configure_basic_optimizer; ADAM_W_MODE_DEFAULT is true).
  const bool adamw = training.optimizer == core::OptimizerKind::kAdamW;
  if (!adamw) params["adam_w_mode"] = false;
  return {{"type", adamw ? "AdamW" : "Adam"}, {"params", params}};
}

nlohmann::ordered_json offload_optimizer_json(const DeepSpeedSettings& s, const std::string& nvme_path) {
  const OptimizerOffload& o = s.optimizer;
  nlohmann::ordered_json j = {{"device", to_string(o.device)}};
  if (o.device == OffloadDevice::kNvme) j["nvme_path"] = nvme_path;
  j["pin_memory"] = s.pin_memory;
  j["buffer_count"] = o.buffer_count;
  j["fast_init"] = false;
  if (o.device == OffloadDevice::kNvme) {
    j["pipeline_read"] = o.pipeline_read;
    j["pipeline_write"] = o.pipeline_write;
  }
  if (o.ratio < 1.0) j["ratio"] = o.ratio;
  return j;
}

nlohmann::ordered_json offload_param_json(const DeepSpeedSettings& s, const std::string& nvme_path) {
  const ParamOffload& p = s.param;
  nlohmann::ordered_json j = {{"device", to_string(p.device)}};
  if (p.device == OffloadDevice::kNvme) j["nvme_path"] = nvme_path;
  j["pin_memory"] = s.pin_memory;
  if (p.device == OffloadDevice::kNvme) {
    j["buffer_count"] = p.buffer_count;
    j["buffer_size"] = p.buffer_size;
    j["max_in_cpu"] = p.max_in_cpu;
  }
  return j;
}

nlohmann::ordered_json zero_json(const DeepSpeedSettings& s, const std::string& nvme_path) {
  nlohmann::ordered_json z = {{"stage", s.stage},
                              {"overlap_comm", true},
                              {"contiguous_gradients", true},
                              {"sub_group_size", s.sub_group_size},
                              {"reduce_bucket_size", s.reduce_bucket_size}};
  if (s.prefetch_bucket_size) z["stage3_prefetch_bucket_size"] = *s.prefetch_bucket_size;
  // The workaround for "Not enough buffers 0 for swapping 1" (deepspeed_rules.h).
  if (const int64_t reuse = deepspeed::max_reuse_distance(s); reuse != deepspeed::kDefaultMaxReuseDistance) {
    z["stage3_max_reuse_distance"] = reuse;
  }
  if (s.optimizer.device != OffloadDevice::kNone)
    z["offload_optimizer"] = offload_optimizer_json(s, nvme_path);
  if (s.param.device != OffloadDevice::kNone) z["offload_param"] = offload_param_json(s, nvme_path);
  return z;
}

}  // namespace

std::string_view to_string(OffloadDevice device) {
  switch (device) {
    case OffloadDevice::kNone:
      return "none";
    case OffloadDevice::kCpu:
      return "cpu";
    case OffloadDevice::kNvme:
      return "nvme";
  }
  return "";
}

core::Result<DeepSpeedSettings> deepspeed_settings(const core::PlanFile& plan,
                                                   const core::MachineSpec& machine,
                                                   const core::Workload& workload,
                                                   const core::TrainingSpec& training) {
  core::Result<std::vector<Partition>> parts = check_plan(plan, machine, workload);
  if (!parts) return std::unexpected(std::move(parts.error()));
  const Policy& policy = plan.policy;
  const core::TrainingSpec shape = core::effective_training(training, policy);  // the plan's batch shape
  const int gpus = std::max(1, machine.gpu_count);
  DeepSpeedSettings s;
  Notes& notes = s.not_expressible;
  const TierTally states = tally(policy, *parts, &PartitionPolicy::optimizer_states);
  s.stage = choose_stage(policy, states, gpus, notes);
  s.micro_batch = shape.micro_batch;
  s.gradient_accumulation = shape.gradient_accumulation;
  s.gpu_count = gpus;
  s.train_batch = shape.micro_batch * shape.gradient_accumulation * gpus;
  s.pin_memory = policy.pinned_memory;
  s.optimizer = choose_optimizer_offload(policy, states, s.stage, training, notes);
  note_optimizer_devices(policy, notes);
  s.param = choose_param_offload(policy, *parts, workload, s.stage, gpus, notes);
  const int64_t gpu_elements = gpu_state_elements(policy, *parts, workload, gpus);
  s.sub_group_size = choose_sub_group_size(policy, workload, s.optimizer, gpu_elements, gpus, notes);
  if (s.optimizer.planned_ratio < 1.0) realise_ratio(workload, gpu_elements, s, notes);
  if (s.stage == 3) s.prefetch_bucket_size = policy.h2d_prefetch_depth * workload.largest_layer_params();
  // A layer's gradients per bucket, as Stowage's schedule drains them,
  // instead of DeepSpeed's 5e8 elements (deepspeed_rules.h, runtime_pools).
  s.reduce_bucket_size = std::min(s.reduce_bucket_size, workload.largest_layer_params());
  if (s.optimizer.device == OffloadDevice::kNvme || s.param.device == OffloadDevice::kNvme) {
    s.aio = choose_aio(policy, machine, s.instructions);
  }
  note_training_choices(policy, notes, s.instructions);
  s.initial_scale_power = choose_initial_scale_power(training, notes);
  return s;
}

core::Result<ExportResult> export_deepspeed(const core::PlanFile& plan, const core::MachineSpec& machine,
                                            const core::Workload& workload,
                                            const core::TrainingSpec& training,
                                            const ExportOptions& options) {
  core::Result<DeepSpeedSettings> settings = deepspeed_settings(plan, machine, workload, training);
  if (!settings) return std::unexpected(std::move(settings.error()));
  const DeepSpeedSettings& s = *settings;
  nlohmann::ordered_json j;
  j["train_micro_batch_size_per_gpu"] = s.micro_batch;
  j["gradient_accumulation_steps"] = s.gradient_accumulation;
  j["train_batch_size"] = s.train_batch;
  j[training.precision == core::Precision::kBf16 ? "bf16" : "fp16"] = precision_json(s, training);
  j["optimizer"] = optimizer_json(training);
  j["zero_optimization"] = zero_json(s, options.nvme_path);
  if (s.aio) {
    j["aio"] = {{"block_size", s.aio->block_size},
                {"queue_depth", s.aio->queue_depth},
                {"intra_op_parallelism", s.aio->intra_op_parallelism},
                {"single_submit", false},
                {"overlap_events", true}};
  }
  return ExportResult{.text = j.dump(2) + "\n", .not_expressible = s.not_expressible, .instructions = s.instructions};
}

}  // namespace stowage::planner
