#include "executor/compute_footprint.h"

#include <utility>
#include <vector>

namespace stowage::executor {

int64_t widened_params(const std::optional<core::TiedHead>& tied_head, std::span<const int64_t> layer_params,
                       int layer) {
  int64_t n = layer_params[static_cast<size_t>(layer)];
  if (tied_head && tied_head->layer == layer) n += layer_params[static_cast<size_t>(tied_head->source)];
  return n;
}

core::Workload executor_workload(core::Workload workload, const LayerCompute& model, int64_t tokens) {
  std::vector<int64_t> layer_params;
  for (const core::Layer& l : workload.layers()) layer_params.push_back(l.param_count());
  std::vector<core::ComputeFootprint> footprints;
  for (size_t l = 0; l < workload.layers().size(); ++l) {
    core::ComputeFootprint f = model.footprint(static_cast<int>(l));
    const int64_t params = layer_params[l];
    const int64_t widened = widened_params(core::tied_head(workload), layer_params, static_cast<int>(l));
    // The model's kernel temporaries, and the interpreter's workspaces.
    f.forward_scratch += core::Bytes(workspace_bytes(core::OpKind::kForward, widened, params));
    f.backward_scratch += core::Bytes(workspace_bytes(core::OpKind::kBackward, widened, params));
    footprints.push_back(f);
  }
  workload.set_footprints(std::move(footprints), tokens);
  return workload;
}

}  // namespace stowage::executor
