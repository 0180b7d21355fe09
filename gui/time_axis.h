// The mapping between time and pixels that the timeline and the memory view
// share: which span of the schedule is visible across how many pixels.
// A plain value type, tested without a window (STYLE.md §15). Pixel 0 is
// the left edge of the plotting area (right of the track labels).
#pragma once

#include "core/timeline.h"

namespace stowage::gui {

using core::SimTime;

class TimeAxis {
 public:
  // The closest zoom: 1 pixel is 1/100 ns; the farthest shows 20 times the data.
  static constexpr double kMinNsPerPixel = 0.01;
  static constexpr double kMaxOverview = 20.0;

  // Width of the plotting area in pixels (> 0); keeps the visible start.
  void set_width(double pixels);
  // The data's extent, which bounds zoom-out and pans; fit() shows it.
  void set_bounds(SimTime begin, SimTime end);
  // Shows [begin, end] across the width (2 % margin each side).
  void fit(SimTime begin, SimTime end);
  void fit_all() { fit(bounds_begin_, bounds_end_); }
  // Multiplies the zoom by `factor` (> 1 zooms in) keeping the time under
  // `pixel` where it is.
  void zoom_around(double pixel, double factor);
  // Moves the picture `pixels` to the right (the view to earlier times).
  void pan(double pixels);

  [[nodiscard]] double to_pixel(SimTime t) const {
    return (static_cast<double>(t) - start_ns_) / ns_per_pixel_;
  }
  [[nodiscard]] double to_pixel_exact(double t_ns) const { return (t_ns - start_ns_) / ns_per_pixel_; }
  [[nodiscard]] SimTime to_time(double pixel) const;
  [[nodiscard]] double ns_per_pixel() const { return ns_per_pixel_; }
  [[nodiscard]] double width() const { return width_; }
  [[nodiscard]] SimTime visible_begin() const;
  [[nodiscard]] SimTime visible_end() const;
  [[nodiscard]] SimTime bounds_begin() const { return bounds_begin_; }
  [[nodiscard]] SimTime bounds_end() const { return bounds_end_; }

 private:
  void clamp();
  double start_ns_ = 0;  // time at pixel 0, ns (fractional while zoomed in)
  double ns_per_pixel_ = 1e3;
  double width_ = 1000;
  SimTime bounds_begin_ = 0, bounds_end_ = 1000;
};

}  // namespace stowage::gui
