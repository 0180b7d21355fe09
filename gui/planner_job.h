// The planner panel's work, GUI-free so it runs on a worker thread and in
// tests: load the profiles, search for the best plan with its baselines,
// and simulate the chosen plan to its steady state for the timeline. Also
// re-simulates a plan file opened on its own. A stop request is honoured
// between stages and, inside the search, before each candidate is
// simulated (planner::SearchOptions::progress), so cancel is prompt.
#pragma once

#include <array>
#include <filesystem>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "core/diagnostic.h"
#include "core/machine_spec.h"
#include "core/plan_file.h"
#include "core/profile_catalog.h"
#include "gui/trace_model.h"
#include "planner/advice.h"
#include "planner/search.h"

namespace stowage::gui {

struct PlannerRequest {
  std::string machine;  // profile name or YAML path: "workstation-24gb-1nvme"
  std::string model;    // "llama-2-13b"
  std::string training = "default";
  std::filesystem::path profiles;  // the catalog's root
};

enum class PlannerStage { kLoadingProfiles, kSearching, kSimulating, kDone };
[[nodiscard]] std::string_view to_string(PlannerStage stage);

struct PlannerOutcome {
  planner::PlanResult result;          // as far as the search got when cancelled
  std::optional<core::PlanFile> plan;  // absent when nothing fits or cancelled
  std::optional<TraceModel> timeline;  // the chosen plan, simulated to steady state
  bool cancelled = false;              // a stop was requested; result.cancelled when it stopped the search
  // When nothing fits: the changes that would make it fit, each re-planned,
  // as `stowage plan` prints them (planner/advice.h).
  std::vector<planner::Advice> advice;
  // What `stowage plan` warns of for these inputs and this result
  // (planner::plan_warnings), each without the "warning: " it prints.
  std::vector<std::string> warnings;
};

struct PlannerProgressReport {
  PlannerStage stage = PlannerStage::kLoadingProfiles;
  int simulated = 0;  // kSearching: candidates simulated so far
  int most = 0;       // kSearching: the most the search may simulate (grows as it finds more)
};

// Called from the worker thread at the start of each stage and, while
// searching, before each candidate is simulated.
using PlannerProgress = std::function<void(const PlannerProgressReport&)>;

// Bad profiles are diagnostics. A stop request ends the job at the next
// candidate or stage with PlannerOutcome::cancelled set.
[[nodiscard]] core::Result<PlannerOutcome> run_planner(const PlannerRequest& request, std::stop_token stop,
                                                       const PlannerProgress& progress);

// A plan file's policy lowered on its machine, model and training and
// simulated to steady state.
[[nodiscard]] core::Result<TraceModel> simulate_plan(const core::PlanFile& plan,
                                                     const core::ProfileCatalog& catalog);

// Per-rank capacity of each tier, as lowering computes it (core/lower.cpp):
// GPU memory, host DRAM / GPUs, NVMe / GPUs.
[[nodiscard]] std::array<std::optional<core::Bytes>, 3> capacity_of(const core::MachineSpec& machine);

}  // namespace stowage::gui
