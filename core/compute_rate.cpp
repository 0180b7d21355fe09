#include "core/compute_rate.h"

#include <algorithm>
#include <cmath>

namespace stowage::core {

FlopsPerSecond compute_rate(const std::vector<RatePoint>& curve, FlopsPerSecond peak, double flops) {
  if (curve.empty()) return peak;
  if (flops <= curve.front().flops) return curve.front().rate;
  if (flops >= curve.back().flops) return curve.back().rate;
  const auto above = std::upper_bound(curve.begin(), curve.end(), flops,
                                      [](double f, const RatePoint& p) { return f < p.flops; });
  const RatePoint& hi = *above;
  const RatePoint& lo = *(above - 1);
  const double t = std::log(flops / lo.flops) / std::log(hi.flops / lo.flops);
  return FlopsPerSecond(lo.rate.value() + t * (hi.rate.value() - lo.rate.value()));
}

}  // namespace stowage::core
