// Host memory: the optimizer's access pattern and plain copies.
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "executor/cpu_adam.h"
#include "executor/host_pages.h"
#include "probe/probes.h"

namespace stowage::probe {
namespace {

// Per parameter, what an Adam step touches: master, m and v read and
// written (fp32), the gradient read and the 16-bit parameter written. A
// STREAM triad has neither this mix nor its write-allocates; the pass is
// the executor's own roofline of CPU Adam (executor/cpu_adam.h: Adam's
// arrays, order and threads, trivial arithmetic), not a loop of this
// file's, which the compiler left scalar at a tenth of the rate. Counted
// as the schedule's optimizer ops count it: 28 B per parameter (a 16-bit
// gradient), though the kernel reads an fp32 one.
// Laid out as the executor's buffers are (executor/host_pages.h).
struct Arrays {
  executor::HostArray<float> master, grad, m, v;
  executor::HostArray<uint16_t> p16;
  explicit Arrays(size_t n) : master(n, 1.0f), grad(n, 1e-3f), m(n, 0.0f), v(n, 0.0f), p16(n, 0) {}
};

double adam_pattern_rate(Arrays& a, int threads, int repeats) {
  const double s = best_seconds(repeats, [&] {
    executor::adam_roofline_pass(a.master.span(), a.grad.span(), a.m.span(), a.v.span(), a.p16.span(),
                                 executor::AdamOptions{.threads = threads});
  });
  return 28.0 * static_cast<double>(a.master.size()) / s;
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
    // 32 M parameters (16 M with --quick): 0.6 GB of arrays, far past any cache.
    Arrays a(quick ? size_t{16} << 20 : size_t{32} << 20);
    for (int t : thread_counts(m.cores)) {
      m.dram_adam_pattern.push_back({.threads = t, .rate = adam_pattern_rate(a, t, repeats)});
      tick("host memory, Adam access pattern");
    }
  }
  const std::vector<int64_t> sizes = copy_sizes(o.depth);
  const int64_t largest = sizes.back();
  const executor::HostArray<char> src(static_cast<size_t>(largest), 1), dst(static_cast<size_t>(largest), 0);
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
