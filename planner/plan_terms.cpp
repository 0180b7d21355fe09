#include "planner/plan_terms.h"

#include <algorithm>
#include <set>

namespace stowage::planner {
namespace {

using core::OptimizerDevice;
using core::Tier;

std::string where(Tier t) {
  switch (t) {
    case Tier::kGpu: return "GPU memory";
    case Tier::kCpu: return "pinned CPU RAM";
    case Tier::kNvme: return "NVMe";
  }
  return "";
}

std::string placement_words(const core::PartitionPolicy& p) {
  std::string s = "parameters rest in " + where(p.param16);
  if (p.param16 == Tier::kNvme) s += " (read into CPU RAM, then uploaded for each use)";
  if (p.param16 == Tier::kCpu) s += " (uploaded to the GPU for each use)";
  s += "; optimizer states in " + where(p.optimizer_states) + ", Adam on the " +
       (p.optimizer == OptimizerDevice::kGpu ? "GPU" : "CPU") + "; gradients go to " + where(p.gradients);
  return s;
}

}  // namespace

std::vector<LayerRun> runs_by_layer(const core::Policy& policy, const core::Workload& workload) {
  const std::vector<core::Partition> parts = core::partitions_of(workload, policy.sub_group_params);
  std::vector<LayerRun> out;
  std::set<int> layers;
  for (size_t j = 0; j < parts.size() && j < policy.partitions.size(); ++j) {
    const std::string name = core::partition_name(workload, parts[j]);
    if (out.empty() || !(out.back().placement == policy.partitions[j])) {
      out.push_back({.first = name, .last = name, .partitions = 0, .layers = 0, .placement = policy.partitions[j]});
      layers.clear();
    }
    out.back().last = name;
    ++out.back().partitions;
    if (layers.insert(parts[j].layer).second) ++out.back().layers;
  }
  return out;
}

std::string run_name(const LayerRun& run) {
  if (run.partitions == 1) return run.first;
  return run.first + " .. " + run.last + " (" + std::to_string(run.layers) + (run.layers == 1 ? " layer)" : " layers)");
}

std::vector<std::string> plan_terms(const Candidate& chosen, const core::Workload& workload, int gpus) {
  const core::Policy& p = chosen.policy;
  const core::TrainingSpec& t = chosen.training;
  std::vector<std::string> out;
  out.push_back("micro-batch " + std::to_string(t.micro_batch) + " x accumulation " +
                std::to_string(t.gradient_accumulation) + ": each step runs " +
                std::to_string(t.gradient_accumulation) + " forward and backward passes of " +
                std::to_string(t.micro_batch) + (t.micro_batch == 1 ? " sequence of " : " sequences of ") +
                std::to_string(t.sequence_length) +
                " tokens, adding up their gradients, then one optimizer update");
  out.push_back(p.activation_checkpointing
                    ? "activation checkpointing on: backward keeps only each block's input and runs the block's "
                      "forward again just before its backward (about a third more compute, far less GPU memory)"
                    : "activation checkpointing off: every activation a backward needs is kept from the forward "
                      "(no recompute, more GPU memory)");
  std::string stage = "ZeRO stage " + std::to_string(static_cast<int>(p.stage));
  if (p.stage == core::ZeroStage::k0) {
    stage += ": nothing is partitioned across GPUs";
  } else if (gpus <= 1) {
    stage += " on one GPU: there is nothing to split across GPUs; parameters are fetched layer by layer where they rest";
  } else if (p.stage == core::ZeroStage::k3) {
    stage += ": parameters, gradients and optimizer states are split across the " + std::to_string(gpus) + " GPUs";
  } else {
    stage += std::string(": optimizer states") + (p.stage == core::ZeroStage::k2 ? " and gradients" : "") +
             " are split across the " + std::to_string(gpus) + " GPUs";
  }
  out.push_back(stage);
  for (const LayerRun& run : runs_by_layer(p, workload)) out.push_back(run_name(run) + ": " + placement_words(run.placement));
  const bool streams = std::any_of(p.partitions.begin(), p.partitions.end(), [](const core::PartitionPolicy& x) {
    return x.param16 != Tier::kGpu || x.optimizer_states == Tier::kNvme;
  });
  if (streams) {
    out.push_back("prefetch depth " + std::to_string(p.h2d_prefetch_depth) + " (NVMe " +
                  std::to_string(p.nvme_prefetch_depth) + "): transfers for that many partitions ahead are issued "
                  "before the compute that needs them, so they overlap it");
  }
  if (p.delayed_update) {
    out.push_back("delayed update: the CPU optimizer's update of one step lands during the next, so each step "
                  "computes with parameters one update old (ZeRO-Offload's delayed parameter update)");
  }
  if (p.speculative_update) {
    out.push_back("speculative update: CPU optimizers start before the step's overflow/clipping check and roll "
                  "back if it fails");
  }
  if (p.optimizer_state_precision == core::StatePrecision::kBf16) {
    out.push_back("bf16 optimizer states (allowed by --allow-bf16-states): Adam's moments are kept in bf16, "
                  "8 instead of 12 B of optimizer state per parameter and 20 instead of 28 B of optimizer "
                  "traffic; the master weights stay fp32. The loss follows fp32 states closely but not exactly");
  }
  return out;
}

}  // namespace stowage::planner
