#include "core/compute_work.h"

#include <stdexcept>

namespace stowage::core {

ComputeWork compute_work(OpKind kind, const Layer& layer, const ComputeFootprint& footprint, int64_t tokens,
                         bool checkpointing, Bytes param16) {
  const Flops forward = layer.forward_flops_per_token * static_cast<double>(tokens);
  switch (kind) {
    case OpKind::kForward:
      return {.bytes = param16 + (checkpointing ? footprint.checkpointed : footprint.saved), .flops = forward};
    case OpKind::kRecompute:
      return {.bytes = param16 + footprint.saved, .flops = forward};
    case OpKind::kBackward:
      return {.bytes = param16 * 2 + footprint.saved, .flops = forward * kBackwardFlopsPerForwardFlop};
    default:
      throw std::logic_error("compute_work: not a compute op kind");
  }
}

}  // namespace stowage::core
