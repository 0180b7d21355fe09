// The planner: searches the policy space for the fastest plan that fits,
// scoring candidates with the simulator. Deterministic: the same inputs
// consider the same candidates in the same order and choose the same plan.
// Candidates that could beat the best found by less than 0.5 % are skipped,
// so the plan is within 0.5 % of the best in the space searched.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/machine_spec.h"
#include "core/model_spec.h"
#include "core/training_spec.h"
#include "planner/candidate.h"
#include "planner/target.h"

namespace stowage::planner {

struct SearchOptions {
  // May the planner change the micro-batch (keeping tokens per step) and
  // activation checkpointing? Off when the user fixed them.
  bool vary_micro_batch = true;
  bool vary_checkpointing = true;
  // Called before each candidate is simulated with the candidates simulated
  // so far and the most the search may simulate; returning false stops the
  // search there (PlanResult::cancelled), keeping what it found. For a GUI's
  // progress bar and cancel button; may be empty.
  std::function<bool(int done, int most)> progress;
  // Who will run the plan. For DeepSpeed and Accelerate every candidate is
  // replaced by the plan that runtime really runs for it (with its buffer
  // pools, planner/deepspeed_target.h), so the chosen plan exports as it
  // was predicted; variants it cannot express are not tried.
  Target target = Target::kStowage;
  // Placements to evaluate beside the standard baselines (`plan
  // --placement`, any of core::placement_named's): each is a baseline of
  // the result, compared in its table, and a candidate, so the chosen plan
  // is never slower than one of them that fits.
  std::vector<core::Placement> also_compare;
  // Stop at the first candidate that fits, for questions of whether
  // anything fits rather than which plan is fastest (a ladder of model
  // sizes): `best` is then that candidate, not the fastest. Whether a plan
  // is found is the same as without it, since a candidate is only ever
  // skipped once another fits (bounded out) or for memory it lacks (pruned).
  enum class Until { kSearchedAll, kFirstFit };
  Until until = Until::kSearchedAll;
  // May the plan keep Adam's moments in bf16 (core::StatePrecision)? They
  // change the training's numbers, so only when the user says so (`plan
  // --allow-bf16-states`); search() then takes them only when they make the
  // step faster by more than its resolution or make a plan fit.
  enum class StatePrecisions { kFp32Only, kMayUseBf16 };
  StatePrecisions state_precisions = StatePrecisions::kFp32Only;
  // Threads that simulate candidates ahead of the one being judged
  // (planner/run_ahead.h); 0: one per core, at most 4. The result is the
  // same for any number: each candidate's simulation is the same wherever
  // it runs, and the search still judges them one by one in its order.
  int threads = 0;
  // Simulations to reuse and add to (planner/simulated.h), or null: only
  // for machines that differ from the one they were made on in memory
  // capacities alone, as advice's searches on a larger machine do.
  std::shared_ptr<SimulationCache> simulations;
};

// Threads a search simulates on when SearchOptions::threads is 0: one per
// core, at most 4 (each holds a lowered schedule while it simulates: tens
// of MB for the largest bundled models).
[[nodiscard]] int default_search_threads();

struct PlanResult {
  std::optional<Evaluation> best;      // the fastest candidate that fits
  std::vector<Evaluation> baselines;   // all-gpu, zero-offload, zero-infinity, zero-offload + delayed update,
                                       // then SearchOptions::also_compare
  std::vector<Evaluation> considered;  // every candidate in the order considered (for --explain)
  bool cancelled = false;              // options.progress stopped the search early
};

// A candidate's name from its choices: "micro 2x4, ckpt, zero-3, params cpu,
// states gpu/cpu/nvme 4/15/23, prefetch 2" (the search names its candidates so).
[[nodiscard]] std::string describe(const Candidate& candidate);

// The candidate a plan file's policy is: the training profile's shape as the
// plan changed it (core::effective_training), named by describe.
[[nodiscard]] Candidate candidate_of(const core::Policy& policy, const core::TrainingSpec& training);

PlanResult search(const core::MachineSpec& machine, const core::ModelSpec& model, const core::TrainingSpec& training,
                  const SearchOptions& options = {});

// The candidates search() considers besides the baselines, in the order it
// generates them, before any is pruned or simulated: for tests of what the
// pruning may assume about them.
std::vector<Candidate> search_space(const core::MachineSpec& machine, const core::ModelSpec& model,
                                    const core::TrainingSpec& training, const SearchOptions& options = {});

// The four baselines the plan is compared with, as candidates.
std::vector<Candidate> baseline_candidates(const core::MachineSpec& machine, const core::Workload& workload,
                                           const core::TrainingSpec& training);

}  // namespace stowage::planner
