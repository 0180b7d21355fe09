// What a layer's compute ops move and compute for one micro-batch: the
// bytes and FLOPs that lowering puts on its forward, recompute and backward
// ops and that the planner's step bound prices. One rule, so that the bound
// and the schedule it bounds cannot count a backward differently.
#pragma once

#include <cstdint>

#include "core/schedule.h"
#include "core/units.h"
#include "core/workload.h"

namespace stowage::core {

struct ComputeWork {
  Bytes bytes;  // memory the op touches: the layer's 16-bit parameters and activations
  Flops flops;
};

// The whole layer's op of `kind` (kForward, kRecompute or kBackward) over
// `tokens`, with `footprint` = Workload::footprint(layer, tokens) and
// `param16` its 16-bit parameter bytes. A forward reads the parameters and
// writes what it keeps (the layer's input only when `checkpointing`); a
// recompute rebuilds every activation; a backward reads the parameters,
// writes their gradients, reads every activation and does
// kBackwardFlopsPerForwardFlop times the forward's FLOPs. A layer gathered in
// pieces splits both numbers by parameter share. Throws std::logic_error
// for any other kind.
[[nodiscard]] ComputeWork compute_work(OpKind kind, const Layer& layer, const ComputeFootprint& footprint,
                                       int64_t tokens, bool checkpointing, Bytes param16);

}  // namespace stowage::core
