#include "executor/buffer_pool.h"

#include <algorithm>
#include <iterator>

namespace stowage::executor {

std::byte* BufferPool::take(int64_t bytes) {
  std::lock_guard lock(mutex_);
  const auto it = kept_.find(bytes);
  if (it == kept_.end()) return nullptr;
  std::byte* data = it->second;
  kept_.erase(it);
  kept_bytes_ -= bytes;
  return data;
}

void BufferPool::keep(Block block) {
  std::lock_guard lock(mutex_);
  kept_.emplace(block.bytes, block.data);
  kept_bytes_ += block.bytes;
}

std::vector<BufferPool::Block> BufferPool::trim(int64_t limit) {
  std::vector<Block> out;
  std::lock_guard lock(mutex_);
  while (!kept_.empty() && kept_bytes_ > std::max<int64_t>(limit, 0)) {
    const auto largest = std::prev(kept_.end());
    out.push_back({.data = largest->second, .bytes = largest->first});
    kept_bytes_ -= largest->first;
    kept_.erase(largest);
  }
  return out;
}

int64_t BufferPool::kept_bytes() const {
  std::lock_guard lock(mutex_);
  return kept_bytes_;
}

}  // namespace stowage::executor
