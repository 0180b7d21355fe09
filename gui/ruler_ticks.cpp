#include "gui/ruler_ticks.h"

#include <array>
#include <cmath>

namespace stowage::gui {
namespace {

constexpr SimTime kSecond = 1'000'000'000;
constexpr SimTime kMinute = 60 * kSecond;
constexpr SimTime kHour = 60 * kMinute;
// From 10 s on, steps that land on whole minutes and hours.
constexpr std::array<SimTime, 15> kClockSteps{
    10 * kSecond, 15 * kSecond, 30 * kSecond, kMinute,   2 * kMinute, 5 * kMinute, 10 * kMinute, 15 * kMinute,
    30 * kMinute, kHour,        2 * kHour,    3 * kHour, 6 * kHour,   12 * kHour,  24 * kHour};

}  // namespace

SimTime tick_step(double ns_per_pixel, double min_spacing) {
  const double wanted = std::max(1.0, ns_per_pixel * min_spacing);
  for (SimTime power = 1; power <= kSecond; power *= 10) {
    for (const SimTime m : std::array<SimTime, 3>{1, 2, 5}) {
      if (m * power <= 5 * kSecond && static_cast<double>(m * power) >= wanted) return m * power;
    }
  }
  for (const SimTime step : kClockSteps) {
    if (static_cast<double>(step) >= wanted) return step;
  }
  constexpr SimTime kDay = 24 * kHour;
  for (SimTime power = 1; power <= 10'000; power *= 10) {  // 2, 5, 10, 20, 50, ... 50 000 days
    for (const SimTime m : std::array<SimTime, 3>{1, 2, 5}) {
      if (m * power >= 2 && static_cast<double>(m * power * kDay) >= wanted) return m * power * kDay;
    }
  }
  return 100'000 * kDay;  // about 274 years; SimTime ends at 292
}

std::vector<Tick> ticks(const TimeAxis& axis, double min_spacing) {
  const SimTime step = tick_step(axis.ns_per_pixel(), min_spacing);
  const SimTime begin = axis.visible_begin();
  SimTime t = begin >= 0 ? (begin + step - 1) / step * step : begin / step * step;
  std::vector<Tick> out;
  for (; t <= axis.visible_end(); t += step)
    out.push_back({.time = t, .pixel = axis.to_pixel(t), .label = format_time(t, step)});
  return out;
}

}  // namespace stowage::gui
