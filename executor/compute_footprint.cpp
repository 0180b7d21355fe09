#include "executor/compute_footprint.h"

#include <utility>
#include <vector>

namespace stowage::executor {

core::Workload executor_workload(core::Workload workload, const LayerCompute& model, int64_t tokens) {
  std::vector<core::ComputeFootprint> footprints;
  for (size_t l = 0; l < workload.layers().size(); ++l) {
    core::ComputeFootprint f = model.footprint(static_cast<int>(l));
    const int64_t params = workload.layers()[l].param_count();
    // The model's kernel temporaries, and the interpreter's workspaces.
    f.forward_scratch += core::Bytes(workspace_bytes(core::OpKind::kForward, params));
    f.backward_scratch += core::Bytes(workspace_bytes(core::OpKind::kBackward, params));
    footprints.push_back(f);
  }
  workload.set_footprints(std::move(footprints), tokens);
  return workload;
}

}  // namespace stowage::executor
