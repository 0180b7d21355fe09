// The blocks a backend's tier was given back, kept for the next allocation
// of the same size, as a GPU's caching allocator keeps freed device memory
// (PyTorch's CUDACachingAllocator): a step allocates the same sizes in the
// same order as the step before, so after the first step almost every
// buffer reuses memory whose pages are already mapped. Without it every
// large block was a fresh mapping, and its first write paid a page fault
// per 4 KiB (1.5 million in three steps of the 57M-parameter fidelity
// model, about 6 GB of pages faulted and zeroed), which made an upload into
// a new buffer 2.5x slower than one into a buffer kept resident: costs no
// GPU has and the simulator does not model.
//
// The owner bounds what is kept (trim) and frees what it trims, since only
// it knows how a block was made (host_pages.h, mlock). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace stowage::executor {

class BufferPool {
 public:
  struct Block {
    std::byte* data = nullptr;
    int64_t bytes = 0;  // as the owner allocated it (page-rounded)
  };

  // A kept block of exactly `bytes`, taken out of the pool; null if none.
  [[nodiscard]] std::byte* take(int64_t bytes);
  // Keeps `block` for a later take().
  void keep(Block block);
  // Takes kept blocks out, largest first, until at most `limit` bytes are
  // kept (all of them for a limit <= 0), and returns them to be freed.
  [[nodiscard]] std::vector<Block> trim(int64_t limit);
  [[nodiscard]] int64_t kept_bytes() const;

 private:
  mutable std::mutex mutex_;
  std::multimap<int64_t, std::byte*> kept_;  // by size
  int64_t kept_bytes_ = 0;
};

}  // namespace stowage::executor
