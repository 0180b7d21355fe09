// Why large host buffers each get their own page colour (executor/host_pages.h):
// the same-pattern Adam pass (adam_roofline_pass: master, grad, m, v read,
// master, m, v and the bf16 copy written) on one thread over arrays laid
// out three ways, in the same run, order alternating:
//   coloured  allocate_host_pages, as the executor's buffers are
//             (adam_arrays.h, as cpu_adam_bench measures them)
//   aliased   carved from one mapping 256 MiB apart: every array at the
//             same page index in bits 12-27 (what jemalloc's 64 MiB-multiple
//             regions came close to)
//   one_page  the same, each array one page further than the last
// and prints each layout's rate as a fraction of the coloured one's. On the
// 2-vCPU AMD EPYC guest of docs/performance.md aliased ran at about a third
// (2026-12-05); a machine without the effect prints fractions near 1.
// Run: build/<preset>/bench/executor/page_colour_bench
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "bench/executor/adam_arrays.h"
#include "executor/cpu_adam.h"
#include "executor/host_pages.h"

namespace {

using stowage::bench::median;
using stowage::executor::kHostPage;

constexpr size_t kParams = size_t{16} << 20;  // 64 MiB per fp32 array: past the L3
constexpr size_t kStride = size_t{256} << 20;

// Five arrays (four fp32, the bf16 copy) carved from one mapping, array i
// at i * kStride + i * skew_pages pages.
class CarvedArrays {
 public:
  explicit CarvedArrays(size_t skew_pages) : bytes_(6 * kStride) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    base_ = static_cast<std::byte*>(p);
    for (size_t i = 0; i < 5; ++i) at_[i] = base_ + i * (kStride + skew_pages * kHostPage);
    std::fill_n(floats(0), kParams, 0.01f);
    std::fill_n(floats(1), kParams, 1e-3f);
    std::fill_n(floats(2), kParams, 0.0f);
    std::fill_n(floats(3), kParams, 0.0f);
    std::fill_n(reinterpret_cast<uint16_t*>(at_[4]), kParams, uint16_t{0});
  }
  ~CarvedArrays() { munmap(base_, bytes_); }
  CarvedArrays(const CarvedArrays&) = delete;
  CarvedArrays& operator=(const CarvedArrays&) = delete;

  [[nodiscard]] float* floats(size_t i) const { return reinterpret_cast<float*>(at_[i]); }
  void pass() const {
    stowage::executor::adam_roofline_pass({floats(0), kParams}, {floats(1), kParams}, {floats(2), kParams},
                                          {floats(3), kParams}, {reinterpret_cast<uint16_t*>(at_[4]), kParams},
                                          {.threads = 1});
  }

 private:
  size_t bytes_;
  std::byte* base_;
  std::array<std::byte*, 5> at_{};
};

double seconds(const CarvedArrays& a) {
  const auto start = std::chrono::steady_clock::now();
  a.pass();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_PageColour(benchmark::State& state) {
  stowage::bench::AdamArrays coloured(kParams, 1);
  const auto coloured_pass = [&] { return coloured.pass(stowage::bench::Kernel::kRoofline, 1, stowage::executor::Isa::kAuto); };
  const CarvedArrays aliased(0), one_page(1);
  std::vector<double> c, a, o;
  for (auto _ : state) {
    // Order alternating, so that each layout sees the same machine.
    const bool flip = c.size() % 2 == 1;
    if (flip) a.push_back(seconds(aliased));
    c.push_back(coloured_pass());
    if (!flip) a.push_back(seconds(aliased));
    o.push_back(seconds(one_page));
    state.SetIterationTime(c.back());
  }
  const double mc = median(c);
  const auto rate = [](double s) { return static_cast<double>(kParams) / s / 1e6; };
  state.counters["coloured_Mparams_per_s"] = rate(mc);
  state.counters["aliased_Mparams_per_s"] = rate(median(a));
  state.counters["one_page_Mparams_per_s"] = rate(median(o));
  state.counters["aliased_fraction"] = mc / median(a);
  state.counters["one_page_fraction"] = mc / median(o);
}
BENCHMARK(BM_PageColour)->UseManualTime()->MinTime(1.0)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
