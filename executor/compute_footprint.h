// What a run's compute ops hold on the device, as the executor really holds
// it: the model's kept activations (LayerCompute::footprint, fp32 and with
// attention probabilities, unlike the GPU training accounting), its kernels'
// temporaries (model/kernel_scratch.h) and the interpreter's fp32 workspaces. The trainer lowers the run with these, so
// the simulated peak is of exactly the memory the executor uses, and the
// interpreter checks every op's allocations against them (interpreter.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/schedule.h"
#include "core/tied_head.h"
#include "core/workload.h"
#include "executor/layer_compute.h"

namespace stowage::executor {

// The parameters a compute op of `layer` widens to fp32: the layer's own
// (layer_params[layer]), then, for the final layer of a tied model, the
// embedding layer's whose token table its head multiplies by (core::tied_head).
[[nodiscard]] int64_t widened_params(const std::optional<core::TiedHead>& tied_head,
                                     std::span<const int64_t> layer_params, int layer);

// The interpreter's fp32 scratch around one compute op: the `widened`
// parameters (every compute op), and the fp32 gradients of the layer's own
// `layer_params` (backward).
[[nodiscard]] constexpr int64_t workspace_bytes(core::OpKind kind, int64_t widened, int64_t layer_params) {
  return 4 * widened + (kind == core::OpKind::kBackward ? 4 * layer_params : 0);
}

// `workload` with every layer's footprint as `model` keeps it for
// micro-batches of `tokens` tokens, plus the interpreter's workspaces.
[[nodiscard]] core::Workload executor_workload(core::Workload workload, const LayerCompute& model,
                                               int64_t tokens);

}  // namespace stowage::executor
