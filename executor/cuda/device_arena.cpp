// DeviceArena.
#include "executor/cuda/device_arena.h"

namespace stowage::executor::cuda {

DeviceArena::DeviceArena(int64_t capacity) : memory_(capacity), ranges_(memory_.bytes()) {}

std::expected<DeviceRange, ArenaShortfall> DeviceArena::allocate(int64_t bytes) {
  const std::lock_guard lock(mutex_);
  auto range = ranges_.allocate(bytes);
  if (!range) return std::unexpected(range.error());
  return DeviceRange{.data = range->bytes == 0 ? nullptr : memory_.data() + range->offset, .range = *range};
}

void DeviceArena::release(const DeviceRange& range) {
  const std::lock_guard lock(mutex_);
  ranges_.release(range.range);
}

int64_t DeviceArena::in_use() const {
  const std::lock_guard lock(mutex_);
  return ranges_.in_use();
}

}  // namespace stowage::executor::cuda
