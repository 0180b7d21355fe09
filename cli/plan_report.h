// Shared by the plan, fit and whatif commands: loading their inputs, and
// printing a planner result as a table and as JSON.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/profile_inputs.h"
#include "core/plan_file.h"
#include "core/profile_catalog.h"
#include "planner/search.h"

namespace stowage::cli {

struct PlanInputs : ProfileInputs {
  // Suggested when a machine has no NVMe: the bundled 4 TB 990 PRO, or else
  // the largest drive of the profiles folder; none when it has no drives.
  std::optional<core::NvmeSpec> spare_drive;
};

core::Result<PlanInputs> load_plan_inputs(const core::ProfileCatalog& catalog, const std::string& machine,
                                          const std::string& model, const std::string& training);

// The inputs' warnings and those about the chosen plan (host RAM pinned
// past planner::kPinnedWarningShare), printed by print_plan and listed in
// plan_json as "warnings".
std::vector<std::string> plan_warnings(const PlanInputs& inputs, const planner::PlanResult& result);

void print_plan(std::ostream& out, const PlanInputs& inputs, const planner::PlanResult& result, bool explain);
nlohmann::json plan_json(const PlanInputs& inputs, const planner::PlanResult& result);

core::PlanFile to_plan_file(const PlanInputs& inputs, const planner::Evaluation& chosen);

// Re-simulates the chosen plan to its steady state and writes its trace.
core::Diagnostics write_plan_trace(const PlanInputs& inputs, const planner::Evaluation& chosen,
                                   const std::filesystem::path& path);

}  // namespace stowage::cli
