// Where the time ruler puts its ticks: a step of 1, 2 or 5 times a power of
// ten nanoseconds, the smallest that leaves `min_spacing` pixels between
// labels. GUI-free.
#pragma once

#include <string>
#include <vector>

#include "gui/time_axis.h"

namespace stowage::gui {

struct Tick {
  SimTime time = 0;
  double pixel = 0;
  std::string label;  // "1.5 s", "250 ms"
};

[[nodiscard]] SimTime tick_step(double ns_per_pixel, double min_spacing);
// Ticks across the visible span of `axis`.
[[nodiscard]] std::vector<Tick> ticks(const TimeAxis& axis, double min_spacing);
// A time as the ruler and tooltips print it: "1.234 s", "820 µs".
[[nodiscard]] std::string format_time(SimTime ns);

}  // namespace stowage::gui
