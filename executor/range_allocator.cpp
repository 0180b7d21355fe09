// RangeAllocator: first fit over the free runs, ordered by offset, so that
// a release merges with its neighbours in O(log n).
#include "executor/range_allocator.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>

namespace stowage::executor {

RangeAllocator::RangeAllocator(int64_t capacity, int64_t alignment)
    : capacity_(capacity), alignment_(alignment) {
  if (capacity < 0 || alignment <= 0 || (alignment & (alignment - 1)) != 0)
    throw std::invalid_argument("RangeAllocator: capacity >= 0 and a power-of-two alignment");
  // The usable capacity is whole alignment units: a tail shorter than one
  // could only ever hold an unaligned range.
  const int64_t usable = capacity / alignment * alignment;
  if (usable > 0) free_.emplace(0, usable);
}

std::expected<ArenaRange, ArenaShortfall> RangeAllocator::allocate(int64_t bytes) {
  if (bytes < 0)
    throw std::invalid_argument("RangeAllocator::allocate: negative size " + std::to_string(bytes));
  if (bytes == 0) return ArenaRange{};
  const int64_t need = occupied(bytes);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need) continue;
    const int64_t offset = it->first;
    const int64_t left = it->second - need;
    free_.erase(it);
    if (left > 0) free_.emplace(offset + need, left);
    used_.emplace(offset, need);
    in_use_ += need;
    return ArenaRange{.offset = offset, .bytes = bytes};
  }
  return std::unexpected(ArenaShortfall{
      .bytes = bytes, .in_use = in_use_, .capacity = capacity_, .largest_free = largest_free()});
}

void RangeAllocator::release(const ArenaRange& range) {
  if (range.bytes == 0) return;
  const auto used = used_.find(range.offset);
  if (used == used_.end())
    throw std::logic_error("RangeAllocator::release: no range at offset " + std::to_string(range.offset));
  int64_t offset = used->first;
  int64_t length = used->second;
  used_.erase(used);
  in_use_ -= length;
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && next->first == offset + length) {  // merge the run after
    length += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {  // merge the run before
    const auto before = std::prev(next);
    if (before->first + before->second == offset) {
      offset = before->first;
      length += before->second;
      free_.erase(before);
    }
  }
  free_.emplace(offset, length);
}

int64_t RangeAllocator::largest_free() const {
  int64_t largest = 0;
  for (const auto& [offset, length] : free_) largest = std::max(largest, length);
  return largest;
}

}  // namespace stowage::executor
