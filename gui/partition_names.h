// The names of a plan's partitions as op names and traces give them
// ("layers.3", or a slice "layers.3[0+300000]"), for the Plan table's row
// headers. GUI-free.
#pragma once

#include <string>
#include <vector>

#include "core/plan_file.h"
#include "core/profile_catalog.h"

namespace stowage::gui {

// One name per policy partition, in order; empty when the plan's model or
// training profile does not load or does not match the policy (the table
// then numbers its rows).
[[nodiscard]] std::vector<std::string> partition_names(const core::PlanFile& plan,
                                                       const core::ProfileCatalog& catalog);

}  // namespace stowage::gui
