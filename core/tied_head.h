// Tied embeddings (Press & Wolf 2017, arXiv:1608.05859; GPT-2, OPT): the
// LM head multiplies by the embedding layer's token table instead of owning
// a weight, so the final layer's compute reads another layer's parameters.
// Lowering fetches that layer's 16-bit parameters for the final layer's
// forward and backward (core/lower.cpp), and the executor widens them after
// the final layer's own (executor/interpreter.cpp, InterpretOptions).
#pragma once

#include <optional>

#include "core/workload.h"

namespace stowage::core {

struct TiedHead {
  int layer = 0;   // the layer whose compute reads: the final layer
  int source = 0;  // the layer whose parameters it reads: the embedding
  bool operator==(const TiedHead&) const = default;
};

// The tied head of `workload`'s model, or none when its head owns its
// weight (or it has no embedding and final layer). The token table is the
// first vocab x d_model parameters of the source layer.
[[nodiscard]] std::optional<TiedHead> tied_head(const Workload& workload);

}  // namespace stowage::core
