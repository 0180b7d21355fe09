// Shared by the plan, fit and whatif commands: printing a planner result
// as a table and as JSON (their inputs: planner/profile_inputs.h).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/plan_file.h"
#include "core/profile_catalog.h"
#include "planner/profile_inputs.h"
#include "planner/search.h"

namespace stowage::cli {

using planner::PlanInputs;

void print_plan(std::ostream& out, const PlanInputs& inputs, const planner::PlanResult& result, bool explain);
nlohmann::json plan_json(const PlanInputs& inputs, const planner::PlanResult& result);

// One evaluated plan: name, fits, reason and, when simulated, its step time,
// throughput, bounding lane and peak bytes per tier (gpu per GPU, cpu and
// nvme per machine); plan_json's chosen and each of its baselines.
nlohmann::json evaluation_json(const PlanInputs& inputs, const planner::Evaluation& evaluation);

// plan_json's fields about one plan (null: nothing fits): machine, model,
// training, chosen (evaluation_json with its policy and terms), its NVMe
// wear when it fits, and `warnings`. whatif gives one for each side.
nlohmann::json plan_side_json(const PlanInputs& inputs, const planner::Evaluation* plan,
                              const std::vector<std::string>& warnings);

// The candidate's decisions as fields: stage, training shape, prefetch
// depths, the placement by layer run and partition by partition (named by
// layer); `plan --json` carries it as chosen.policy (docs/json.md).
nlohmann::json policy_json(const PlanInputs& inputs, const planner::Candidate& candidate);

// The names of the candidate's partitions, in order ("embedding",
// "layers.3"), for the comments of a written plan (core::write_plan).
std::vector<std::string> partition_names(const PlanInputs& inputs, const planner::Candidate& candidate);

// Writes `chosen` as a plan file at `path`: references to profile files
// relative to its folder, each partition named by layer, written atomically
// (cli/output_file.h). The caller checked `path` before the search. A
// reference that reading the plan back would refuse (outside its folder and
// `profiles_root`, core/profile_reference.h) is written all the same, with a
// "warning: ..." line on `warnings`.
core::Diagnostics save_plan(const PlanInputs& inputs, const planner::Evaluation& chosen,
                            const std::string& path, const std::filesystem::path& profiles_root,
                            std::ostream& warnings);

// Re-simulates the chosen plan to its steady state and writes its trace.
core::Diagnostics write_plan_trace(const PlanInputs& inputs, const planner::Evaluation& chosen,
                                   const std::filesystem::path& path);

}  // namespace stowage::cli
