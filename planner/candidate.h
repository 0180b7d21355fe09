// A candidate plan: a policy together with the training shape it runs
// (the planner may change micro-batch, accumulation and checkpointing), and
// what the simulator predicted for it.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/machine_spec.h"
#include "core/policy.h"
#include "core/schedule.h"
#include "core/training_spec.h"
#include "core/workload.h"
#include "sim/summary.h"

namespace stowage::planner {

struct Candidate {
  std::string name;  // "all-gpu" or a description of the choices
  core::Policy policy;
  core::TrainingSpec training;
  // Memory a target runtime holds beside what the policy's schedule
  // allocates (DeepSpeed's swap buffer pools, planner/deepspeed_target.h),
  // per rank; evaluate() adds it to the schedule's resident memory.
  std::vector<core::MemoryEffect> runtime_pools;
};

enum class Verdict { kFits, kOverflows, kPruned, kBoundedOut, kInvalid };

struct Simulated;        // planner/simulated.h
class SimulationCache;   // planner/simulated.h

struct Evaluation {
  Candidate candidate;
  Verdict verdict = Verdict::kInvalid;
  std::string reason;  // why it was rejected, or "" when it fits
  std::optional<sim::Summary> summary;  // present when simulated
  std::optional<core::Tier> overflow;   // the tier that overflowed
  core::Bytes overflow_bytes;           // by how much, per rank for gpu, per machine otherwise
  core::Bytes nvme_bytes_written;       // per step, whole machine
  // When it overflows: the op that crossed the line (empty when what rests
  // on the tier from the start is already too much) and who held the tier
  // then (largest first, per rank).
  std::string overflow_op;
  std::vector<std::pair<std::string, core::Bytes>> holders;
  core::Bytes capacity;  // of the overflowing tier, per rank for gpu, per machine otherwise
  // What the simulation found, for judging it again at other capacities
  // (planner/simulated.h); null when not simulated.
  std::shared_ptr<const Simulated> simulated;
  // What the search's pruning assumed of it before simulating it: the
  // memory floor per tier (planner/memory_floor.h) and the step-time lower
  // bound (planner/step_bound.h), kept so tests can hold every simulated
  // candidate to them. Empty where the search did not compute them.
  std::optional<std::array<core::Bytes, 3>> floor;
  std::optional<double> bound;

  [[nodiscard]] bool fits() const { return verdict == Verdict::kFits; }
  [[nodiscard]] double step_seconds() const { return summary ? summary->step_time.value() : 0; }
};

// Lowers and simulates enough steps of a candidate that the last one's
// period is its steady-state step time (core::steady_state_steps). With
// `simulations`, a candidate simulated before is judged again at this
// machine's capacities instead, and a new simulation is kept there.
Evaluation evaluate(const Candidate& candidate, const core::MachineSpec& machine, const core::ModelSpec& model,
                    SimulationCache* simulations = nullptr);

}  // namespace stowage::planner
