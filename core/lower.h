// Lowering: a policy, for a machine, model and training, becomes the ops of
// one or more training steps (core/schedule.h). The simulator predicts when
// they run; the executor runs them. Lowering validates that the result is a
// DAG and that no op reads data that no earlier op produced.
#pragma once

#include <vector>

#include "core/diagnostic.h"
#include "core/machine_spec.h"
#include "core/memory_estimate.h"
#include "core/policy.h"
#include "core/schedule.h"
#include "core/training_spec.h"
#include "core/workload.h"

namespace stowage::core {

struct LowerOptions {
  int steps = 1;             // training steps to lower (>= 2 shows a delayed update overlapping)
  RuntimeBuffers buffers;    // reserves counted as resident memory
  // Check the result with validate() (a bug in lowering becomes a
  // diagnostic). The planner, lowering thousands of variants of one design,
  // turns it off for speed; tests and the commands keep it on.
  bool validate = true;
  // Steps (0-based, within the schedule) after which a checkpoint op
  // records the training state; ascending.
  std::vector<int> checkpoint_after;
};

// The policy must have one PartitionPolicy per partition of the workload
// (partitions_of(workload, policy.sub_group_params)); otherwise, or when the
// policy asks for something the machine lacks (NVMe without drives), the
// result is a diagnostic naming the problem.
Result<Schedule> lower(const Policy& policy, const MachineSpec& machine, const Workload& workload,
                       const TrainingSpec& training, const LowerOptions& options = {});

// Lowering refuses a schedule it estimates at over this many ops (several
// GB) rather than fail to allocate it.
inline constexpr int64_t kMaxScheduleOps = 20'000'000;

// The most steps one schedule of `policy` holds within `ops` ops by the
// lowering's estimate (with kMaxScheduleOps: the most lowering takes). 0
// when even one step has too many micro-steps or ops.
[[nodiscard]] int64_t max_steps_in_one_schedule(const Policy& policy, const Workload& workload,
                                                const TrainingSpec& training, int64_t ops = kMaxScheduleOps);

// Checks a schedule's structure: ids match positions, dependencies point to
// earlier ops (issue order is a topological order), the graph is acyclic
// (Boost.Graph), and every read is produced by an ancestor or is initial data.
// Returns the problems found, empty when sound.
[[nodiscard]] std::vector<std::string> validate(const Schedule& schedule);

}  // namespace stowage::core
