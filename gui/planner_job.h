// The planner panel's work, GUI-free so it runs on a worker thread and in
// tests: load the profiles, search for the best plan with its baselines,
// and simulate the chosen plan to its steady state for the timeline. Also
// re-simulates a plan file opened on its own. A cancel request is honoured
// between stages; planner::search itself runs to its end once started.
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
  planner::PlanResult result;
  std::optional<core::PlanFile> plan;  // absent when nothing fits
  std::optional<TraceModel> timeline;  // the chosen plan, simulated to steady state
};

// Called from the worker thread at the start of each stage.
using PlannerProgress = std::function<void(PlannerStage)>;

// Bad profiles are diagnostics; a stop request gives the diagnostic "cancelled".
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
