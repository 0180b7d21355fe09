// The diagnostic of an allocation a tier cannot hold, one wording for every
// backend (backend.h: "allocate fails with a diagnostic naming what, the
// bytes asked, the tier's use and its cap"): CpuBackend's capped tiers and
// the CUDA device arena (range_allocator.h), which also says when the
// bytes are free in total but not in one piece.
#pragma once

#include <string_view>

#include "core/diagnostic.h"
#include "core/tensor_class.h"
#include "executor/range_allocator.h"

namespace stowage::executor {

// "gpu memory exhausted: 'param16 layers.3' needs 4 MB with 7.999 GB of 8 GB in use"
// (+ ", the largest free range 2 MB" where fragmentation is why).
[[nodiscard]] core::Diagnostic memory_exhausted(core::Tier tier, std::string_view what,
                                                const ArenaShortfall& s);

}  // namespace stowage::executor
