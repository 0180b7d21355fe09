// Host memory: the optimizer's access pattern and plain copies.
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "probe/probes.h"

namespace stowage::probe {
namespace {

// Per parameter, what an Adam step touches: master, m and v read and
// written (fp32), the gradient read and the 16-bit parameter written: 28 B,
// the bytes the schedule's optimizer ops count. A STREAM triad moves 24 B
// per element with a write-allocate it does not count; this pass is the
// optimizer's own mix, with just enough arithmetic to keep it honest.
void adam_pattern(float* master, float* m, float* v, const uint16_t* grad, uint16_t* p16, size_t begin,
                  size_t end) {
  // Multiplies and adds only, no divide: the pass must be bound by memory,
  // not by arithmetic, so that it measures the memory system.
  for (size_t i = begin; i < end; ++i) {
    const float g = static_cast<float>(grad[i]);
    m[i] = 0.9f * m[i] + 0.1f * g;
    v[i] = 0.999f * v[i] + 0.001f * g * g;
    master[i] -= 1e-3f * m[i] - 1e-6f * v[i];
    p16[i] = static_cast<uint16_t>(static_cast<int32_t>(master[i]));
  }
}

struct Arrays {
  std::vector<float> master, m, v;
  std::vector<uint16_t> grad, p16;
  explicit Arrays(size_t n) : master(n, 1.0f), m(n, 0.0f), v(n, 0.0f), grad(n, 1), p16(n, 0) {}
};

double adam_pattern_rate(Arrays& a, int threads, int repeats) {
  const size_t n = a.master.size();
  const double s = best_seconds(repeats, [&] {
    std::vector<std::thread> pool;
    const size_t chunk = (n + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
    for (int t = 1; t < threads; ++t) {
      const size_t b = std::min(n, chunk * static_cast<size_t>(t)), e = std::min(n, b + chunk);
      pool.emplace_back([&a, b, e] { adam_pattern(a.master.data(), a.m.data(), a.v.data(), a.grad.data(), a.p16.data(), b, e); });
    }
    adam_pattern(a.master.data(), a.m.data(), a.v.data(), a.grad.data(), a.p16.data(), 0, std::min(n, chunk));
    for (std::thread& t : pool) t.join();
  });
  return 28.0 * static_cast<double>(n) / s;
}

double copy_rate(char* dst, const char* src, int64_t bytes, int repeats) {
  const double s = best_seconds(repeats, [&] { std::memcpy(dst, src, static_cast<size_t>(bytes)); });
  return static_cast<double>(bytes) / s;
}

std::vector<int64_t> copy_sizes(Depth d) {
  if (d == Depth::kQuick) return {int64_t{4} << 20, int64_t{256} << 20};
  return {int64_t{256} << 10, int64_t{4} << 20, int64_t{16} << 20, int64_t{64} << 20, int64_t{256} << 20};
}

std::vector<int> thread_counts(int cores) {
  std::vector<int> out;
  for (int t = 1; t < cores; t *= 2) out.push_back(t);
  out.push_back(cores);
  return out;
}

}  // namespace

int memory_probe_steps(const ProbeOptions& o, int cores) {
  return static_cast<int>(thread_counts(cores).size() + 2 * copy_sizes(o.depth).size()) + 1;
}

void probe_memory(const ProbeOptions& o, Measurements& m, const Tick& tick) {
  const bool quick = o.depth == Depth::kQuick;
  const int repeats = quick ? 3 : 5;
  {
    // 16 M parameters: 448 MB per pass, far past any cache.
    Arrays a(quick ? size_t{16} << 20 : size_t{32} << 20);
    for (int t : thread_counts(m.cores)) {
      m.dram_adam_pattern.push_back({.threads = t, .rate = adam_pattern_rate(a, t, repeats)});
      tick("host memory, Adam access pattern");
    }
  }
  const std::vector<int64_t> sizes = copy_sizes(o.depth);
  const int64_t largest = sizes.back();
  std::vector<char> src(static_cast<size_t>(largest), 1), dst(static_cast<size_t>(largest), 0);
  for (int64_t b : sizes) {
    m.memcpy_pageable.push_back({.bytes = b, .rate = copy_rate(dst.data(), src.data(), b, repeats)});
    tick("memcpy, pageable");
  }
  m.locked = ::mlock(src.data(), src.size()) == 0 && ::mlock(dst.data(), dst.size()) == 0;
  for (int64_t b : sizes) {
    m.memcpy_locked.push_back({.bytes = b, .rate = copy_rate(dst.data(), src.data(), b, repeats)});
    tick(m.locked ? "memcpy, locked" : "memcpy (mlock refused: pageable again)");
  }
  m.small_copy_seconds = best_seconds(200, [&] { std::memcpy(dst.data() + 8192, src.data(), 4096); });
  if (m.locked) {
    ::munlock(src.data(), src.size());
    ::munlock(dst.data(), dst.size());
  }
  tick("small copies");
}

}  // namespace stowage::probe
