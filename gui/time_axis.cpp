#include "gui/time_axis.h"

#include <algorithm>
#include <cmath>

namespace stowage::gui {
namespace {
constexpr double kFitMargin = 0.02;
}

void TimeAxis::set_width(double pixels) {
  width_ = std::max(1.0, pixels);
  clamp();
}

void TimeAxis::set_bounds(SimTime begin, SimTime end) {
  bounds_begin_ = begin;
  bounds_end_ = std::max(end, begin + 1);
  clamp();
}

void TimeAxis::fit(SimTime begin, SimTime end) {
  const double span = static_cast<double>(std::max<SimTime>(end - begin, 1));
  ns_per_pixel_ = span * (1 + 2 * kFitMargin) / width_;
  start_ns_ = static_cast<double>(begin) - span * kFitMargin;
  clamp();
}

void TimeAxis::zoom_around(double pixel, double factor) {
  if (!(factor > 0) || !std::isfinite(factor)) return;
  const double anchor = start_ns_ + pixel * ns_per_pixel_;
  ns_per_pixel_ /= factor;
  clamp();
  start_ns_ = anchor - pixel * ns_per_pixel_;
  clamp();
}

void TimeAxis::pan(double pixels) {
  start_ns_ -= pixels * ns_per_pixel_;
  clamp();
}

SimTime TimeAxis::to_time(double pixel) const {
  return static_cast<SimTime>(std::llround(start_ns_ + pixel * ns_per_pixel_));
}

SimTime TimeAxis::visible_begin() const {
  return static_cast<SimTime>(std::floor(start_ns_));
}
SimTime TimeAxis::visible_end() const {
  return static_cast<SimTime>(std::ceil(start_ns_ + width_ * ns_per_pixel_));
}

// Zoom stays within [kMinNsPerPixel, the data kMaxOverview times over]; a
// pan keeps at least a tenth of the view on the data.
void TimeAxis::clamp() {
  const double span = static_cast<double>(bounds_end_ - bounds_begin_);
  ns_per_pixel_ =
      std::clamp(ns_per_pixel_, kMinNsPerPixel, std::max(kMinNsPerPixel, span * kMaxOverview / width_));
  const double visible = width_ * ns_per_pixel_;
  const double lowest = static_cast<double>(bounds_begin_) - 0.9 * visible;
  const double highest = static_cast<double>(bounds_end_) - 0.1 * visible;
  start_ns_ = std::clamp(start_ns_, lowest, std::max(lowest, highest));
}

}  // namespace stowage::gui
