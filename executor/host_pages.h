// Large host arrays, each at its own page colour.
//
// Streaming kernels read and write several large arrays at the same index
// (CPU Adam: master, grad, m, v and the 16-bit copy). On the 2-vCPU AMD
// EPYC guest of docs/performance.md, when two of those arrays start at
// addresses equal in bits 12-27 (the page index within 256 MiB), one core
// streams them at a third of the rate (Adam's same-pattern pass: 600 against
// 1650 M params/s at 64M); any two aliased arrays cost 15-45 %. jemalloc,
// Stowage's malloc, places each large block at the start of a region whose
// size is a multiple of 64 MiB, so every large array aliased every other in
// bits 12-25, and the rate was whatever the bits above gave: the bimodal
// 1.2 / 1.7 G params/s of the earlier runs. glibc's malloc escaped by the
// accident of its 4 KiB header.
//
// So large blocks do not come from malloc: each is its own anonymous
// mapping whose start is 2 MiB-aligned plus a page offset (its colour) that
// differs for each of kPageColours consecutive blocks, so arrays allocated
// together never agree in bits 12-20. The offset costs address space only;
// its pages are unmapped. Small blocks, which fit in a cache and are many,
// stay with malloc.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <thread>
#include <vector>

namespace stowage::executor {

inline constexpr size_t kHostPage = 4096;
// A transparent huge page (x86-64's 2 MiB).
inline constexpr size_t kHugePage = size_t{2} << 20;
// From this size up, a block is a coloured mapping.
inline constexpr size_t kColouredMinBytes = size_t{1} << 20;
// The page offsets within 2 MiB a coloured block can start at.
inline constexpr size_t kPageColours = kHugePage / kHostPage;

// `bytes` (> 0) rounded up to whole pages, page-aligned, its contents
// unspecified; null when the system has no memory (or address space) for
// it. Thread-safe.
[[nodiscard]] std::byte* allocate_host_pages(size_t bytes);
// Frees what allocate_host_pages(bytes) returned, with the same `bytes`.
void free_host_pages(std::byte* data, size_t bytes);

// Which of the kPageColours page offsets `p` is at (bits 12-20).
[[nodiscard]] inline size_t page_colour(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) / kHostPage) % kPageColours;
}

// An owning array of `n` T from allocate_host_pages, filled with `fill`
// by `threads` threads (each first-touching the part it will use): the CPU
// backend's widened gradients, and the benchmarks' and `stowage profile`'s
// Adam and memory probes, so that they measure memory laid out as the
// executor's is.
template <typename T>
class HostArray {
 public:
  HostArray(size_t n, T fill, int threads = 1);
  ~HostArray() { free_host_pages(reinterpret_cast<std::byte*>(data_), bytes()); }
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;

  [[nodiscard]] std::span<T> span() const { return {data_, n_}; }
  [[nodiscard]] T* data() const { return data_; }
  [[nodiscard]] size_t size() const { return n_; }

 private:
  [[nodiscard]] size_t bytes() const { return n_ == 0 ? 1 : n_ * sizeof(T); }
  size_t n_;
  T* data_;
};

template <typename T>
HostArray<T>::HostArray(size_t n, T fill, int threads)
    : n_(n), data_(reinterpret_cast<T*>(allocate_host_pages(bytes()))) {
  if (data_ == nullptr) throw std::bad_alloc();
  const size_t parts = static_cast<size_t>(std::max(1, threads));
  const size_t per = (n + parts - 1) / parts;
  std::vector<std::jthread> touch;  // joined when this returns
  for (size_t b = 0; b < n; b += per)
    touch.emplace_back([this, b, e = std::min(n, b + per), fill] { std::fill(data_ + b, data_ + e, fill); });
}

}  // namespace stowage::executor
