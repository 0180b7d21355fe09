#include "cli/placement_option.h"

#include <algorithm>

#include "core/placement.h"

namespace stowage::cli {

CLI::Validator placement_validator(std::vector<std::string> extra) {
  return CLI::Validator(
      [extra = std::move(extra)](std::string& value) -> std::string {
        if (std::ranges::find(extra, value) != extra.end()) return "";
        // The names do not depend on the GPU count, only stages do.
        if (core::placement_named(value, 1)) return "";
        std::string known = "all-gpu, zero-offload, zero-infinity";
        for (const core::Placement& p : core::deepspeed_placements()) known += ", " + p.name;
        return "unknown placement '" + value + "' (one of " + known +
               ", or a stage-3 CPU offload with -ratio-R, 0 < R < 1)";
      },
      "PLACEMENT");
}

}  // namespace stowage::cli
