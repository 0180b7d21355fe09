#include "probe/gpu_calibration.h"

#include <algorithm>
#include <vector>

namespace stowage::probe {
namespace {

constexpr int64_t kSmallestPricedCopy = int64_t{16} << 20;

// The median (the mean of the middle two of an even count).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::string apply_gpu_calibration(const GpuMeasurements& measured, const core::GpuSpec& gpu,
                                  core::CostParameters& p) {
  std::vector<double> h2d, d2h;
  for (const GpuMeasurements::Copy& c : measured.pinned) {
    if (c.bytes < kSmallestPricedCopy || c.h2d <= 0 || c.d2h <= 0) continue;
    h2d.push_back(c.h2d);
    d2h.push_back(c.d2h);
  }
  if (h2d.empty()) return "no pinned copy of 16 MiB or more was measured";
  if (measured.gemms.empty()) return "no GEMM was measured";
  if (measured.hbm_copy <= 0) return "no device-to-device copy was measured";
  const std::optional<core::FlopsPerSecond> rate =
      measured.gemm_type == "bf16" ? gpu.bf16_rate : std::optional(gpu.fp16_rate);
  if (!rate || rate->value() <= 0) return gpu.name + "'s profile gives no " + measured.gemm_type + " rate";
  p.h2d_rate = core::BytesPerSecond(median(h2d));
  p.d2h_rate = core::BytesPerSecond(median(d2h));
  p.hbm_efficiency = measured.hbm_copy / gpu.memory_bandwidth.value();
  p.matmul_efficiency = median(measured.gemms) / rate->value();
  return {};
}

}  // namespace stowage::probe
