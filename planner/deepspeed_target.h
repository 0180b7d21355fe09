// DeepSpeed (or Accelerate running DeepSpeed) as a target runtime: the plan
// DeepSpeed really runs for a Stowage plan, as a candidate the simulator
// scores. Its policy is what the exported configuration makes DeepSpeed do
// (one device per tensor class, whole-sub-group partial offload, no delayed
// update, one sub-group of NVMe read-ahead) and its runtime pools are the
// buffers DeepSpeed allocates for that configuration (planner/deepspeed_rules.h),
// so the predicted step time and memory are those of the run the user gets.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/machine_spec.h"
#include "planner/candidate.h"
#include "planner/deepspeed_export.h"
#include "planner/deepspeed_rules.h"
#include "planner/target.h"

namespace stowage::planner {

struct TargetPlan {
  DeepSpeedSettings settings;                  // what the exported configuration says
  std::vector<deepspeed::RuntimePool> pools;   // what DeepSpeed allocates for it, per rank
  Candidate candidate;                         // what DeepSpeed runs, with the pools as resident memory
};

// The plan DeepSpeed runs for `planned` on `machine`. `planned.training` is
// the training shape the candidate runs. Errors as deepspeed_settings.
[[nodiscard]] core::Result<TargetPlan> deepspeed_target(const Candidate& planned, const core::MachineSpec& machine,
                                                        const core::ModelSpec& model);

// `candidate` as `target` runs it: itself for Stowage, deepspeed_target's
// candidate for DeepSpeed and Accelerate (named as describe_policy names
// it). A candidate DeepSpeed cannot take at all (a diagnostic) is absent.
[[nodiscard]] std::optional<Candidate> as_run_by(Target target, const Candidate& candidate,
                                                 const core::MachineSpec& machine, const core::ModelSpec& model);

}  // namespace stowage::planner
