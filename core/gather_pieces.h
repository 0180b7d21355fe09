// Gathering by parameter (ZeRO-Infinity's gather-as-needed, Rajbhandari et
// al. 2021, arXiv:2104.07857 §5.1.3 and §6.2 "operator tiling"): a layer whose
// 16-bit parameters exceed a gather size is fetched, computed and released
// piece by piece, its modules grouped in order into pieces of at most that
// many parameters and a module larger than that tiled into row blocks, so
// the GPU never holds a whole layer's parameters or gradients at once.
#pragma once

#include <cstdint>
#include <vector>

#include "core/units.h"
#include "core/workload.h"

namespace stowage::core {

// The fraction of GPU memory one gathered piece's 16-bit parameters may
// take when the planner gathers by parameter: a piece and its gradients,
// with the prefetch depth's pieces in flight (2 to 4), stay a few tenths of
// the GPU whatever the layer's size.
inline constexpr int64_t kGatherFractionDenominator = 32;

// The gather size (parameters per piece) for a GPU of `gpu_memory`:
// gpu_memory / kGatherFractionDenominator of 16-bit parameters.
[[nodiscard]] int64_t gather_params_for(Bytes gpu_memory);

// A piece of a layer: elements [first_param, first_param + params) of the
// layer's parameters, in the order of Layer::params.
struct GatherPiece {
  int64_t first_param = 0;
  int64_t params = 0;
  bool operator==(const GatherPiece&) const = default;
};

// The pieces a layer is gathered in: the whole layer when gather_params is
// 0 or the layer has at most that many parameters; else whole modules
// (consecutive tensors of one module) packed in order while they fit, and
// a module larger than gather_params cut into equal row tiles of at most
// gather_params parameters. Pieces cover the layer exactly, in order.
[[nodiscard]] std::vector<GatherPiece> gather_pieces(const Layer& layer, int64_t gather_params);

// The largest piece of any layer of the workload, in parameters.
[[nodiscard]] int64_t largest_gather_piece(const Workload& workload, int64_t gather_params);

}  // namespace stowage::core
