// The sub-allocator of one arena: hands out aligned [offset, offset + bytes)
// ranges of a fixed capacity, first fit, merging freed neighbours. The CUDA
// backend's device arena (cuda/device_arena.h) is one cudaMalloc of the
// plan's GPU capacity carved by this, so an infeasible plan fails on the GPU
// as CpuBackend::allocate fails it, naming what, bytes, use and cap
// (memory_exhausted.h). Plain C++, so it is tested without a GPU. Not
// thread-safe: the owner locks.
#pragma once

#include <cstdint>
#include <expected>
#include <map>

namespace stowage::executor {

struct ArenaRange {
  int64_t offset = 0;
  int64_t bytes = 0;  // as asked; the range occupies it rounded up to the alignment
};

// Why a range could not be had: the numbers the message needs.
struct ArenaShortfall {
  int64_t bytes = 0;   // asked
  int64_t in_use = 0;  // before the request, alignment padding included
  int64_t capacity = 0;
  int64_t largest_free = 0;  // the longest free run: below bytes with room in total means fragmentation
};

class RangeAllocator {
 public:
  // capacity >= 0; alignment a power of two (256: what cudaMalloc and the
  // widest vector loads want).
  explicit RangeAllocator(int64_t capacity, int64_t alignment = 256);

  // bytes >= 0; 0 gives an empty range at offset 0 that occupies nothing.
  [[nodiscard]] std::expected<ArenaRange, ArenaShortfall> allocate(int64_t bytes);
  // `range` came from allocate and was not released yet (a broken invariant
  // otherwise: std::logic_error).
  void release(const ArenaRange& range);

  [[nodiscard]] int64_t in_use() const { return in_use_; }
  [[nodiscard]] int64_t capacity() const { return capacity_; }
  [[nodiscard]] int64_t largest_free() const;

 private:
  [[nodiscard]] int64_t occupied(int64_t bytes) const {
    return (bytes + alignment_ - 1) / alignment_ * alignment_;
  }
  int64_t capacity_;
  int64_t alignment_;
  int64_t in_use_ = 0;
  std::map<int64_t, int64_t> free_;  // offset -> length of each free run, none adjacent
  std::map<int64_t, int64_t> used_;  // offset -> occupied length
};

}  // namespace stowage::executor
