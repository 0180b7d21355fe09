// The executor's CPU optimizer kernels: CPU Adam (executor/cpu_adam.h) by
// thread count, and the step's gradient check (executor/square_sum.h).
#include <algorithm>
#include <span>
#include <vector>

#include "executor/cpu_adam.h"
#include "executor/host_pages.h"
#include "executor/square_sum.h"
#include "probe/probes.h"

namespace stowage::probe {
namespace {

std::vector<int> counts(int cores) {
  std::vector<int> out;
  for (int t = 1; t < cores; t *= 2) out.push_back(t);
  out.push_back(cores);
  return out;
}

}  // namespace

int adam_probe_steps(const ProbeOptions&, int cores) { return static_cast<int>(counts(cores).size()) + 1; }

void probe_adam(const ProbeOptions& o, Measurements& m, const Tick& tick) {
  // 16 M parameters: 256 MB of fp32 state and gradients, past any cache.
  const size_t n = o.depth == Depth::kQuick ? size_t{16} << 20 : size_t{32} << 20;
  // Laid out as the executor's buffers are (executor/host_pages.h).
  const executor::HostArray<float> master(n, 0.5f), grad(n, 1e-3f), mom(n, 0.0f), var(n, 0.0f);
  const executor::HostArray<uint16_t> p16_array(n, 0);
  const std::span<uint16_t> p16 = p16_array.span();
  const executor::AdamHyper hyper{};
  int64_t step = 1;
  for (int t : counts(m.cores)) {
    const double s = best_seconds(o.depth == Depth::kQuick ? 3 : 5, [&] {
      executor::adam_step(master.span(), grad.span(), mom.span(), var.span(), p16, core::Precision::kBf16, hyper, step++, 1.0f,
                          executor::AdamOptions{.threads = t});
    });
    m.adam_params.push_back({.threads = t, .rate = static_cast<double>(n) / s});
    tick("CPU Adam");
  }
  // The gradient check scans the 16-bit gradients on one thread, bf16 or
  // fp16 as the run trains; the slower of the two is the rate a plan can
  // count on. Gradient-like values (1e-3 and its neighbours) so that every
  // value takes the common path.
  for (size_t i = 0; i < n; ++i) p16[i] = static_cast<uint16_t>(0x3a83u + (i & 63u));
  double slowest = 0;
  for (bool bf16 : {true, false}) {
    const double s = best_seconds(o.depth == Depth::kQuick ? 3 : 5, [&] {
      executor::SquareSum squares;  // its own translation unit: the call is not elided
      static_cast<void>(bf16 ? squares.add_bf16_bits(p16) : squares.add_fp16_bits(p16));
    });
    slowest = std::max(slowest, s);
  }
  m.grad_check_bytes_per_s = 2.0 * static_cast<double>(n) / slowest;
  tick("gradient check");
}

}  // namespace stowage::probe
