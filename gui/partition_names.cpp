#include "gui/partition_names.h"

#include "core/policy.h"
#include "core/workload.h"

namespace stowage::gui {

std::vector<std::string> partition_names(const core::PlanFile& plan, const core::ProfileCatalog& catalog) {
  const auto model = catalog.model(plan.model);
  const auto training = catalog.training(plan.training);
  if (!model || !training) return {};
  const core::Workload workload(*model, training->sequence_length);
  const std::vector<core::Partition> parts = core::partitions_of(workload, plan.policy.sub_group_params);
  if (parts.size() != plan.policy.partitions.size()) return {};
  std::vector<std::string> names;
  names.reserve(parts.size());
  for (const core::Partition& p : parts) names.push_back(core::partition_name(workload, p));
  return names;
}

}  // namespace stowage::gui
