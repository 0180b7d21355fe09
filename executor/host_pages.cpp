#include "executor/host_pages.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>

namespace stowage::executor {
namespace {

// Pages between consecutive blocks' colours: odd, so kPageColours blocks
// in a row all get different ones; large, so that neighbours differ in the
// high colour bits too, not only in bit 12.
constexpr size_t kColourStride = 37;

std::atomic<size_t> next_block{0};

size_t round_up(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

}  // namespace

std::byte* allocate_host_pages(size_t bytes) {
  if (bytes == 0 || bytes > SIZE_MAX / 2) return nullptr;
  const size_t rounded = round_up(bytes, kHostPage);
  if (rounded < kColouredMinBytes) return static_cast<std::byte*>(std::aligned_alloc(kHostPage, rounded));
  const size_t offset = next_block.fetch_add(1, std::memory_order_relaxed) * kColourStride % kPageColours * kHostPage;
  // Room to move the start to the next 2 MiB boundary and then by `offset`;
  // the pages before and after the block are given back at once.
  const size_t mapped = rounded + kHugePage + offset;
  void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  const uintptr_t first = reinterpret_cast<uintptr_t>(base);
  const uintptr_t start = round_up(first, kHugePage) + offset;
  const uintptr_t end = start + rounded;
  if (start > first) munmap(base, start - first);
  if (first + mapped > end) munmap(reinterpret_cast<void*>(end), first + mapped - end);
  // Transparent huge pages for every whole 2 MiB inside the block, where the
  // system allows them (enabled=madvise is Debian's default). O_DIRECT pins
  // each page it moves: with 4 KiB pages the block store read 1.56 GB/s and
  // wrote 3.28 here, with 2 MiB pages 2.97 and 6.07 (docs/performance.md).
  // Refused (THP off), the block keeps 4 KiB pages.
  (void)madvise(reinterpret_cast<void*>(start), rounded, MADV_HUGEPAGE);
  return reinterpret_cast<std::byte*>(start);
}

void free_host_pages(std::byte* data, size_t bytes) {
  if (data == nullptr) return;
  const size_t rounded = round_up(bytes, kHostPage);
  if (rounded < kColouredMinBytes)
    std::free(data);
  else
    munmap(data, rounded);
}

}  // namespace stowage::executor
