// Which precision `stowage run`'s layer products run in: --products as
// given, or by default ("plan") the plan's own mixed precision where the
// cuda backend runs the layers on the device, the products the simulator
// prices there, and fp32 wherever the host's kernels run them (the only
// products OpenBLAS has: docs/backend.md).
#pragma once

#include <string>
#include <string_view>

#include "core/training_spec.h"

namespace stowage::cli {

inline constexpr std::string_view kProductsAsPlanned = "plan";

// "fp32", "bf16" or "fp16". `asked` is --products, already checked to be
// "plan" or one of those; `backend` and `layers` are --backend and --layers.
[[nodiscard]] std::string layer_products(std::string_view asked, std::string_view backend,
                                         std::string_view layers, core::Precision planned);

}  // namespace stowage::cli
