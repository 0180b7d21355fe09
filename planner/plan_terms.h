// What a plan means, in words a user reads beside its figures: the training
// shape (micro-batch x accumulation, checkpointing), where each run of
// layers keeps its parameters, optimizer states and gradients and where its
// optimizer runs, how far ahead transfers are issued and whether the update
// is delayed. `stowage plan` prints these lines and its --json carries the
// same decisions as fields (issue 11 item 8); docs/formats/plan.md defines
// every term.
#pragma once

#include <string>
#include <vector>

#include "core/policy.h"
#include "core/workload.h"
#include "planner/candidate.h"

namespace stowage::planner {

// Consecutive partitions placed alike, named by their layers: "layers.0"
// to "layers.9" (or one layer's sub-groups, "layers.3[0+300000]").
struct LayerRun {
  std::string first;  // partition_name of the first partition of the run
  std::string last;   // of its last
  int partitions = 0;
  int layers = 0;     // distinct layers the run covers
  core::PartitionPolicy placement;
};

// The policy's partitions grouped into runs, in model order; every
// partition is in exactly one run. Precondition: the policy has one
// PartitionPolicy per partition of `workload` (as lower() requires).
[[nodiscard]] std::vector<LayerRun> runs_by_layer(const core::Policy& policy, const core::Workload& workload);

// "layers.0 .. layers.9 (10 layers)", or the one name.
[[nodiscard]] std::string run_name(const LayerRun& run);

// One sentence per term of the plan, for the chosen candidate on a machine
// of `gpus` GPUs.
[[nodiscard]] std::vector<std::string> plan_terms(const Candidate& chosen, const core::Workload& workload, int gpus);

}  // namespace stowage::planner
