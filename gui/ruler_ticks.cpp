#include "gui/ruler_ticks.h"

#include <array>
#include <cmath>

#include "core/units.h"

namespace stowage::gui {

SimTime tick_step(double ns_per_pixel, double min_spacing) {
  const double wanted = std::max(1.0, ns_per_pixel * min_spacing);
  for (SimTime power = 1; power <= SimTime{1'000'000'000'000'000'000} / 10; power *= 10) {
    for (const SimTime m : std::array<SimTime, 3>{1, 2, 5}) {
      if (static_cast<double>(m * power) >= wanted) return m * power;
    }
  }
  return SimTime{1'000'000'000'000'000'000};
}

std::vector<Tick> ticks(const TimeAxis& axis, double min_spacing) {
  const SimTime step = tick_step(axis.ns_per_pixel(), min_spacing);
  const SimTime begin = axis.visible_begin();
  SimTime t = begin >= 0 ? (begin + step - 1) / step * step : begin / step * step;
  std::vector<Tick> out;
  for (; t <= axis.visible_end(); t += step)
    out.push_back({.time = t, .pixel = axis.to_pixel(t), .label = format_time(t)});
  return out;
}

std::string format_time(SimTime ns) {
  return core::format_seconds(core::Seconds(static_cast<double>(ns) * 1e-9), 6);
}

}  // namespace stowage::gui
