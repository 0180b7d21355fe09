#include "core/gather_pieces.h"

#include <algorithm>

namespace stowage::core {
namespace {

// A module's parameters as a range of the layer's: its tensors are
// consecutive in Layer::params (core/workload.cpp builds them so).
struct ModuleRange {
  int64_t first = 0, params = 0;
};

std::vector<ModuleRange> modules_of(const Layer& layer) {
  std::vector<ModuleRange> out;
  const std::string* current = nullptr;
  int64_t offset = 0;
  for (const ParamTensor& t : layer.params) {
    if (current == nullptr || t.module != *current) out.push_back({offset, 0});
    current = &t.module;
    out.back().params += t.elements();
    offset += t.elements();
  }
  return out;
}

}  // namespace

int64_t gather_params_for(Bytes gpu_memory) {
  return std::max<int64_t>(1, gpu_memory.count() / kGatherFractionDenominator / 2);
}

std::vector<GatherPiece> gather_pieces(const Layer& layer, int64_t gather_params) {
  const int64_t total = layer.param_count();
  if (gather_params <= 0 || total <= gather_params) return {{0, total}};
  std::vector<GatherPiece> out;
  GatherPiece open{0, 0};
  auto flush = [&] {
    if (open.params > 0) out.push_back(open);
    open = {open.first_param + open.params, 0};
  };
  for (const ModuleRange& m : modules_of(layer)) {
    if (m.params > gather_params) {
      // Operator tiling: equal row blocks, each at most gather_params.
      flush();
      const int64_t tiles = (m.params + gather_params - 1) / gather_params;
      const int64_t base = m.params / tiles, longer = m.params % tiles;
      for (int64_t k = 0; k < tiles; ++k) {
        open.params = base + (k < longer ? 1 : 0);
        flush();
      }
      continue;
    }
    if (open.params + m.params > gather_params) flush();
    open.params += m.params;
  }
  flush();
  return out;
}

int64_t largest_gather_piece(const Workload& workload, int64_t gather_params) {
  int64_t largest = 0;
  for (const Layer& l : workload.layers()) {
    for (const GatherPiece& p : gather_pieces(l, gather_params)) largest = std::max(largest, p.params);
  }
  return largest;
}

}  // namespace stowage::core
