#include "core/tied_head.h"

namespace stowage::core {

std::optional<TiedHead> tied_head(const Workload& workload) {
  const std::vector<Layer>& layers = workload.layers();
  if (!workload.model().tied_embeddings || layers.size() < 2) return std::nullopt;
  if (layers.front().kind != LayerKind::kEmbedding || layers.back().kind != LayerKind::kFinal) return std::nullopt;
  return TiedHead{.layer = static_cast<int>(layers.size()) - 1, .source = 0};
}

}  // namespace stowage::core
