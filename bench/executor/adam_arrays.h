// The arrays of one CPU Adam measurement, shared by cpu_adam_bench and
// cpu_adam_once: master, grad, m, v in fp32 (and m, v in bf16) and the 16-bit copy, each
// laid out as the executor's host buffers are (executor/host_pages.h) and
// first touched by the threads that will use them, a timer for one pass
// of adam_step or of its roofline kernel, and the median of such timings.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "executor/cpu_adam.h"
#include "executor/host_pages.h"

namespace stowage::bench {

// The bytes each kernel moves (cpu_adam.h's count).
inline constexpr double kAdamBytesPerParam = executor::kAdamBytesPerParam;
inline constexpr double kAdamBf16MomentsBytesPerParam = executor::kAdamBf16MomentsBytesPerParam;
inline constexpr double kAdamNoCopyBytesPerParam = executor::kAdamBytesPerParam - executor::kCopyBytesPerParam;

enum class Kernel { kAdam, kRoofline, kAdamBf16Moments, kRooflineBf16Moments, kAdamNoCopy, kRooflineNoCopy };

struct AdamArrays {
  AdamArrays(size_t n, int threads)
      : master(n, 0.01f, threads), grad(n, 1e-3f, threads), m(n, 0.0f, threads), v(n, 0.0f, threads),
        param16(n, 0, threads), m16(n, 0, threads), v16(n, 0, threads) {}

  // One pass of `kernel` on all of the arrays; seconds it took.
  double pass(Kernel kernel, int threads, executor::Isa isa,
              executor::CopyStores copy_stores = executor::CopyStores::kAuto) {
    const executor::AdamOptions options{.threads = threads, .isa = isa, .copy_stores = copy_stores};
    const auto start = std::chrono::steady_clock::now();
    const executor::AdamHyper hyper{.config = {.learning_rate = 1e-3, .weight_decay = 1e-2},
                                    .optimizer = core::OptimizerKind::kAdamW};
    switch (kernel) {
      case Kernel::kAdam:
        executor::adam_step(master.span(), grad.span(), m.span(), v.span(), param16.span(), core::Precision::kBf16,
                            hyper, ++step, 1, options);
        break;
      case Kernel::kRoofline:
        executor::adam_roofline_pass(master.span(), grad.span(), m.span(), v.span(), param16.span(), options);
        break;
      case Kernel::kAdamNoCopy:
        executor::adam_step(master.span(), grad.span(), m.span(), v.span(), {}, core::Precision::kBf16, hyper,
                            ++step, 1, options);
        break;
      case Kernel::kRooflineNoCopy:
        executor::adam_roofline_pass(master.span(), grad.span(), m.span(), v.span(), {}, options);
        break;
      case Kernel::kAdamBf16Moments:
        executor::adam_step_bf16_moments(master.span(), grad.span(), m16.span(), v16.span(), param16.span(),
                                         core::Precision::kBf16, hyper, ++step, 1, options);
        break;
      case Kernel::kRooflineBf16Moments:
        executor::adam_roofline_pass_bf16_moments(master.span(), grad.span(), m16.span(), v16.span(),
                                                  param16.span(), options);
        break;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  executor::HostArray<float> master, grad, m, v;
  executor::HostArray<uint16_t> param16;
  executor::HostArray<uint16_t> m16, v16;  // the moments in bf16, for the bf16-moment kernels
  int64_t step = 0;
};

// The median of `v` (0 when empty; the mean of the middle two when even).
inline double median(std::vector<double> v) {
  std::ranges::sort(v);
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace stowage::bench
