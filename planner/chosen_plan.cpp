#include "planner/chosen_plan.h"

#include "planner/pinned_memory.h"

namespace stowage::planner {

using core::Tier;

std::vector<std::string> plan_warnings(const ProfileInputs& in, const PlanResult& r) {
  // The zero-infinity baseline writes to NVMe wherever there are drives, so
  // the assumed write rate is behind a figure shown whenever one was assumed.
  std::vector<std::string> out;
  if (in.assumed_nvme_write) out.push_back(*in.assumed_nvme_write);
  if (r.best) {
    const int scale = core::ranks_in_scope(Tier::kCpu, in.machine.gpu_count);
    const core::Bytes cpu = r.best->summary->peak_memory[static_cast<size_t>(Tier::kCpu)] * scale;
    if (auto w = pinned_memory_warning(cpu, in.machine, r.best->candidate.policy)) out.push_back(*w);
  }
  return out;
}

core::PlanFile to_plan_file(const ProfileInputs& in, const Evaluation& chosen) {
  const sim::Summary& s = *chosen.summary;
  core::PredictedFigures f{.step_time = s.step_time, .tokens_per_second = s.tokens_per_second,
                           .model_tflops_per_gpu = s.model_flops_per_second_per_gpu / 1e12,
                           .bounding_lane = std::string(core::to_string(s.bounding_lane))};
  for (Tier t : core::kAllTiers) {
    const int scale = core::ranks_in_scope(t, in.machine.gpu_count);
    f.peak_memory[static_cast<size_t>(t)] = s.peak_memory[static_cast<size_t>(t)] * scale;
  }
  // The plan may have changed the micro-batch or checkpointing: the policy
  // records checkpointing; the training shape goes with the profile name.
  return {.machine = in.machine_name, .model = in.model_name, .training = in.training_name,
          .policy = chosen.candidate.policy, .predicted = f};
}

}  // namespace stowage::planner
