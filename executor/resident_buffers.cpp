#include "executor/resident_buffers.h"

#include <string>

namespace stowage::executor {

core::Result<ResidentBuffers> ResidentBuffers::hold(Backend& backend, const core::Schedule& schedule) {
  ResidentBuffers held(backend);
  for (const core::MemoryEffect& item : schedule.resident_items) {
    if (item.tensor == core::kParamsAtRest || item.tensor == core::kStatesAtRest) continue;
    auto b = backend.allocate(item.tier, item.bytes.count(), item.tensor);
    if (!b) return std::unexpected(b.error());
    held.held_.push_back(std::move(*b));
  }
  for (core::Tier tier : core::kAllTiers) {
    const int64_t declared = schedule.resident[static_cast<size_t>(tier)].count();
    if (backend.in_use(tier) == declared) continue;
    return core::fail({{},
                       "the run holds " + std::to_string(backend.in_use(tier)) + " B on " +
                           std::string(core::to_string(tier)) + " as it starts where the schedule declares " +
                           std::to_string(declared) +
                           " B resident (a bug: the executor and lowering disagree)",
                       ""});
  }
  return held;
}

ResidentBuffers::~ResidentBuffers() {
  for (Buffer& b : held_) backend_.release(b);
}

}  // namespace stowage::executor
