// memory_exhausted.
#include "executor/memory_exhausted.h"

#include <string>

#include "core/units.h"

namespace stowage::executor {

core::Diagnostic memory_exhausted(core::Tier tier, std::string_view what, const ArenaShortfall& s) {
  std::string message = std::string(core::to_string(tier)) + " memory exhausted: '" + std::string(what) +
                        "' needs " + core::format_bytes(core::Bytes(s.bytes)) + " with " +
                        core::format_bytes(core::Bytes(s.in_use)) + " of " +
                        core::format_bytes(core::Bytes(s.capacity)) + " in use";
  if (s.capacity - s.in_use >= s.bytes)
    message += ", the largest free range " + core::format_bytes(core::Bytes(s.largest_free));
  return {{},
          std::move(message),
          tier == core::Tier::kGpu ? "a plan that offloads more, or a larger --device-memory"
                                   : "a plan that needs less host memory"};
}

}  // namespace stowage::executor
