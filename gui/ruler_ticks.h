// Where the time ruler puts its ticks: a step of 1, 2 or 5 times a power of
// ten nanoseconds up to 5 s, then whole seconds, minutes and hours (15 s,
// 30 min, 6 h, ...), the smallest that leaves `min_spacing` pixels between
// labels. Labels show the time to the step ("1 h 30 min"). GUI-free.
#pragma once

#include <string>
#include <vector>

#include "gui/time_axis.h"
#include "gui/time_format.h"

namespace stowage::gui {

struct Tick {
  SimTime time = 0;
  double pixel = 0;
  std::string label;  // "1.5 s", "250 ms"
};

[[nodiscard]] SimTime tick_step(double ns_per_pixel, double min_spacing);
// Ticks across the visible span of `axis`.
[[nodiscard]] std::vector<Tick> ticks(const TimeAxis& axis, double min_spacing);

}  // namespace stowage::gui
